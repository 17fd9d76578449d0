"""Allowances: how often one player, one seat or one client address may ask for work.

A solver hint, a resume that replays a log, a replay or a match opened costs
the server far more than a frame, so each has a quota of its own per player,
seat or address (a token bucket), besides each connection's frame rate
(``server/flood.py``, a ``Bucket`` of the connection's own). A ``Limiter``
is one such quota, keyed; ``open_limits`` makes them for the store the
server runs on, chosen by its URL as the store and the bus are:

- embedded (``sqlite://``): ``local.Buckets``, in this process;
- ``redis://`` (a single Redis or a Cluster): ``redis.RedisBuckets``, one
  bucket per key in Redis, shared by every process of the deployment, so N
  processes do not give a client N allowances.

A connection lives in one process: its frame rate stays local, and costs no round trip.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, cast

from ..settings import REDIS_SCHEMES
from ..store import Store
from .local import Buckets


class Limiter(Protocol):
    """``rate`` takes a second on average per key, in bursts of up to ``burst``."""

    async def take(self, key: str) -> float:
        """0 if ``key`` may go on now (one token taken); else the seconds until it may."""

    async def give_back(self, key: str) -> None:
        """Return a token ``key`` took for what then did not happen; never past the burst."""


class Limits(Protocol):
    """Makes the ``Limiter``s of one process, all on one backend."""

    def __call__(
        self, name: str, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> Limiter:
        """The allowance ``name`` (its keys' own space): ``rate`` a second, ``burst`` at once.

        ``clock`` (seconds) is the in-process buckets' time; shared ones count on Redis's.
        """


def open_limits(url: str, store: Store, clock_ms: Callable[[], int]) -> Limits:
    """The backend for the store at ``url`` (``store``, opened on it): Redis shares its client."""
    if url.split("://", 1)[0] in REDIS_SCHEMES:
        from ..store.redis import RedisStore
        from .redis import RedisLimits

        return RedisLimits(cast(RedisStore, store).client, clock_ms)
    return local_limits


def local_limits(name: str, rate: float, burst: int, clock: Callable[[], float] = time.monotonic) -> Limiter:
    """This process's buckets (``name`` is for shared ones: each ``Buckets`` is a space of its own)."""
    return Buckets(rate, burst, clock)
