"""Players that decide from a player's view alone: what the bots use.

A view is the mapping ``Game.player_view()`` returns (and the protocol's
``View`` holds): the grid, the waste tops and counts, the stock's size, the
legal moves. Nothing here reads a ``Game``, so a bot cannot see more than a
person at the table would.

- ``greedy_view``: lower the leftover whenever possible (waste first, then a
  whole pile, which pulls a stock card into its spot), else turn or redeal.
  The same rule as ``players.greedy_move``.
- ``lookahead_view``: search the sequences of leftover-lowering moves that
  the visible cards allow (a refill or the card under the waste top is
  unknown, so nothing is assumed about it), play the first move of the
  longest, preferring at equal length the end position with the most open
  tops (piles that can still take a card, counted by distinct card). It turns
  only when nothing lowers the leftover, as greedy does.

  In ``open``, when the view shows everything (the stock is in the view and
  the waste holds at most its top), it plays the solver's line instead (the
  hint's ``solved_view_move``: solved once within ``LOOKAHEAD_SOLVE_S``, then
  followed while the views match the line's states). Elsewhere the hint's
  gains need what a single view does not show (the waste under its top,
  remembered across a redeal), and where they do not, the hint is greedy;
  measured on deals 1..100 this search already plays exactly as greedy in
  ``classic`` and ``relaxed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .players import solved_view_move

RANKS = "23456789TJQK"
Card = tuple[int, str] | None  # (value 2..13, suit); None: a card the player cannot see
MAX_DEPTH = 4
MAX_NODES = 300
LOOKAHEAD_SOLVE_S = 0.3  # a bot's move: keep it short (it shares the server's workers)


def greedy_view(view: Mapping[str, Any]) -> str | None:
    """The greedy baseline's move for this view, or None when the best is to finish."""
    legal: list[str] = view["legal"]
    for kind in ("W", ":0>", "T", "R"):
        for move in legal:
            if kind in move:
                return move
    return None


def _card(text: str | None) -> Card:
    if not text:
        return None
    return RANKS.index(text[0]) + 2, text[1]


class _Search:
    def __init__(self, view: Mapping[str, Any]) -> None:
        self.suitless = view["variant"] == "suitless"
        grid: dict[str, list[str]] = view["grid"]
        self.names = list(grid)
        self.piles: list[list[Card]] = [[_card(c) for c in grid[n]] for n in self.names]
        self.wastes: list[Card] = [_card(w["top"]) for w in view["waste"]]
        self.waste_counts: list[int] = [int(w["count"]) for w in view["waste"]]
        self.stock = int(view["stock_count"])
        self.nodes = 0
        self.best: tuple[int, int] = (-1, -1)
        self.best_first: str | None = None

    def fits(self, card: Card, pile: list[Card]) -> bool:
        if card is None or not pile or pile[-1] is None:
            return False  # empty spots never occur with the full deck; unknown cards fit nothing known
        top = pile[-1]
        return card[0] == top[0] + 3 and (self.suitless or card[1] == top[1])

    def open_tops(self) -> int:
        tops = {(t[0], "" if self.suitless else t[1]) for p in self.piles if p and (t := p[-1]) is not None}
        return sum(1 for value, _ in tops if value <= 10)

    def waste_name(self, w: int) -> str:
        return "W" if len(self.wastes) == 1 else f"W{w + 1}"

    def run(self, depth: int, first: str | None) -> None:
        self.nodes += 1
        moved = False
        if depth < MAX_DEPTH and self.nodes < MAX_NODES:
            for w, card in enumerate(self.wastes):
                if card is None:
                    continue
                for y, pile in enumerate(self.piles):
                    if self.fits(card, pile):
                        moved = True
                        pile.append(card)
                        self.wastes[w] = None  # the next card down is not known yet
                        self.waste_counts[w] -= 1
                        self.run(depth + 1, first or f"{self.waste_name(w)}>{self.names[y]}")
                        self.waste_counts[w] += 1
                        self.wastes[w] = card
                        pile.pop()
            for x, src in enumerate(self.piles):
                if not src or (not self.stock and not any(self.waste_counts)):
                    continue  # a whole pile lowers the leftover only when its spot is refilled
                for y, dst in enumerate(self.piles):
                    if x != y and self.fits(src[0], dst):
                        moved = True
                        self.piles[x] = [None]  # refilled with a card not seen yet
                        dst.extend(src)
                        self.run(depth + 1, first or f"{self.names[x]}:0>{self.names[y]}")
                        del dst[len(dst) - len(src) :]
                        self.piles[x] = src
        if not moved and first is not None:
            score = (depth, self.open_tops())
            if score > self.best:
                self.best, self.best_first = score, first


def lookahead_view(view: Mapping[str, Any]) -> str | None:
    """The first move of the longest visible run of leftover-lowering moves; else turn/redeal."""
    if view["over"]:
        return None
    if view.get("stock") is not None:
        solved = solved_view_move(view, LOOKAHEAD_SOLVE_S)
        if solved and solved in view["legal"]:
            return solved  # past the line's end ("") the search below takes over
    search = _Search(view)
    search.run(0, None)
    legal: list[str] = view["legal"]
    if search.best_first is not None and search.best_first in legal:
        return search.best_first
    return greedy_view(view)


STRATEGIES = {"greedy": greedy_view, "lookahead": lookahead_view}
