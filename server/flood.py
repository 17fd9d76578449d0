"""A connection's frame rate: which frames run, which are refused, when to say so, when to close.

Pure: every decision takes the time (``time.monotonic()`` seconds) as an
argument, so the policy is tested without sockets or sleeping.

A frame runs while its token bucket (a ``Bucket``, ``server/limits/local.py``)
has a token (``rate`` a second on average, bursts of ``burst``). A refused frame is dropped; the client is
told ``rate_limited`` at most once a second (one answer per refused frame
would let a flood make the server write as much as it reads). A client
refused more than ``limit`` times within ``window_s`` seconds is flooding
and is closed: counted in a second bucket, of refusals, not in a row, since
the bucket of frames refilling between two refusals must not forgive a
flood that goes on.
"""

from __future__ import annotations

from enum import Enum

from .limits.local import Bucket

#: Seconds between two ``rate_limited`` answers to the same connection.
TELL_EVERY_S = 1.0


class Verdict(Enum):
    RUN = "run"
    DROP = "drop"  # refused, told less than a second ago
    TELL = "tell"  # refused: answer ``rate_limited``
    CLOSE = "close"  # flooding: close the connection (1008)


class FrameRate:
    # One a connection: no __dict__.
    __slots__ = ("frames", "refusals", "told_at")

    def __init__(self, rate: float, burst: int, limit: int, window_s: float, now: float) -> None:
        self.frames = Bucket(rate, burst, now)
        # The refusals allowed, refilled at limit/window_s a second: more than ``limit``
        # refusals within ``window_s`` empty it whatever the bucket of frames does meanwhile.
        self.refusals = Bucket(limit / window_s, limit, now)
        self.told_at: float | None = None

    def frame(self, now: float) -> Verdict:
        """The verdict on a frame received at ``now``."""
        if not self.frames.take(now):
            return Verdict.RUN
        if self.refusals.take(now):
            return Verdict.CLOSE
        if self.told_at is not None and now - self.told_at < TELL_EVERY_S:
            return Verdict.DROP
        self.told_at = now
        return Verdict.TELL
