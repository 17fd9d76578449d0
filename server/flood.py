"""A connection's frame rate: which frames run, which are refused, when to say so, when to close.

Pure: every decision takes the time (``time.monotonic()`` seconds) as an
argument, so the policy is tested without sockets or sleeping.

A frame runs while the token bucket has a token (``rate`` a second on
average, bursts of ``burst``). A refused frame is dropped; the client is
told ``rate_limited`` at most once a second (one answer per refused frame
would let a flood make the server write as much as it reads). A client
refused more than ``limit`` times within ``window_s`` seconds is flooding
and is closed: counted per window, not in a row, since the bucket refilling
between two refusals must not forgive a flood that goes on.
"""

from __future__ import annotations

from enum import Enum

#: Seconds between two ``rate_limited`` answers to the same connection.
TELL_EVERY_S = 1.0


class Verdict(Enum):
    RUN = "run"
    DROP = "drop"  # refused, told less than a second ago
    TELL = "tell"  # refused: answer ``rate_limited``
    CLOSE = "close"  # flooding: close the connection (1008)


class FrameRate:
    # One a connection: no __dict__.
    __slots__ = (
        "allowance",
        "burst",
        "limit",
        "rate",
        "stamp",
        "tokens",
        "told_at",
        "window_s",
    )

    def __init__(self, rate: float, burst: int, limit: int, window_s: float, now: float) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.stamp = now
        # The refusals allowed, refilled at limit/window_s a second: more than ``limit``
        # refusals within ``window_s`` empty it whatever the bucket of frames does meanwhile.
        self.limit, self.window_s = limit, window_s
        self.allowance = float(limit)
        self.told_at: float | None = None

    def frame(self, now: float) -> Verdict:
        """The verdict on a frame received at ``now``."""
        elapsed = max(0.0, now - self.stamp)
        self.stamp = now
        self.tokens = min(self.burst, self.tokens + elapsed * self.rate)
        self.allowance = min(self.limit, self.allowance + elapsed * self.limit / self.window_s)
        if self.tokens >= 1:
            self.tokens -= 1
            return Verdict.RUN
        self.allowance -= 1
        if self.allowance < 0:
            return Verdict.CLOSE
        if self.told_at is not None and now - self.told_at < TELL_EVERY_S:
            return Verdict.DROP
        self.told_at = now
        return Verdict.TELL
