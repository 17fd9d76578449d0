"""Helpers for the engine tests: setting up positions that random deals rarely reach."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from server.engine import Game, parse_card

# The workspace holds the repository and, beside it, shared/ (RULES.md, golden files).
GOLDEN_DIR = (Path(__file__).resolve().parents[2] / ".." / "shared" / "golden").resolve()

Grid = dict[str, Sequence[str]]


def position(
    variant: str,
    grid: Grid,
    stock: Sequence[str] = (),
    waste: Sequence[str] | Sequence[Sequence[str]] = (),
) -> Game:
    """A game in the given position: spots not named are empty.

    The engine has no public way to start from a position, so this writes its
    internals (piles, stock, wastes, then the indexes) the way a deal would. ``stock``
    is top first, like ``state()``; ``waste`` bottom first (a list of three for
    three-waste).
    """
    game = Game.new("0", variant)
    names = game.spot_names
    unknown = set(grid) - set(names)
    assert not unknown, f"no such spots: {unknown}"
    game._piles = [[parse_card(c) for c in grid.get(name, ())] for name in names]
    game._stock = [parse_card(c) for c in reversed(stock)]
    wastes = list(waste) if game.variant.wastes > 1 else [waste]
    if not wastes:
        wastes = [[] for _ in range(game.variant.wastes)]
    game._wastes = [[parse_card(c) for c in w] for w in wastes]  # type: ignore[union-attr]
    game._index_piles()
    return game


def complete_piles(decks: int = 2, suits: str = "SHDC") -> dict[int, list[list[str]]]:
    """All complete piles of a won game, by home row."""
    runs = ("258J", "369Q", "47TK")
    return {row: [[r + s for r in runs[row]] for _ in range(decks) for s in suits] for row in range(3)}


SPOTS = [f"{r}{c}" for r in "ABC" for c in range(1, 9)]


def won_but_one(rng: random.Random | None = None) -> tuple[Game, str]:
    """A classic position one move from the win, piles scattered over the rows.

    The JS of one 2S-5S-8S-J pile waits on the waste; ``rng`` shuffles which
    spot each complete pile stands on (None: the rows A and B are exchanged).
    """
    piles = [p for row in range(3) for p in complete_piles()[row]]
    order = list(range(24))
    if rng is None:
        order = [*range(8, 16), *range(8), *range(16, 24)]
    else:
        rng.shuffle(order)
    grid = {SPOTS[i]: piles[order[i]] for i in range(24)}
    spot = next(s for s, p in grid.items() if p[0] == "2S")
    grid[spot] = grid[spot][:-1]
    return position("classic", grid, waste=["JS"]), f"W>{spot}"


def random_play(game: Game, rng: random.Random, steps: int) -> list[str]:
    """Play up to ``steps`` random legal moves; return their texts."""
    played: list[str] = []
    for _ in range(steps):
        if game.is_over:
            break
        move = rng.choice(game.legal_moves())
        played.extend(str(m) for m in game.play(move))
    return played
