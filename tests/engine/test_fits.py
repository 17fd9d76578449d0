"""Building: what fits on a pile and into an empty spot (RULES.md, "fits")."""

from __future__ import annotations

import pytest
from engine_helpers import position

from server.engine import Game, IllegalMove


def test_card_fits_same_suit_three_higher() -> None:
    game = position("classic", {"A1": ["2S"], "B1": ["5S"], "C1": ["6S"]}, stock=["9S"], waste=["5S"])
    assert "W>A1" in game.legal_texts()
    game.play("W>A1")
    assert game.grid()["A1"] == ["2S", "5S"]


@pytest.mark.parametrize(
    ("top", "card", "why"),
    [
        ("2S", "5H", "other suit"),
        ("2S", "6S", "four higher"),
        ("2S", "4S", "two higher"),
        ("5S", "2S", "lower"),
    ],
)
def test_card_does_not_fit(top: str, card: str, why: str) -> None:
    game = position("classic", {"A1": [top], "B1": ["QD"]}, stock=["9S"], waste=[card])
    assert "W>A1" not in game.legal_texts(), why
    with pytest.raises(IllegalMove, match="does not fit"):
        game.play("W>A1")


@pytest.mark.parametrize("top", ["JS", "QS", "KS"])
def test_nothing_goes_on_a_jack_queen_or_king(top: str) -> None:
    game = position("classic", {"A1": [top]}, stock=["9S"], waste=["2S"])
    assert "W>A1" not in game.legal_texts()
    game = position("suitless", {"A1": [top]}, stock=["9S"], waste=["2S"])
    assert "W>A1" not in game.legal_texts()


def test_pile_move_takes_the_card_and_all_above() -> None:
    game = position("classic", {"A1": ["QD", "2S", "5S"], "B1": ["2S"], "C1": ["9H"]}, stock=["4C", "7D"])
    assert "A1:2>B1" in game.legal_texts()  # 5S onto 2S
    with pytest.raises(IllegalMove, match="does not fit"):
        game.play("A1:1>C1")
    game.play("A1:2>B1")
    assert game.grid()["A1"] == ["QD", "2S"]
    assert game.grid()["B1"] == ["2S", "5S"]


def test_pile_move_position_must_exist_and_spots_differ() -> None:
    game = position("classic", {"A1": ["2S"], "B1": ["5S"]}, stock=["4C"])
    with pytest.raises(IllegalMove, match="no card at position 1"):
        game.play("A1:1>B1")
    with pytest.raises(IllegalMove, match="onto itself"):
        game.play("A1:0>A1")


@pytest.mark.parametrize(("spot", "card"), [("A2", "2H"), ("B2", "3H"), ("C2", "4H")])
def test_empty_spot_takes_only_its_rows_base_rank(spot: str, card: str) -> None:
    others = {"A2": ["2H", "3H", "4H"], "B2": ["3H", "2H", "4H"], "C2": ["4H", "2H", "3H"]}
    game = position("classic", {"A1": ["KS"]}, stock=["9S"], waste=[card])
    assert f"W>{spot}" in game.legal_texts()
    for other in others[spot][1:]:
        game = position("classic", {"A1": ["KS"]}, stock=["9S"], waste=[other])
        assert f"W>{spot}" not in game.legal_texts()
        with pytest.raises(IllegalMove, match=f"empty spot {spot}"):
            game.play(f"W>{spot}")
    game = position("classic", {"A1": ["KS"]}, stock=["9S"], waste=[card])
    game.play(f"W>{spot}")
    assert game.grid()[spot] == [card]


def test_whole_pile_fits_an_empty_spot_of_its_base_row() -> None:
    game = position("classic", {"C1": ["2S", "5S"], "C2": ["KD"]})
    assert "C1:0>A1" in game.legal_texts()
    assert "C1:0>B1" not in game.legal_texts()
    assert "C1:1>A1" not in game.legal_texts()


def test_suitless_fits_any_suit_three_higher() -> None:
    game = position("suitless", {"A1": ["2S"], "B1": ["QD"]}, stock=["9S"], waste=["5H"])
    assert "W>A1" in game.legal_texts()
    game.play("W>A1")
    assert game.grid()["A1"] == ["2S", "5H"]
    game = position("suitless", {"A1": ["2S"], "B1": ["QD"]}, stock=["9S"], waste=["6H"])
    assert "W>A1" not in game.legal_texts()
    assert "W>A1" not in position("classic", {"A1": ["2S"]}, stock=["9S"], waste=["5H"]).legal_texts()


def test_suitless_pile_moves_onto_same_value() -> None:
    game = position("suitless", {"A1": ["QC", "5D", "8H"], "B1": ["5C"]}, stock=["9S"])
    assert "A1:2>B1" in game.legal_texts()
    assert "A1:2>B1" not in position("classic", {"A1": ["QC", "5D", "8D"], "B1": ["5C"]}).legal_texts()


def test_fresh_deal_builds_match_the_rule() -> None:
    game = Game.new("1")
    grid = game.grid()
    for text in game.legal_texts():
        if ">" in text and text.startswith(("A", "B", "C")):
            source, rest = text.split(":")
            depth, target = rest.split(">")
            card, top = grid[source][int(depth)], grid[target][-1]
            assert card[1] == top[1] and "23456789TJQK".index(card[0]) - "23456789TJQK".index(top[0]) == 3
