"""Events for store tests: a match's opening and a seat's move, as the hub would append them."""

from __future__ import annotations

from server.match import Event, Match, Moved, Numbers

NUMBERS = Numbers(leftover=72, on_grid=24, complete=0, moves=1)


def opening(match: str) -> list[Event]:
    """ev 1 and 2: the match opened, its creator seated."""
    return Match.open(
        match,
        variant="classic",
        seed="1",
        seats=2,
        time_limit_s=600,
        name="A",
        token="t" * 24,
        player=None,
        now=0,
    )


def moved(ev: int, seat: int, seq: int) -> Moved:
    return Moved(ev=ev, at=ev, seat=seat, seq=seq, move="T", numbers=NUMBERS)
