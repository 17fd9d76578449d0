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


def random_play(game: Game, rng: random.Random, steps: int) -> list[str]:
    """Play up to ``steps`` random legal moves; return their texts."""
    played: list[str] = []
    for _ in range(steps):
        if game.is_over:
            break
        move = rng.choice(game.legal_moves())
        played.extend(str(m) for m in game.play(move))
    return played
