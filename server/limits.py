"""Token buckets by key: how often one player, or one client address, may ask for costly work.

A solver hint or a replay costs the server far more than a frame, so these
have quotas of their own, per player or per address, besides each
connection's frame rate (``server/transport.py``). Buckets that have filled
up again are forgotten, so the table holds only the keys that asked lately.
"""

from __future__ import annotations

import time
from collections.abc import Callable

FORGET_EVERY = 1024  # takes between two sweeps of the full buckets


class Buckets:
    """``rate`` takes a second on average per key, in bursts of up to ``burst``."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst = rate, burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key: (tokens, when)
        self._takes = 0

    def take(self, key: str) -> float:
        """0 if ``key`` may go on now (one token taken); else the seconds until it may."""
        now = self._clock()
        tokens, then = self._buckets.get(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - then) * self.rate)
        self._takes += 1
        if self._takes % FORGET_EVERY == 0:
            self._forget_full(now)
        if tokens >= 1:
            self._buckets[key] = (tokens - 1, now)
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1 - tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        full = [
            k
            for k, (tokens, then) in self._buckets.items()
            if tokens + (now - then) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
