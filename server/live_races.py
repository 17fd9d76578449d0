"""The list of live races: kept in the store by the processes running them, followed by whoever asks.

Listed: races of two seats being played, neither private nor a daily
challenge attempt (watching those is refused during their day), nor practice.
A process with a racer of such a race here keeps its listing up to date
(start, each racer's numbers, finish): the races changed since the last
write go to the store together every ``Settings.live_every_s``, so a move costs
nothing more than marking its race. The decision takes the listing off (a
step of the decision in the store), and the store keeps a late write from
putting it back. Every process reads the same list from the store.

A client asks with ``live`` and is sent the list again whenever it changed,
every ``live_every_s`` at most, until ``live_stop`` or its connection
closes. A process reads the store only while someone here follows
the list (once a period, whatever they ask), and then only the top of each
order (the longest page's worth, ``p.LIVE_LIMIT``) and the stale listings,
which the store keeps indexed: not the whole list. It ranks each order once
a read, and builds each page (order, length) once for all its followers.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from . import protocol as p
from .errors import StoreUnavailable
from .live import LiveMatch, Peer
from .match import Event, Match
from .match.events import Decided, Ended, Moved, Started
from .store import Store, live_gap

log = logging.getLogger(__name__)
#: A listing this long past its race's end is stale: its decision never came (every process died).
STALE_AFTER_END_MS = 10 * 60_000
#: Listings built and written in one turn of the event loop (``LiveRaces.write``).
WRITE_SLICE = 10


def listed(m: Match) -> bool:
    """Whether anyone may find this match on the list while it is played."""
    return m.capacity == 2 and not (m.private or m.practice or m.daily is not None)


def listing(m: Match) -> p.LiveRace:
    """A race being played as the list shows it: its racers' names, ratings and numbers.

    Each racer's numbers as of the last event applied (``SeatState.numbers``):
    a ``progress`` model per racer was half of the cost of a write of hundreds
    of listings, and reading the game would take back the moves decided and
    awaiting the store (most races have one, under load) to play them again.
    """
    racers = []
    for n, s in enumerate(m.seats):
        if s is not None:
            numbers = s.numbers
            assert numbers is not None  # set from the start on
            racers.append(
                p.LiveRacer(
                    seat=n,
                    name=s.name,
                    rating=s.rating,
                    leftover=numbers.leftover,
                    moves=numbers.moves,
                    finished=s.ended is not None,
                )
            )
    return p.LiveRace(
        match=m.id,
        variant=m.variant,
        time_limit_s=m.time_limit_s,
        rated=m.rated,
        started_at=m.started_at,
        ends_at=m.ends_at,
        racers=racers,
    )


#: A listed race as the store holds it: ``LiveRace``'s JSON, decoded (no model: see ``pages``).
Listing = dict[str, Any]


def top(listings: Sequence[Listing], order: p.LiveOrder, limit: int) -> list[Listing]:
    """The first ``limit`` listings in ``order``, taken with a heap of ``limit``, not a sort of them all.

    ``newest`` started first; ``closest``: the racers nearest each other in cards left, then newest.
    """
    return heapq.nlargest(limit, listings, key=_newest if order == "newest" else _closest)


def _newest(r: Listing) -> tuple[int, str]:
    return r["started_at"], r["match"]


def _closest(r: Listing) -> tuple[int, int, str]:
    return -live_gap(racer["leftover"] for racer in r["racers"]), r["started_at"], r["match"]


def current(stored: Sequence[bytes], now: int) -> tuple[list[Listing], list[str]]:
    """The store's listings decoded, those still live; and the codes of the stale ones.

    Decoded, not made models: with 5,000 races listed, a model for each
    listing read was 190-230 ms of the event loop every ``live_every_s``
    while anyone here followed the list (docs/benchmarks.md, "Loads nobody ran").
    Stale: ended before ``now - STALE_AFTER_END_MS``, the ``stale_before`` of
    the store's read (``Store.live_top``), which hands every stale one.
    """
    races, stale = [], []
    for raw in stored:
        race = orjson.loads(raw)
        if race["ends_at"] + STALE_AFTER_END_MS < now:
            stale.append(race["match"])  # every process died under it before its decision
        else:
            races.append(race)
    return races, stale


def ranked(races: Sequence[Listing], order: p.LiveOrder, depth: int) -> list[bytes]:
    """The JSON of the first ``depth`` races in ``order``: only those become models, once for every page."""
    return [p.encode(p.LiveRace.model_validate(r)) for r in top(races, order, depth)]


def frame(ranked: Sequence[bytes], order: p.LiveOrder, limit: int, total: int) -> bytes:
    """The ``live`` frame of one (order, limit), from the races' JSON: ``p.encode(p.Live(...))``'s bytes.

    Joined, not encoded: every distinct ``limit`` followed (1 to 100) is a
    page of its own, and a model of each would be a client's to multiply.
    """
    races = b",".join(ranked[:limit])
    return b'{"type":"live","order":"%s","races":[%s],"total":%d}' % (order.encode(), races, total)


@dataclass
class Follower:
    peer: Peer
    order: p.LiveOrder
    limit: int
    last: bytes = b""  # the page last sent: sent again only when it changed


@dataclass
class LiveRaces:
    store: Store
    clock: Callable[[], int]
    every_s: float
    followers: dict[str, Follower] = field(default_factory=dict)  # by connection id
    _changed: dict[str, LiveMatch] = field(default_factory=dict)
    _stale: set[str] = field(default_factory=set)  # listed long past their end: taken off at the next write
    # The list's top as last read (loop time, races, how many are listed); the JSON of its first
    # races by order (``ranked``), as deep as the longest page; and the frames built from them,
    # by (order, limit).
    _read: tuple[float, list[Listing], int] | None = None
    _ranked: dict[p.LiveOrder, list[bytes]] = field(default_factory=dict)
    _pages: dict[tuple[p.LiveOrder, int], bytes] = field(default_factory=dict)

    # ------------------------------------------------ a Follower of matches (hub)

    def applied(self, lm: LiveMatch, e: Event) -> None:
        if isinstance(e, Started | Moved | Ended) and lm.seats and listed(lm.match):
            self._changed[lm.match.id] = lm
        elif isinstance(e, Decided):
            self._changed.pop(lm.match.id, None)

    async def appended(self, lm: LiveMatch, events: list[Event]) -> None:
        pass

    async def write(self) -> None:
        """The listings changed since the last write, ``WRITE_SLICE`` races at a time, spread over half a period.

        Written all at once, hundreds of listings held up every move in
        flight for 10-20 ms every ``live_every_s``; written in slices with only
        a loop turn between them, they were still a burst of 30-40 ms of work
        that a busy server's moves queued behind: the spikes of its p99
        move-to-ack (docs/benchmarks.md, "Eleventh pass"). Slices
        spread over half of ``every_s`` make the same work a trickle. A race
        decided meanwhile is skipped (its decision took its listing off).
        """
        changed, self._changed = list(self._changed.values()), {}
        stale, self._stale = sorted(self._stale), set()
        starts = range(0, len(changed), WRITE_SLICE) if changed else range(1)
        pause = self.every_s / 2 / len(starts)
        for start in starts:
            if start:
                await asyncio.sleep(pause)  # the moves that came meanwhile, and the ones still to come
            part = changed[start : start + WRITE_SLICE]
            races = [listing(lm.match) for lm in part if lm.match.status == "playing"]
            gone, stale = stale, []  # the stale ones go with the first slice
            if not (races or gone):
                continue
            try:
                await self.store.list_races(races, gone)
            except StoreUnavailable:
                for lm in changed[start:]:  # this slice and the rest: next time
                    self._changed.setdefault(lm.match.id, lm)
                self._stale.update(gone)
                return

    # ------------------------------------------------------------- the followers

    async def follow(self, peer: Peer, msg: p.LiveRequest) -> None:
        self.followers[peer.id] = Follower(peer, msg.order, msg.limit)
        await self.refresh({peer.id})

    def stop(self, peer: Peer) -> None:
        self.followers.pop(peer.id, None)

    async def refresh(self, only: set[str] | None = None) -> None:
        """Send each follower (or those in ``only``) its page, if it changed.

        The list's top is read from the store for every period's refresh: each
        order's first ``p.LIVE_LIMIT`` and the stale listings, from the store's
        indexes. Read whole, 10,000 listings were 70 ms of the event loop every
        period on a process with a follower (docs/benchmarks.md, "The live
        list read from the top"). A new follower (``only``) is sent the pages
        of the last read while it is less than a period old: each ``live``
        read the list, and a client can send 30 a second. Each order's
        first races become models once a read, as deep as the longest page
        (``_ranked_for``); a page of each length is their JSON joined
        (``frame``), built once a read.
        """
        followers = [f for conn, f in self.followers.items() if only is None or conn in only]
        if not followers:
            return
        loop = asyncio.get_running_loop()
        if only is None or self._read is None or loop.time() - self._read[0] >= self.every_s:
            now = self.clock()
            top = await self.store.live_top(p.LIVE_LIMIT, now - STALE_AFTER_END_MS)
            races, stale = current(top.races, now)
            self._stale.update(stale)
            self._read, self._ranked, self._pages = (loop.time(), races, top.total - len(stale)), {}, {}
        total, built = self._read[2], self._pages
        for f in followers:
            key = (f.order, f.limit)
            if key not in built:
                built[key] = frame(self._ranked_for(f.order), f.order, f.limit, total)
            page = built[key]
            if page != f.last:
                f.last = page
                f.peer.send(page)

    def _ranked_for(self, order: p.LiveOrder) -> list[bytes]:
        """The last read's first races in ``order``, as deep as the longest page (``p.LIVE_LIMIT``).

        The read holds each order's first ``p.LIVE_LIMIT`` past the stale ones:
        ranked here, the two orders' together, they are each order's top.

        Ranked once a read, whatever pages are asked: ranked only as deep as
        the pages followed, a ``live`` asking for a longer page than any
        before ranked the whole list again (3 ms at 10,000 races, each of
        a client's 30 frames a second: docs/benchmarks.md, "The live list's
        pages").
        """
        assert self._read is not None
        have = self._ranked.get(order)
        if have is None:
            have = self._ranked[order] = ranked(self._read[1], order, p.LIVE_LIMIT)
        return have

    async def run(self) -> None:
        """Write the listings changed here, and refresh the followers here, for good."""
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            # a period from one start to the next (the write itself takes half of one); no catching up
            due = max(due + self.every_s, loop.time())
            await asyncio.sleep(due - loop.time())
            try:
                await self.write()
                await self.refresh()
            except StoreUnavailable as exc:
                log.warning("live races: %s", exc)
