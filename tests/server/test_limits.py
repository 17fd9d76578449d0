"""The token bucket on its own (server/limits.py), and the matches opened it counts (server/holdings.py),
on a clock the test sets."""

from __future__ import annotations

import pytest

from server.errors import Refused
from server.holdings import Holdings
from server.limits import FORGET_EVERY, Bucket, Buckets


def test_a_bucket_takes_its_burst_then_says_how_long_until_the_next() -> None:
    bucket = Bucket(rate=2, burst=3, now=10.0)
    assert [bucket.take(10.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(10.0) == pytest.approx(0.5)  # one token at 2 a second
    assert bucket.take(10.25) == pytest.approx(0.25)  # half of one came back, nothing taken
    assert bucket.take(10.5) == 0.0


def test_a_bucket_refills_no_further_than_its_burst_nor_from_a_clock_gone_back() -> None:
    bucket = Bucket(rate=1, burst=2, now=0.0)
    assert bucket.take(0.0) == bucket.take(0.0) == 0.0
    assert bucket.take(-100.0) == pytest.approx(1.0)  # earlier than its last take: nothing refilled
    assert bucket.take(1000.0) == bucket.take(1000.0) == 0.0  # a long rest refills two, not a thousand
    assert bucket.take(1000.0) > 0


def test_buckets_keep_one_a_key_and_forget_the_full_ones() -> None:
    now = [0.0]
    buckets = Buckets(rate=1, burst=1, clock=lambda: now[0])
    assert buckets.take("ann") == 0.0
    assert buckets.take("ann") == pytest.approx(1.0)
    assert buckets.take("bob") == 0.0  # a key of its own
    now[0] = 0.5
    buckets.forget_full(now[0])
    assert "ann" in buckets and "bob" in buckets  # half refilled: a new bucket would be fuller
    assert buckets.take("cid", now=1.0) == 0.0  # a caller that keeps its own time
    for _ in range(FORGET_EVERY):  # a sweep comes once in so many takes
        buckets.take("cid", now=1.0)
    assert "ann" not in buckets and "bob" not in buckets and "cid" in buckets


def test_a_token_given_back_can_be_taken_again_but_never_past_the_burst() -> None:
    buckets = Buckets(rate=1 / 60, burst=2, clock=lambda: 0.0)
    assert buckets.take("ann") == buckets.take("ann") == 0.0
    buckets.give_back("ann")
    assert buckets.take("ann") == 0.0 and buckets.take("ann") > 0
    for _ in range(5):
        buckets.give_back("ann")
    assert [buckets.take("ann") for _ in range(3)] == [0.0, 0.0, pytest.approx(60.0)]
    buckets.give_back("bob")  # never took: nothing held, nothing to give back
    assert "bob" not in buckets


def test_a_match_refused_for_its_address_counts_nothing_for_its_identity() -> None:
    """``Holdings.opening`` counts the identity, then the address: refused at the address, the identity's
    token was spent on a match never opened."""
    holdings = Holdings(
        lambda lm: True,
        per_player=0,
        per_address=0,
        lobbies_per_address=0,
        opens=Buckets(rate=1 / 60, burst=2),
        address_opens=Buckets(rate=1 / 60, burst=1),
    )
    keys = Holdings.keys("c1", "ann", "203.0.113.5")
    holdings.opening(keys, 0.0)
    with pytest.raises(Refused, match="your address"):
        holdings.opening(keys, 0.0)
    holdings.opening(Holdings.keys("c2", "ann", "203.0.113.6"), 0.0)  # her second, still hers
