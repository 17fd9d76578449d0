"""The token bucket on its own (server/limits.py), on a clock the test sets."""

from __future__ import annotations

import pytest

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
