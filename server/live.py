"""A match as one process holds it: the state, and the peers here that receive it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from . import protocol as p
from .feed import Spectators
from .match import Match

CLOSE_TRY_AGAIN = 1013  # a connection closed so that its client resumes (and catches up)


class Peer(Protocol):
    """A connection as the hub sees it: an id, the protocol version it speaks, a queue to write to, a way to close."""

    id: str
    version: int

    def send(self, message: p.Outgoing) -> None: ...

    def send_many(self, frames: Sequence[bytes]) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


@dataclass
class LiveMatch:
    """A match this process holds in memory, with its local audience."""

    match: Match
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    seats: dict[int, Peer] = field(default_factory=dict)
    spectators: Spectators[Peer] = field(default_factory=Spectators)
    timer: asyncio.TimerHandle | None = None
    deadline: int | None = None  # what ``timer`` is set for
    published: str | None = None  # the last batch this process published (its echo is skipped)
    reloading: bool = False  # being read again from the store (``Recovery.reload``)


def channel(match_id: str) -> str:
    """The bus channel of a match's events; the match's id its hash tag, so that on a Redis
    Cluster it lives on the master holding the match's keys (sharded pub/sub)."""
    return f"grip:match:{{{match_id}}}"
