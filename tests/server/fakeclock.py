"""Server time that moves only when a test says so."""

from __future__ import annotations

T0 = 1_700_000_000_000


class FakeClock:
    """Server time in ms that moves only when the test says so."""

    def __init__(self, start: int = T0) -> None:
        self.t = start

    def __call__(self) -> int:
        return self.t

    def advance(self, ms: int) -> None:
        self.t += ms
