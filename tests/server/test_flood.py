"""The frame-rate policy on its own (server/flood.py), on a clock the test sets."""

from __future__ import annotations

import itertools

from server.flood import TELL_EVERY_S, FrameRate, Verdict


def test_a_flood_the_bucket_keeps_refilling_is_closed() -> None:
    """4,350 frames a second against 30 a second: refusals interleaved with runs still add up."""
    rate = FrameRate(30, 60, limit=200, window_s=10, now=0.0)
    verdicts = [rate.frame(n / 4350) for n in range(3 * 4350)]
    closed_at = verdicts.index(Verdict.CLOSE)
    assert Verdict.RUN in verdicts[61:closed_at]  # the bucket refilled during the flood
    assert closed_at < 4350  # closed within its first second


def test_a_client_a_little_over_its_rate_is_refused_but_never_closed() -> None:
    rate = FrameRate(30, 60, limit=200, window_s=10, now=0.0)
    verdicts = [rate.frame(n / 33) for n in range(33 * 600)]  # 10 % too fast for ten minutes
    assert Verdict.CLOSE not in verdicts
    assert verdicts.count(Verdict.TELL) > 0


def test_rate_limited_is_told_at_most_once_a_second() -> None:
    rate = FrameRate(1, 1, limit=10**6, window_s=10, now=0.0)
    times = [n / 1000 for n in range(5000)]  # 1,000 frames a second for 5 s
    told = [t for t in times if rate.frame(t) is Verdict.TELL]
    assert len(told) == 5
    assert all(b - a >= TELL_EVERY_S for a, b in itertools.pairwise(told))
