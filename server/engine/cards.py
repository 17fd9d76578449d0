"""Cards as small ints, and deal algorithm v1 (RULES.md, "Dealing from a seed").

A card is ``value << 2 | suit`` (values 2..13, suits S H D C as 0..3). Ints keep
the engine's hot paths free of object allocation, and make "fits" a single
subtraction: the card a card builds on is ``card - 12`` (same suit, value - 3).

``HIDDEN`` (value 0) stands for a card a player cannot see yet (a client's
stock, a buried waste card, a refill until the server reveals it): no card
builds on value 0 and value 0 builds on nothing, so the rules need no special
case for it. Its text is ``??``.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from functools import lru_cache

SUITS = "SHDC"
RANKS = "23456789TJQK"  # values 2..13
FIRST_VALUE = 2
LAST_VALUE = 13
STEP = 3  # a pile builds up by three: 2-5-8-J, 3-6-9-Q, 4-7-T-K
BUILD_DELTA = STEP << 2  # card - BUILD_DELTA is the card it builds on
#: The base rank of the rows A, B, C: a pile is home on its row when its bottom card is of it.
BASE_RANKS = RANKS[:STEP]

DEAL_PREFIX = b"devils-grip/v1/"

HIDDEN = 0
HIDDEN_TEXT = "??"


def make_card(value: int, suit: int) -> int:
    return value << 2 | suit


_TEXT = [
    RANKS[(c >> 2) - FIRST_VALUE] + SUITS[c & 3] if FIRST_VALUE <= c >> 2 <= LAST_VALUE else ""
    for c in range(64)
]
_TEXT[HIDDEN] = HIDDEN_TEXT


def card_text(card: int) -> str:
    return _TEXT[card]


_CARD_BY_TEXT = {
    card_text(make_card(v, s)): make_card(v, s) for v in range(FIRST_VALUE, LAST_VALUE + 1) for s in range(4)
}


def parse_card(text: str) -> int:
    """The card written ``text`` (``"5S"``, ``"TH"``); ValueError if none."""
    try:
        return _CARD_BY_TEXT[text.upper()]
    except KeyError:
        raise ValueError(f"not a card: {text!r}") from None


def canonical_deck(decks: int) -> list[int]:
    """Step 1 of deal v1: per deck, suits S H D C, ranks 2..K."""
    return [
        make_card(v, s) for _ in range(decks) for s in range(4) for v in range(FIRST_VALUE, LAST_VALUE + 1)
    ]


def _random_stream(seed: str) -> Iterator[int]:
    """Steps 2-3 of deal v1: 64-bit numbers from SHA-256 blocks of the seed key."""
    key = hashlib.sha256(DEAL_PREFIX + seed.encode("utf-8")).digest()
    counter = 0
    while True:
        block = hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
        yield from struct.unpack(">4Q", block)
        counter += 1


@lru_cache(maxsize=4096)
def shuffled_deck(seed: str, decks: int = 2) -> tuple[int, ...]:
    """Steps 1-4 of deal v1: the whole shuffled deck for ``seed``.

    Cached: the server rebuilds engines by replay, and every rebuild of the
    same match deals the same seed.
    """
    cards = canonical_deck(decks)
    numbers = _random_stream(seed)
    for i in range(len(cards) - 1, 0, -1):
        n = i + 1
        limit = 2**64 - (2**64 % n)
        x = next(numbers)
        while x >= limit:
            x = next(numbers)
        j = x % n
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)
