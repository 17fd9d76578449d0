"""Each of the seven variants of RULES.md, on real deals."""

from __future__ import annotations

import json
import random

import pytest
from engine_helpers import position, random_play

from server.engine import VARIANTS, Game, IllegalMove, UnknownVariant


def test_all_seven_variants_exist() -> None:
    assert set(VARIANTS) == {
        "classic",
        "relaxed",
        "free-swap",
        "single-deck",
        "open",
        "three-waste",
        "suitless",
    }
    with pytest.raises(UnknownVariant):
        Game.new("1", "chess")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_views_are_json_and_hide_the_stock_except_in_open(variant: str) -> None:
    game = Game.new("5", variant)
    random_play(game, random.Random(5), 10)
    view = game.player_view()
    json.dumps(view)
    json.dumps(game.state())
    assert (view["stock"] is not None) == (variant == "open")
    assert view["stock_count"] == game.stock_count == len(game.state()["stock"])
    if variant == "open":
        assert view["stock"] == game.state()["stock"]


class TestClassic:
    def test_fresh_deal(self) -> None:
        game = Game.new("1")
        assert game.leftover == 72 and game.on_grid == 24 and game.redeals_left == 0
        assert "T" in game.legal_texts() and "R" not in game.legal_texts()


class TestRelaxed:
    def emptied(self) -> Game:
        game = Game.new("1", "relaxed")
        while game.stock_count:
            game.play("T")
        return game

    def test_r_illegal_before_stock_is_empty(self) -> None:
        game = Game.new("1", "relaxed")
        assert "R" not in game.legal_texts()
        with pytest.raises(IllegalMove, match="stock is not empty"):
            game.play("R")

    def test_redeal_once_in_first_turned_order(self) -> None:
        game = self.emptied()
        first = game.state()["waste"]  # bottom first: the order the cards were turned
        assert "R" in game.legal_texts() and not game.is_over
        game.play("R")
        assert game.state()["stock"] == first and game.state()["waste"] == []
        assert game.redeals_left == 0 and game.leftover == 72
        while game.stock_count:
            game.play("T")
        assert game.state()["waste"] == first
        assert "R" not in game.legal_texts()
        with pytest.raises(IllegalMove, match="redeal has been used"):
            game.play("R")

    def test_undo_redeal(self) -> None:
        game = self.emptied()
        before = game.state()
        game.play("R")
        game.undo()
        assert game.state() == before and game.redeals_left == 1

    def test_over_only_when_no_redeal_left(self) -> None:
        game = position("relaxed", {"A1": ["KD"]}, waste=["KH"])
        assert not game.is_over
        game.play("R")
        game.play("T")
        assert game.is_over


class TestFreeSwap:
    def test_swaps_between_any_two_piles(self) -> None:
        game = Game.new("1", "free-swap")
        swaps = [t for t in game.legal_texts() if "~" in t]
        assert len(swaps) == 24 * 23 // 2
        game.play("A1~A2")
        assert game.grid()["A1"] == ["8C"] and game.grid()["A2"] == ["QS"]


class TestSingleDeck:
    def test_grid_size(self) -> None:
        game = Game.new("1", "single-deck")
        assert game.spot_names == tuple(f"{r}{c}" for r in "ABC" for c in range(1, 5))
        assert game.leftover == 36 and game.on_grid == 12
        random_play(game, random.Random(1), 200)
        assert game.on_grid + game.leftover == 48
        assert all(int(t[1]) <= 4 for t in game.legal_texts() if t[0] in "ABC")


class TestOpen:
    def test_stock_shown(self) -> None:
        game = Game.new("1", "open")
        assert game.player_view()["stock"][:6] == ["2D", "KH", "KC", "7D", "6S", "7C"]
        assert Game.new("1").player_view()["stock"] is None


class TestThreeWaste:
    def test_each_waste_top_plays(self) -> None:
        game = position(
            "three-waste",
            {"A1": ["2S"], "B1": ["3H"], "C1": ["4D"]},
            stock=["KC"],
            waste=[["6H"], ["5S"], ["7D"]],
        )
        assert {"W1>B1", "W2>A1", "W3>C1"} <= set(game.legal_texts())
        game.play("W3>C1")
        assert game.grid()["C1"] == ["4D", "7D"]
        game.undo()
        assert game.state()["waste"] == [["6H"], ["5S"], ["7D"]]

    def test_state_waste_is_three_lists(self) -> None:
        game = Game.new("1", "three-waste")
        game.play("T")
        assert game.state()["waste"] == [["2D"], ["KH"], ["KC"]]


class TestSuitless:
    def test_more_builds_than_classic(self) -> None:
        classic, suitless = Game.new("1"), Game.new("1", "suitless")
        assert set(classic.legal_texts()) < set(suitless.legal_texts())
