"""``client stats --board``: a page of a variant's board of the best ratings, and how to ask the next one.

The pages go by cursor (the server's ``next``): a page never repeats or
skips a player whose rating stayed, however the board changed between two
(docs/ratings.md). The command to see the next page is printed with it.
"""

from __future__ import annotations

from server import protocol as p


def format_board(board: p.RatingBoard, url: str) -> str:
    """The page's lines (rank, rating, name, races, id), the asker's own line, and the next page's command."""
    if not board.entries:
        empty = "nobody is on it yet" if board.total == 0 else "no more players past that page"
        return f"{board.variant} board of the best: {empty} ({board.total} in all)"
    first, last = board.entries[0].rank, board.entries[-1].rank
    lines = [f"{board.variant} board of the best: ranks {first}-{last} of {board.total}"]
    width = len(str(last))
    for e in board.entries:
        lines.append(
            f"  {e.rank:>{width}}  {e.rating:>5}  {e.name}  ({e.games} rated races; player {e.player})"
        )
    if board.you is not None:
        lines.append(f"you: rank {board.you.rank}, {board.you.rating}")
    if board.next is not None:
        lines.append(f"next page: client stats {url} --board {board.variant} --after {board.next}")
    return "\n".join(lines)
