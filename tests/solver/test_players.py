"""The greedy baseline and the hint: legal moves, and no peeking at the stock."""

from __future__ import annotations

import copy
import random

import pytest

from server.engine import Game, view_players
from server.engine.players import greedy_move, hint, play_out
from server.engine.view_players import greedy_view, lookahead_view


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


@pytest.mark.parametrize("variant", ["classic", "relaxed", "three-waste", "suitless"])
def test_hint_does_not_read_the_stock(variant: str) -> None:
    """Same view, same waste, different stock order: the same hint."""
    checked = 0
    for seed in range(1, 30):
        game = Game.new(str(seed), variant)
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


def test_stock_after_a_redeal_is_the_remembered_waste() -> None:
    """Why the hint may read the stock after a redeal: it is the waste the player saw, in order."""
    game = Game.new("4", "relaxed")
    while game.redeals_left:
        if game.stock_count == 0:
            remembered = game.state()["waste"]
            game.play("R")
            break
        _advance(game, 1)
    assert game.state()["stock"] == remembered
    for _ in range(10):  # later turns and refills only take from the top
        stock = game.state()["stock"]
        move = greedy_move(game)
        assert move is not None
        game.play(move)
        after = game.state()["stock"]
        assert after == stock[len(stock) - len(after) :]


def test_relaxed_hint_holds_whole_piles_until_the_stock_is_seen() -> None:
    game = Game.new("6", "relaxed")
    rng = random.Random(0)
    while game.redeals_left and game.stock_count:
        move = hint(game, rng)
        assert move is not None and ":0>" not in str(move)
        game.play(move)


@pytest.mark.parametrize("variant", ["open", "relaxed"])
def test_hint_follows_a_solved_line(variant: str) -> None:
    """Where everything is seen the hint plays the solver's line: far below greedy here.

    The budget is wall-clock time, generous so that a loaded CI box still solves.
    """
    greedy = play_out(Game.new("1", variant), "greedy", random.Random(0))
    game = Game.new("1", variant)
    hinted = play_out(game, "hint", random.Random(0), budget_s=2.0)
    assert game.is_over or hint(game, random.Random(0)) is None
    assert hinted < greedy - 5


def test_lookahead_bot_follows_a_solved_line_in_open(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot decides from views alone; in open the view shows the stock, so it can solve.

    The solve's budget is wall-clock time: a loaded CI box gets less done in
    the bot's 0.3 s (once only the greedy line), so the test gives it 2 s.
    """
    monkeypatch.setattr(view_players, "LOOKAHEAD_SOLVE_S", 2.0)
    scores = {}
    for name, strategy in (("greedy", greedy_view), ("lookahead", lookahead_view)):
        game = Game.new("2", "open")
        while not game.is_over:
            move = strategy(game.player_view())
            if move is None:
                break
            assert move in game.legal_texts()
            game.play(move)
        scores[name] = game.leftover
    assert scores["lookahead"] < scores["greedy"] - 5


def test_three_waste_hint_is_never_below_greedy_at_the_end() -> None:
    """Where the hint solves a three-waste endgame it still ends no worse than greedy."""
    for seed in ("1", "2"):
        greedy = play_out(Game.new(seed, "three-waste"), "greedy", random.Random(0))
        assert play_out(Game.new(seed, "three-waste"), "hint", random.Random(0), budget_s=0.3) <= greedy


@pytest.mark.parametrize("variant", ["classic", "single-deck", "suitless"])
def test_rollouts_play_greedy_exactly(variant: str) -> None:
    """The hint's fast rollouts (canonical states) end where greedy through Game ends."""
    from server.engine.cards import shuffled_deck
    from server.engine.players import _Rollouts
    from server.engine.variants import get_variant

    v = get_variant(variant)
    sim = _Rollouts(v)
    for seed in range(1, 21):
        deck = shuffled_deck(str(seed), v.decks)
        tops, bots = [0] * sim.size, [0] * sim.size
        for c in deck[: v.spots]:
            tops[sim.key[c]] += 1
            bots[sim.key[c]] += 1
        stock = [sim.key[c] for c in reversed(deck[v.spots :])]
        expected = play_out(Game.new(str(seed), variant), "greedy", random.Random(0))
        assert sim.greedy_rest(tops, bots, stock, []) == expected


def test_sampled_hint_is_legal_and_stays_off_the_stock() -> None:
    """Classic, hidden stock: all game long the sampling player's move is legal, and a copy
    with the stock reshuffled (same view, same waste) gets the same move."""
    game = Game.new("3")
    rng = random.Random(0)
    shuffle = random.Random(1)
    compared = 0
    while not game.is_over:
        if game.stock_count > 1 and any(":0>" in str(m) for m in game.legal_moves()):
            other = copy.deepcopy(game)
            while other._stock == game._stock:
                shuffle.shuffle(other._stock)
            assert hint(game, random.Random(compared), samples=20) == hint(
                other, random.Random(compared), samples=20
            )
            compared += 1
        move = hint(game, rng, samples=20)
        if move is None:
            break
        assert move in game.legal_moves()
        game.play(move)
    assert compared >= 5
