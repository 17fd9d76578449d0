"""Deal algorithm v1: the test vectors of RULES.md, forever."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.engine import Game, card_text, shuffled_deck
from server.engine.cards import canonical_deck

CLASSIC = {
    "0": (
        "QD 8S 8H 3H 6D QH QD QC 6S 9D 4S JS KD 3C 7D 6C 6H 9S 3C QC 3D 2H 9H 9H",
        "7S TD 4D KS 2S TH",
        "TC",
    ),
    "1": (
        "QS 8C JD 3S 9D 3C TD 4H 4C 7C TD KC 7H 9H 9H JD QH JS TH TC 9C 7S JC KS",
        "2D KH KC 7D 6S 7C",
        "8S",
    ),
    "12345": (
        "6C 5D KH 9S 8H KC 6S 3H 2H 4C TS 9S KH 7S QH JC KS 3C 7C 5C JS 4S 7D QC",
        "2D 5D KC QD 3S QS",
        "KD",
    ),
}
SINGLE_DECK = {
    "1": ("KS 7S 9H JC 8H 7C 9D 4S 5S 3H 4H 4C", "5D 9C JH 2D JS 7H", "8S"),
    "12345": ("TD QC 2H 3H 7D JS KS 6C 6D 7C 9H KC", "8S QS 9S QH 3S 5S", "KD"),
}


def check_deal(seed: str, variant: str, vector: tuple[str, str, str], spots: int, stock: int) -> None:
    grid, first, last = vector
    state = Game.new(seed, variant).state()
    assert [pile[0] for pile in state["grid"].values()] == grid.split()
    assert all(len(pile) == 1 for pile in state["grid"].values())
    assert len(state["grid"]) == spots
    assert state["stock"][:6] == first.split()
    assert state["stock"][-1] == last
    assert len(state["stock"]) == stock
    assert state["waste"] == []
    assert state["leftover"] == stock


@pytest.mark.parametrize("seed", sorted(CLASSIC))
def test_classic_vectors(seed: str) -> None:
    check_deal(seed, "classic", CLASSIC[seed], 24, 72)


@pytest.mark.parametrize("seed", sorted(SINGLE_DECK))
def test_single_deck_vectors(seed: str) -> None:
    check_deal(seed, "single-deck", SINGLE_DECK[seed], 12, 36)


@pytest.mark.parametrize("variant", ["relaxed", "free-swap", "open", "three-waste", "suitless"])
def test_other_variants_deal_as_classic(variant: str) -> None:
    assert Game.new("12345", variant).state()["grid"] == Game.new("12345").state()["grid"]
    assert Game.new("12345", variant).state()["stock"] == Game.new("12345").state()["stock"]


def test_deck_is_two_decks_without_aces() -> None:
    cards = sorted(card_text(c) for c in shuffled_deck("7"))
    expected = sorted(r + s for r in "23456789TJQK" for s in "SHDC") * 2
    assert cards == sorted(expected)


def test_unicode_seed_is_hashed_as_utf8() -> None:
    assert shuffled_deck("été") != shuffled_deck("ete")
    assert len(shuffled_deck("été")) == 96


@settings(max_examples=30, deadline=None)
@given(
    seed=st.one_of(st.text(max_size=80), st.integers(min_value=-(2**70), max_value=2**70).map(str)),
    decks=st.sampled_from([1, 2]),
)
def test_any_seed_deals_a_shuffle_and_the_same_one_every_time(seed: str, decks: int) -> None:
    first = shuffled_deck(seed, decks)
    shuffled_deck.cache_clear()  # dealt again, not read from the cache
    assert shuffled_deck(seed, decks) == first
    assert sorted(first) == sorted(canonical_deck(decks))
