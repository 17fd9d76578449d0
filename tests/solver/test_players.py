"""The greedy baseline and the hint: legal moves, and no peeking at the stock."""

from __future__ import annotations

import copy
import random

import pytest

from server.engine import Game
from server.engine.players import greedy_move, hint, play_out


def _advance(game: Game, steps: int) -> None:
    for _ in range(steps):
        move = greedy_move(game)
        if move is None:
            return
        game.play(move)


@pytest.mark.parametrize("variant", ["classic", "relaxed", "three-waste", "open", "suitless", "single-deck"])
def test_hint_is_legal(variant: str) -> None:
    game = Game.new("11", variant)
    for steps in (0, 5, 15):
        _advance(game, steps)
        move = hint(game, random.Random(0))
        assert move is None or move in game.legal_moves()


def test_hint_does_not_read_the_stock() -> None:
    """Same view, same waste, different stock order: the same hint."""
    checked = 0
    for seed in range(1, 30):
        game = Game.new(str(seed))
        _advance(game, 12)
        if game.stock_count < 6:
            continue
        other = copy.deepcopy(game)
        rng = random.Random(seed)
        while other._stock == game._stock:
            rng.shuffle(other._stock)
        assert other.player_view() == game.player_view()
        assert hint(game, random.Random(7)) == hint(other, random.Random(7))
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_greedy_plays_to_the_end() -> None:
    game = Game.new("2")
    score = play_out(game, "greedy", random.Random(0))
    assert game.is_over and score == game.leftover
