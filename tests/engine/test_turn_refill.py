"""Turning the stock and refilling emptied spots (RULES.md, "Play", "Refill")."""

from __future__ import annotations

import pytest
from engine_helpers import position

from server.engine import Game, IllegalMove

GRID = {"A1": ["2S"], "B1": ["KD"], "C1": ["5S"]}


@pytest.mark.parametrize(
    ("stock", "waste_after", "stock_after"),
    [
        (["3H", "4H", "5H", "6H"], ["3H", "4H", "5H"], ["6H"]),
        (["3H", "4H", "5H"], ["3H", "4H", "5H"], []),
        (["3H", "4H"], ["3H", "4H"], []),
        (["3H"], ["3H"], []),
    ],
)
def test_turn_moves_up_to_three_one_by_one(
    stock: list[str], waste_after: list[str], stock_after: list[str]
) -> None:
    game = position("classic", GRID, stock=stock, waste=["9C"])
    game.play("T")
    assert game.state()["waste"] == ["9C", *waste_after]  # the third card turned ends on top
    assert game.state()["stock"] == stock_after


def test_turn_needs_stock_and_is_allowed_any_time() -> None:
    game = position("classic", GRID, stock=["8S"], waste=["5S"])
    assert "W>A1" in game.legal_texts() and "T" in game.legal_texts()
    game = position("classic", GRID, stock=[], waste=["9C"])
    assert "T" not in game.legal_texts()
    with pytest.raises(IllegalMove, match="stock is empty"):
        game.play("T")


@pytest.mark.parametrize(
    ("stock", "wastes_after"),
    [
        (["3H", "4H", "5H", "6H"], [["3H"], ["4H"], ["5H"]]),
        (["3H", "4H", "5H"], [["3H"], ["4H"], ["5H"]]),
        (["3H", "4H"], [["3H"], ["4H"], []]),
        (["3H"], [["3H"], [], []]),
    ],
)
def test_three_waste_turn_deals_one_onto_each(stock: list[str], wastes_after: list[list[str]]) -> None:
    game = position("three-waste", GRID, stock=stock, waste=[[], [], []])
    game.play("T")
    assert game.state()["waste"] == wastes_after
    assert game.state()["stock"] == stock[3:]


def test_refill_from_stock_first() -> None:
    game = position("classic", {"A1": ["2S"], "C1": ["5S"]}, stock=["9D", "KH"], waste=["QC"])
    game.play("C1:0>A1")
    assert game.grid()["C1"] == ["9D"]
    assert game.state()["stock"] == ["KH"] and game.state()["waste"] == ["QC"]


def test_refill_from_waste_when_stock_is_empty() -> None:
    game = position("classic", {"A1": ["2S"], "C1": ["5S"]}, waste=["KH", "QC"])
    game.play("C1:0>A1")
    assert game.grid()["C1"] == ["QC"]
    assert game.state()["waste"] == ["KH"]


def test_refill_leaves_spot_empty_when_nothing_left() -> None:
    # Only a position outside the standard deck can reach this; the engine must still cope.
    game = position("classic", {"A1": ["2S"], "C1": ["5S"]})
    assert game.play("C1:0>A1") == [game.moves[0]]
    assert game.grid()["C1"] == [] and game.grid()["A1"] == ["2S", "5S"]
    assert game.is_won and game.is_over
    game.undo()
    assert game.grid()["C1"] == ["5S"] and game.grid()["A1"] == ["2S"]


def test_emptied_spot_without_a_base_row_pile_stays_as_it_is_at_a_win() -> None:
    game = position("classic", {"B1": ["2S"], "C1": ["5S"]})
    assert [str(m) for m in game.play("C1:0>B1")] == ["C1:0>B1"]
    assert game.grid()["B1"] == ["2S", "5S"] and game.grid()["C1"] == []


def test_no_refill_when_part_of_a_pile_moves() -> None:
    game = position("classic", {"A1": ["QD", "5S"], "B1": ["2S"]}, stock=["4D"])
    game.play("A1:1>B1")
    assert game.grid()["A1"] == ["QD"] and game.state()["stock"] == ["4D"]


@pytest.mark.parametrize(
    ("spot", "wastes", "taken_from"),
    [
        ("A2", [["KH"], ["QH"], ["JH"]], 0),  # own row A: W1
        ("B2", [["KH"], ["QH"], ["JH"]], 1),  # own row B: W2
        ("C2", [["KH"], ["QH"], ["JH"]], 2),  # own row C: W3
        ("C2", [["KH"], ["QH"], []], 0),  # own empty: first non-empty, W1
        ("A2", [[], ["QH"], ["JH"]], 1),  # own empty: first non-empty, W2
    ],
)
def test_three_waste_refill_own_row_first(spot: str, wastes: list[list[str]], taken_from: int) -> None:
    target = {"A2": "C1", "B2": "C1", "C2": "A1"}[spot]
    base = {"C1": "4S", "A1": "2S"}[target]
    grid = {target: [base], spot: [{"C1": "7S", "A1": "5S"}[target]]}
    game = position("three-waste", grid, waste=wastes)
    game.play(f"{spot}:0>{target}")
    expected = [list(w) for w in wastes]
    card = expected[taken_from].pop()
    assert game.grid()[spot] == [card]
    assert game.state()["waste"] == expected


def test_drawn_counts_stock_cards_out_and_a_redeal_brings_none_new() -> None:
    game = Game.new("12345")
    assert game.drawn == 0
    game.play("A1:0>C2")  # A1 is refilled from the stock
    game.play("T")
    assert game.drawn == 4 and game.stock_count == 68
    relaxed = Game.new("12345", "relaxed")
    while relaxed.stock_count:
        relaxed.play("T")
    assert relaxed.drawn == 72
    relaxed.play("R")  # the waste again, in the order it came out: nothing new
    relaxed.play("T")
    assert relaxed.stock_count > 0 and relaxed.drawn == 72
    single = Game.new("1", "single-deck")
    single.play("T")
    assert single.drawn == 3 and single.stock_count == 33
