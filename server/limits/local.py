"""Token buckets in this process: a connection's frame rate, and the embedded server's allowances.

One ``Bucket`` is one key's allowance; ``Buckets`` holds one a key (a
``Limiter``, ``server/limits/__init__.py``). Buckets that have filled up
again are forgotten, so the table holds only the keys that asked lately.
"""

from __future__ import annotations

import time
from collections.abc import Callable

FORGET_EVERY = 1024  # takes between two sweeps of the full buckets


class Bucket:
    """``rate`` tokens a second, up to ``burst``; full at ``now``, when it is made."""

    # One a connection (its frame rate): no __dict__.
    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: int, now: float) -> None:
        self.rate, self.burst = rate, float(burst)
        self.tokens, self.stamp = self.burst, now

    def take(self, now: float) -> float:
        """0 if a token was taken at ``now``; else the seconds until one will be there."""
        # Comparisons, not min() and max(): a connection's frame rate takes every frame here.
        tokens = self.tokens
        if now > self.stamp:
            tokens += (now - self.stamp) * self.rate
            if tokens > self.burst:
                tokens = self.burst
        self.stamp = now
        if tokens >= 1:
            self.tokens = tokens - 1
            return 0.0
        self.tokens = tokens
        return (1 - tokens) / self.rate

    def give_back(self) -> None:
        """Return a token taken for what then did not happen; never past ``burst``."""
        self.tokens = min(self.tokens + 1, self.burst)

    def full(self, now: float) -> bool:
        """Whether it has refilled to ``burst`` by ``now`` (a new one would be the same)."""
        return self.tokens + (now - self.stamp) * self.rate >= self.burst


class Buckets:
    """``rate`` takes a second on average per key, in bursts of up to ``burst``, on ``clock`` (seconds).

    A ``Limiter`` whose ``take`` never waits on I/O: the embedded server's, and the
    shared ones' stand-in while Redis does not answer.
    """

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst = rate, burst
        self._clock = clock
        self._buckets: dict[str, Bucket] = {}
        self._takes = 0

    async def take(self, key: str) -> float:
        """0 if ``key`` may go on now (one token taken); else the seconds until it may."""
        now = self._clock()
        self._takes += 1
        if self._takes % FORGET_EVERY == 0:
            self.forget_full(now)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = Bucket(self.rate, self.burst, now)
        return bucket.take(now)

    async def give_back(self, key: str) -> None:
        """Return a token ``key`` took (a forgotten bucket was full: nothing to return)."""
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket.give_back()

    def forget_full(self, now: float) -> None:
        """Drop the keys whose bucket is full again (a new one would start so)."""
        for key in [k for k, b in self._buckets.items() if b.full(now)]:
            del self._buckets[key]

    def __contains__(self, key: str) -> bool:
        """Whether ``key`` has a bucket held (it asked lately)."""
        return key in self._buckets
