"""A match as one process holds it: the state, and the peers here that receive it."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from . import protocol as p
from .feed import Spectators
from .match import Audience, Match, Present

CLOSE_TRY_AGAIN = 1013  # a connection closed so that its client resumes (and catches up)


class Peer(Protocol):
    """A connection as the hub sees it: an id, the protocol version it speaks, a queue to write to, a way to close."""

    id: str
    version: int

    def send(self, message: p.Outgoing) -> None: ...

    def send_many(self, frames: Sequence[bytes]) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


#: The peers here an audience's message goes to: its racers, and whether the spectators get it.
Receivers = tuple[tuple[Peer, ...], bool]


class FanOutPlan:
    """Who in this process receives what a match renders: settled when its seats or spectators change.

    Asked at each move instead (which versions the spectators speak, which
    racers are here and what they speak, who is in an audience), it was a
    twentieth of a move's server time (docs/benchmarks.md, "A fan-out plan").
    A peer's protocol version stays as it is while it is in a match
    (``on_hello`` refuses a change), so the plan holds it too.
    """

    __slots__ = ("_racers", "_receivers", "_spectators", "present")

    def __init__(self, racers: Mapping[int, Peer], spectators: Spectators[Peer]) -> None:
        self._racers = tuple(racers.items())
        self._spectators = spectators
        #: What rendering builds for: only what somebody here receives.
        self.present = Present({seat: (peer.version,) for seat, peer in self._racers}, spectators.versions())
        self._receivers: dict[Audience, Receivers] = {}  # settled on an audience's first message

    def deliver(self, audience: Audience, message: p.Outgoing) -> None:
        """``message`` to the peers here in ``audience``: encoded once for them all, not at all for nobody."""
        peers, watchers = self._receivers.get(audience) or self._settle(audience)
        if not (peers or watchers):
            return
        data = p.encode(message)
        for peer in peers:
            peer.send(data)
        if watchers:
            self._spectators.post(data, audience.version)

    def _settle(self, audience: Audience) -> Receivers:
        peers = tuple(
            peer for seat, peer in self._racers if audience.has_seat(seat) and audience.speaks(peer.version)
        )
        watchers = audience.has_spectators and _spoken(self.present.spectators, audience.version)
        receivers = self._receivers[audience] = (peers, watchers)
        return receivers


def _spoken(versions: tuple[int, ...], version: int) -> bool:
    """Whether a spectator speaking one of ``versions`` speaks ``version`` (0: any version)."""
    return version in versions if version else bool(versions)


@dataclass
class LiveMatch:
    """A match this process holds in memory, with its local audience.

    The racers and spectators here change only through ``seat``, ``unseat``
    and ``spectators`` (whose feeds say when they change), each of which
    drops the fan-out plan, settled again at the next event.
    """

    match: Match
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    spectators: Spectators[Peer] = field(init=False)
    timer: asyncio.TimerHandle | None = None
    deadline: int | None = None  # what ``timer`` is set for
    published: str | None = None  # the last batch this process published (its echo is skipped)
    reloading: bool = False  # being read again from the store (``Recovery.reload``)
    # A racer of this process has sat in it, or this process took it in as an orphan: its timers must
    # run here. Else it was loaded for spectators (``Hub.sweep`` lets go of it once they are gone).
    runs_here: bool = False
    _seats: dict[int, Peer] = field(default_factory=dict, init=False)
    _plan: FanOutPlan | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.spectators = Spectators(self._audience_changed)

    @property
    def seats(self) -> Mapping[int, Peer]:
        """The racers connected here, by seat."""
        return self._seats

    def seat(self, seat: int, peer: Peer) -> Peer | None:
        """``peer`` races in ``seat`` here now; return the peer it replaces, if any."""
        old = self._seats.get(seat)
        self._seats[seat] = peer
        self.runs_here = True
        self._audience_changed()
        return old

    def unseat(self, seat: int) -> None:
        """Nobody here races in ``seat`` any more."""
        if self._seats.pop(seat, None) is not None:
            self._audience_changed()

    def fan_out(self) -> FanOutPlan:
        """Who here receives what this match renders, as of now."""
        plan = self._plan
        if plan is None:
            plan = self._plan = FanOutPlan(self._seats, self.spectators)
        return plan

    def _audience_changed(self) -> None:
        self._plan = None


def channel(match_id: str) -> str:
    """The bus channel of a match's events; the match's id its hash tag, so that on a Redis
    Cluster it lives on the master holding the match's keys (sharded pub/sub)."""
    return f"grip:match:{{{match_id}}}"
