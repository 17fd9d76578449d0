"""What a match's spectators receive, written by one task in rounds.

A move's board goes to every spectator of the match. Written inline, one
write per spectator, the fan-out of one move to a thousand spectators held up
everything behind it, the next move's ack included, for the whole round
(docs/benchmarks.md, "Fan-out"). Here the fan-out only posts the frame; a
task then gives each spectator, in one write, every frame it has not had yet,
so moves that come while a round is under way share the next write, and the
task lets the event loop run between chunks of spectators.

Order holds: every frame of the match for a spectator goes through its feed,
in the order posted. A spectator added joins at the feed's end: its snapshot
holds everything posted before. A match has one feed per protocol version
(``Spectators``): v1 and v2 spectators get different boards.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, Protocol, TypeVar

from .protocol import PROTOCOL_VERSIONS

log = logging.getLogger(__name__)

CHUNK = 64  # spectators written between two turns of the event loop


class Reader(Protocol):
    def send_many(self, frames: Sequence[bytes]) -> None:
        """Write ``frames`` in order, at once if the reader keeps up, else queued."""


class Spectator(Reader, Protocol):
    version: int  # the protocol version it speaks: it stays the same while it watches


R = TypeVar("R", bound=Reader)
S = TypeVar("S", bound=Spectator)


def _unheard() -> None:
    """Nobody to tell that a feed's readers changed."""


class SpectatorFeed(Generic[R]):
    def __init__(self, changed: Callable[[], None] = _unheard) -> None:
        """``changed`` is told when a reader comes or goes (a dropped one too): the fan-out plan's."""
        self._changed = changed
        self._frames: list[bytes] = []
        self._base = 0  # the feed position of _frames[0]
        self._next: dict[R, int] = {}  # each spectator's next position
        self._writer: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._next)

    def __iter__(self) -> Iterator[R]:
        return iter(list(self._next))

    def add(self, reader: R) -> None:
        if reader not in self._next:
            self._next[reader] = self._base + len(self._frames)
            self._changed()

    def discard(self, reader: R) -> None:
        if self._next.pop(reader, None) is not None:
            self._changed()

    def post(self, frame: bytes) -> None:
        if not self._next:
            return
        self._frames.append(frame)
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        try:
            while True:
                end = self._base + len(self._frames)
                behind = [r for r, at in self._next.items() if at < end]
                if not behind:
                    return
                # Readers at the same place get the same tuple: a reader may frame it once for all.
                chunks: dict[tuple[int, int], tuple[bytes, ...]] = {}
                for i, reader in enumerate(behind, 1):
                    at = self._next.get(reader)
                    if at is not None:  # else: gone meanwhile
                        end = self._base + len(self._frames)
                        chunk = chunks.get((at, end))
                        if chunk is None:
                            chunk = chunks[at, end] = tuple(self._frames[at - self._base :])
                        self._next[reader] = end
                        try:
                            reader.send_many(chunk)
                        except Exception:
                            log.exception("a spectator could not be written to; dropping it")
                            self.discard(reader)
                    if i % CHUNK == 0:
                        await asyncio.sleep(0)
                self._trim()
        finally:
            self._writer = None

    def _trim(self) -> None:
        """Forget the frames every spectator has had."""
        low = min(self._next.values(), default=self._base + len(self._frames))
        del self._frames[: low - self._base]
        self._base = low


class Spectators(Generic[S]):
    """A match's spectators in this process: a feed for each protocol version."""

    def __init__(self, changed: Callable[[], None] = _unheard) -> None:
        """``changed`` is told when a spectator comes or goes (``SpectatorFeed``)."""
        self._feeds: dict[int, SpectatorFeed[S]] = {v: SpectatorFeed(changed) for v in PROTOCOL_VERSIONS}

    def __len__(self) -> int:
        return sum(map(len, self._feeds.values()))

    def __iter__(self) -> Iterator[S]:
        return (s for feed in self._feeds.values() for s in feed)

    def add(self, spectator: S) -> None:
        self._feeds[spectator.version].add(spectator)

    def discard(self, spectator: S) -> None:
        for feed in self._feeds.values():
            feed.discard(spectator)

    def versions(self) -> tuple[int, ...]:
        """The protocol versions spoken by a spectator here, in ``PROTOCOL_VERSIONS`` order."""
        return tuple([v for v, feed in self._feeds.items() if feed])

    def post(self, frame: bytes, version: int = 0) -> None:
        """``frame`` for the spectators who speak ``version`` (0: every one)."""
        for v, feed in self._feeds.items():
            if version in (0, v):
                feed.post(frame)
