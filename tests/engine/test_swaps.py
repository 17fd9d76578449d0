"""Swaps: the four conditions of RULES.md, each both ways, and free-swap."""

from __future__ import annotations

from engine_helpers import position

from server.engine import IllegalMove

STOCK = ["9S"]


def legal(grid: dict[str, list[str]], move: str, variant: str = "classic") -> bool:
    game = position(variant, grid, stock=STOCK)
    listed = move in game.legal_texts()
    before = game.state()
    try:
        game.play(move)
    except IllegalMove:
        assert game.state() == before
        assert not listed
        return False
    assert listed
    return True


def test_swap_exchanges_piles() -> None:
    game = position("classic", {"A1": ["3S", "6S"], "B1": ["2H"]}, stock=STOCK)
    game.play("B1~A1")
    assert game.grid()["A1"] == ["2H"] and game.grid()["B1"] == ["3S", "6S"]
    assert str(game.moves[-1]) == "A1~B1"


def test_rows_must_differ() -> None:
    assert legal({"A1": ["5S"], "B1": ["2H"]}, "A1~B1")
    assert not legal({"A1": ["5S"], "A2": ["2H"]}, "A1~A2")


def test_both_must_hold_a_pile() -> None:
    assert legal({"A1": ["5S"], "B1": ["2H"]}, "A1~B1")
    assert not legal({"A1": ["5S"]}, "A1~B1")  # B1 empty
    assert not legal({"B1": ["2H"]}, "A1~B1")  # A1 empty


def test_ranks_must_differ() -> None:
    assert legal({"A1": ["3S"], "B1": ["2H"]}, "A1~B1")
    assert not legal({"A1": ["2S"], "B1": ["2H"]}, "A1~B1")


def test_one_must_end_home() -> None:
    assert legal({"A1": ["5S"], "B1": ["2H"]}, "A1~B1")  # 2H goes home to row A
    assert legal({"A1": ["3S"], "B1": ["6H"]}, "A1~B1")  # 3S goes home to row B
    assert legal({"A1": ["4S"], "C1": ["2H"]}, "A1~C1")  # both go home
    assert not legal({"A1": ["5S"], "B1": ["6H"]}, "A1~B1")  # no base rank at all
    assert not legal({"A1": ["4S"], "B1": ["3H"]}, "A1~B1")  # base ranks, but of the wrong rows
    assert not legal({"A1": ["2S"], "B1": ["4H"]}, "A1~B1")  # 2S is home already and would leave


def test_same_spot_never_swaps() -> None:
    assert not legal({"A1": ["5S"]}, "A1~A1", "free-swap")


def test_free_swap_any_two_piles() -> None:
    grid = {"A1": ["5S"], "A2": ["5H"], "B1": ["6H"], "C1": ["KD"]}
    for move in ("A1~A2", "A1~B1", "A2~C1", "B1~C1"):
        assert legal(grid, move, "free-swap"), move
        assert not legal(grid, move), move  # none of these is a classic swap
    assert not legal({"A1": ["5S"]}, "A1~B1", "free-swap")  # still needs two piles
    game = position("free-swap", grid, stock=STOCK)
    assert len([m for m in game.legal_texts() if "~" in m]) == 6  # every pair of the four piles


def test_a_spot_left_empty_takes_part_in_no_swap() -> None:
    # B2's 4H belongs in row C, where C1 empties at the win: no swap may pair them.
    game = position("classic", {"A1": ["2S"], "C1": ["5S"], "B2": ["4H"]})
    game.play("C1:0>A1")
    assert game.grid()["C1"] == [] and game.grid()["B2"] == ["4H"]
    assert [t for t in game.legal_texts() if "~" in t] == []
    game.undo()
    assert "B2~C1" in game.legal_texts()
