"""The client's engine (``ClientGame``) against the server's (``Game``), and protocol v2's reveal and check."""

from __future__ import annotations

import json
import random
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from conftest import POSITIONS
from crosscheck import BAD_VIEWS, REVEAL_MISMATCHES, after_a_stock_refill, endgame, good_view, play_record
from engine_helpers import complete_piles, position
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.engine import VARIANTS, Game, IllegalMove, UnknownVariant
from server.engine.client_game import ClientGame, InvalidView, RevealMismatch

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_client_game_agrees_with_game_on_recorded_positions(variant: str, crosscheck_dir: Path) -> None:
    """Legal list, over/won, numbers, position text and check, reveal and automatic swaps, probes,
    undo, and plays made before an earlier play's reveal: the same as the server's at every step."""
    recs = json.loads((crosscheck_dir / f"records-{variant}.json").read_text())
    started = time.perf_counter()
    compared = sum(play_record(rec) for rec in recs)
    assert compared >= POSITIONS
    print(f"{variant}: {compared} positions in {time.perf_counter() - started:.2f} s")


def played(game: Game, rng: random.Random, steps: int) -> Game:
    for _ in range(steps):
        if game.is_over:
            break
        game.play(rng.choice(game.legal_moves()))
    return game


@SETTINGS
@given(
    seed=st.integers(0, 10**6).map(str),
    variant=st.sampled_from(sorted(VARIANTS)),
    rng=st.randoms(use_true_random=False),
    steps=st.integers(0, 150),
)
def test_a_view_makes_the_same_position(seed: str, variant: str, rng: random.Random, steps: int) -> None:
    game = played(Game.new(seed, variant), rng, steps)
    client = ClientGame.from_view(game.player_view())
    assert client.player_view() == game.player_view()
    assert (client.position_text(), client.check()) == (game.position_text(), game.check())
    assert client.drawn == game.drawn


@SETTINGS
@given(rng=st.randoms(use_true_random=False), variant=st.sampled_from(sorted(VARIANTS)))
def test_an_endgame_view_makes_the_same_position(rng: random.Random, variant: str) -> None:
    game = endgame(variant, rng)
    client = ClientGame.from_view(game.player_view())
    assert client.player_view() == game.player_view()
    assert client.check() == game.check()


def test_position_text_and_check_of_the_spec_example() -> None:
    game = Game.new("1")
    text = "QS/8C/JD/3S/9D/3C/TD/4H/4C/7C/TD/KC/7H/9H/9H/JD/QH/JS/TH/TC/9C/7S/JC/KS|-0|72|0"
    assert game.position_text() == text
    assert game.check() == zlib.crc32(text.encode()) == 2612825012


def test_position_text_shows_each_waste_and_the_redeals() -> None:
    game = position("three-waste", {"A1": ["2S"], "C2": ["4H", "7H"]}, ["3D"], [["5C", "9S"], [], ["KD"]])
    piles = "/".join(["2S", *[""] * 16, "4H7H", *[""] * 6])  # A1, A2..C1 empty, C2, C3..C8 empty
    assert game.position_text() == f"{piles}|9S2/-0/KD1|1|0"
    relaxed = Game.new("1", "relaxed")
    assert relaxed.position_text().endswith("|-0|72|1")


# ------------------------------------------------------------------ reveal


def test_nothing_played_reveals_nothing() -> None:
    assert Game.new("1").revealed() == {}


def test_a_turn_reveals_the_waste_top() -> None:
    game = Game.new("1")
    game.play("T")
    assert game.revealed() == {"W": game.player_view()["waste"][0]["top"]}


@pytest.mark.parametrize(
    ("stock", "keys"), [(["3H", "4H", "5H", "6H"], ["W1", "W2", "W3"]), (["3H", "4H"], ["W1", "W2"])]
)
def test_a_three_waste_turn_reveals_each_waste_it_dealt_to(stock: list[str], keys: list[str]) -> None:
    game = position("three-waste", {"A1": ["2S"]}, stock, [["9C"], [], ["KD"]])
    game.play("T")
    assert game.revealed() == dict(zip(keys, stock, strict=False))


def test_a_refill_from_the_stock_reveals_the_spot() -> None:
    game = position("classic", {"A1": ["2S"], "C1": ["5S"]}, ["9D", "KH"], ["QC"])
    game.play("C1:0>A1")
    assert game.revealed() == {"C1": "9D"}


def test_a_refill_from_the_waste_reveals_the_card_under_it() -> None:
    game = position("classic", {"A1": ["2S"], "C1": ["5S"], "B1": ["8S"]}, [], ["KH", "QC"])
    game.play("C1:0>A1")
    assert game.revealed() == {"W": "KH"}
    game.play("B1:0>A1")  # the last waste card refills B1: the waste is empty, nothing to show
    assert game.revealed() == {}


def test_a_three_waste_refill_reveals_the_waste_it_came_from() -> None:
    game = position("three-waste", {"A1": ["2S"], "C1": ["5S"]}, [], [["KH", "QC"], [], ["9C", "TD"]])
    game.play("C1:0>A1")  # row C's waste first
    assert game.revealed() == {"W3": "9C"}


def test_a_play_from_the_waste_reveals_the_next_card() -> None:
    game = position("classic", {"A1": ["2S"]}, ["9D"], ["KH", "5S"])
    game.play("W>A1")
    assert game.revealed() == {"W": "KH"}


def test_swaps_redeals_and_part_piles_reveal_nothing() -> None:
    game = position("relaxed", {"A1": ["3S"], "B1": ["2S"], "C1": ["5S"], "C2": ["5S", "8S"]}, [], ["KH"])
    for move in ("A1~B1", "C2:1>C1"):
        game.play(move)
        assert game.revealed() == {}
    game.play("R")
    assert game.revealed() == {}


def test_a_win_reveals_nothing_and_both_engines_arrange_alike() -> None:
    piles = [p for row in complete_piles().values() for p in row]
    random.Random(7).shuffle(piles)
    spot = next(i for i, p in enumerate(piles) if p[0] == "2S")
    piles[spot] = piles[spot][:-1]
    game = position("classic", dict(zip(Game.new("1").spot_names, piles, strict=True)), [], ["JS"])
    client = ClientGame.from_view(game.player_view())
    winning = f"W>{game.spot_names[spot]}"
    recorded = game.play(winning)
    assert len(recorded) > 1 and game.revealed() == {}
    assert client.play(winning) == recorded and client.revealed() == {}
    assert client.check() == game.check() and client.is_won and client.complete == 24


@pytest.mark.parametrize("variant", ["classic", "free-swap"])
def test_a_hidden_refill_takes_part_in_no_move_until_revealed(variant: str) -> None:
    game, client = after_a_stock_refill(variant)
    assert client.revealed() == {"B2": "??"} and game.revealed() == {"B2": "2D"}
    assert client.grid()["B2"] == ["??"]
    assert not [t for t in client.legal_texts() if "B2" in t]
    with pytest.raises(IllegalMove, match="bottom card in view"):
        client.play("A4~B2")
    assert set(client.legal_texts()) < set(game.legal_texts())
    client.reveal(game.revealed())
    assert "A4~B2" in client.legal_texts()
    assert client.legal_texts() == game.legal_texts() and client.check() == game.check()


def test_a_client_that_played_on_takes_back_reveals_and_plays_again() -> None:
    game, client = after_a_stock_refill("classic")
    ack = game.revealed(), game.check()
    client.play("T")  # before the ack of B2:0>B1 came
    later = [client.undo()[0]]
    client.reveal(ack[0])
    assert client.check() == ack[1]
    for move in later:
        client.play(move)
    game.play("T")
    client.reveal(game.revealed())
    assert client.check() == game.check()


def test_open_knows_every_card_it_turns() -> None:
    game = Game.new("1", "open")
    client = ClientGame.from_view(game.player_view())
    for engine in (game, client):
        engine.play("T")
        engine.play("B2:0>B1")
    assert client.revealed() == game.revealed() and "??" not in client.position_text()


@pytest.mark.parametrize(("cards", "why"), REVEAL_MISMATCHES)
def test_a_reveal_that_does_not_fit_is_refused_and_changes_nothing(
    cards: dict[str, Any], why: str | None
) -> None:
    game, client = after_a_stock_refill("classic")
    before = client.position_text()
    if why is None:
        client.reveal(cards)
        assert client.check() != game.check()
        return
    with pytest.raises(RevealMismatch, match=why):
        client.reveal(cards)
    assert client.position_text() == before


def test_a_reveal_must_agree_with_a_card_already_known() -> None:
    game, client = after_a_stock_refill("classic")
    client.reveal(game.revealed())
    with pytest.raises(RevealMismatch, match="another card"):
        client.reveal({"B2": "5D"})
    client.reveal(game.revealed())  # the same card again: fine
    assert client.check() == game.check()


def test_undo_stops_at_the_snapshot() -> None:
    client = ClientGame.from_view(Game.new("1").player_view())
    client.play("T")
    client.undo()
    with pytest.raises(IndexError):
        client.undo()


def test_moves_count_on_from_the_view() -> None:
    game = Game.new("1")
    game.play("T")
    client = ClientGame.from_view(game.player_view())
    client.play("T")
    assert client.move_count == 2 and client.player_view()["moves"] == 2


# ------------------------------------------------------------- bad views


@pytest.mark.parametrize(("change", "why"), BAD_VIEWS)
def test_a_bad_view_is_refused_naming_why(change: dict[str, Any], why: str) -> None:
    refusal = UnknownVariant if "variant" in change else InvalidView
    with pytest.raises(refusal, match=why):
        ClientGame.from_view(good_view() | change)
