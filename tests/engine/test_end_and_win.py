"""End detection, the win with automatic arrangement, undo and replay around it."""

from __future__ import annotations

import random

import pytest
from engine_helpers import SPOTS, position, won_but_one

from server.engine import Game, IllegalMove, rating


def test_win_arranges_piles_home_and_records_the_swaps() -> None:
    game, winning = won_but_one()
    recorded = game.play(winning)
    assert str(recorded[0]) == winning
    assert len(recorded) == 1 + 8 and all("~" in str(m) for m in recorded[1:])
    assert game.moves == recorded
    assert game.is_won and game.is_over and game.leftover == 0 and game.score == 0
    assert game.rating == "win" and game.on_grid == 96 and game.complete == 24
    assert game.legal_moves() == []
    for name, pile in game.grid().items():
        assert "ABC".index(name[0]) == "258J369Q47TK".index(pile[0][0]) // 4


@pytest.mark.parametrize("seed", range(20))
def test_win_arranges_any_scatter(seed: int) -> None:
    # A single pass over the spots left strays here before (a spot it had passed
    # could receive a stray pile), so scattered layouts are the regression test.
    game, winning = won_but_one(random.Random(seed))
    game.play(winning)
    assert game.complete == 24


def test_undo_of_the_winning_move_undoes_the_arrangement() -> None:
    game, winning = won_but_one()
    before = (game.state(), game.player_view())
    recorded = game.play(winning)
    assert game.undo() == recorded
    assert (game.state(), game.player_view()) == before
    assert game.moves == [] and not game.is_won


class FromWonButOne(Game):
    """A Game that starts one move from the win, so Game.replay can be fed its log."""

    def __init__(self, seed: str, variant: object = "classic") -> None:
        self.__dict__.update(won_but_one()[0].__dict__)


def test_replay_accepts_logs_with_and_without_the_automatic_swaps() -> None:
    game, winning = won_but_one()
    full = [str(m) for m in game.play(winning)]
    assert len(full) == 9
    for log in (full, full[:1], full[:5]):
        assert FromWonButOne.replay("x", "classic", log).state() == game.state()
    assert FromWonButOne.replay("x", "classic", full).moves == game.moves
    assert FromWonButOne.replay("x", "classic", full[:1]).moves == game.moves


def test_replay_checks_the_automatic_swaps() -> None:
    game, winning = won_but_one()
    full = [str(m) for m in game.play(winning)]
    assert full[1] != "A1~C1"
    with pytest.raises(IllegalMove, match="automatic arrangement"):
        FromWonButOne.replay("x", "classic", [full[0], "A1~C1"])


def test_replay_of_a_deal_game_with_and_without_auto_moves() -> None:
    rng = random.Random(3)
    game = Game.new("3")
    while not game.is_over:
        game.play(rng.choice(game.legal_moves()))
    log = [str(m) for m in game.moves]
    assert Game.replay("3", "classic", log).state() == game.state()
    assert Game.replay("3", "classic", game.moves).moves == game.moves


def test_game_with_only_swaps_and_part_moves_left_is_over() -> None:
    # Stock empty, KH on the waste fits nowhere; swaps and a part move remain.
    grid = {spot: ["KC"] for spot in SPOTS}  # kings: nothing fits on them, they fit nowhere
    grid.update({"A1": ["3S"], "B1": ["2H"], "A2": ["QD", "5C"], "B2": ["2C"]})
    game = position("classic", grid, waste=["KH"])
    texts = game.legal_texts()
    assert "A1~B1" in texts and "A2:1>B2" in texts
    assert all("~" in t or ":1>" in t for t in texts)
    assert game.is_over and not game.is_won
    assert game.score == 1 and game.rating == "brilliant"


def test_not_over_while_stock_remains() -> None:
    game = position("classic", {"A1": ["KD"]}, stock=["KH"])
    assert not game.is_over


def test_not_over_while_a_waste_card_fits() -> None:
    game = position("classic", {"A1": ["2H"], "C1": ["KD"]}, waste=["5H"])
    assert not game.is_over
    game.play("W>A1")


def test_not_over_while_a_whole_pile_can_move_and_be_refilled() -> None:
    game = position("classic", {"A1": ["2H"], "C1": ["5H"]}, waste=["KD"])
    assert not game.is_over
    game.play("C1:0>A1")
    assert game.grid()["C1"] == ["KD"] and game.leftover == 0


@pytest.mark.parametrize(
    ("score", "name"),
    [
        (0, "win"),
        (1, "brilliant"),
        (2, "brilliant"),
        (3, "excellent"),
        (5, "excellent"),
        (6, "good"),
        (10, "good"),
        (11, None),
    ],
)
def test_ratings(score: int, name: str | None) -> None:
    assert rating(score) == name
