"""Liveness: which server processes are alive, and what becomes of the seats and races of the dead.

Every process renews a heartbeat in the store (``grip:instance:{live}:<id>`` on
Redis, every ``HEARTBEAT_S``, good for ``INSTANCE_TTL_MS``). A seat's
connection id names its process, so any process can tell a seat held by a
dead one: it records that connection as dropped, and the grace period
abandons the racer as after any drop. A race nobody alive holds has no
timers running: it is adopted, so that it still ends (docs/architecture.md,
"Process heartbeats" and "No race is left without a process").
"""

from __future__ import annotations

import asyncio
import logging
import time

from .errors import ErrorCode, Refused, StoreUnavailable
from .hub import Hub
from .store import Store

log = logging.getLogger(__name__)

HEARTBEAT_S = 2.0  # how often a process says it is alive ...
INSTANCE_TTL_MS = 6_000  # ... and how long the others wait, without news, to count it dead
ORPHAN_BEATS = 3  # every how many beats a process looks for races nobody alive looks after


def connection_id(instance: str, n: object) -> str:
    """A connection's id names its server process: ``instance_of`` reads it back."""
    return f"{instance}-{n}"


def instance_of(connection: str) -> str:
    return connection.partition("-")[0]


class Liveness:
    def __init__(self, hub: Hub, store: Store, instance: str) -> None:
        self._hub = hub
        self._store = store
        self._instance = instance
        self._unadoptable: set[str] = set()  # orphans whose log does not replay, or is gone: not retried

    async def beat(self) -> None:
        """This process is alive, for the next ``INSTANCE_TTL_MS``."""
        await self._store.heartbeat(self._instance, INSTANCE_TTL_MS)

    async def run(self) -> None:
        """Beat for good; adopt orphaned races, and drop the dead's seats.

        Only once this process's own heartbeat has been renewed without a break
        for a whole ``INSTANCE_TTL_MS``: after the store was away, every
        heartbeat may have run out, and the others need one round to renew theirs.
        Orphans are looked for every ``ORPHAN_BEATS`` beats only (it reads
        every running match's seat leases): a dead process's heartbeat takes
        about that long to run out anyway.
        """
        steady_since: float | None = time.monotonic()
        beats = 0
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                await self.beat()
                steady_since = steady_since or time.monotonic()
                if time.monotonic() - steady_since >= INSTANCE_TTL_MS / 1000:
                    beats += 1
                    if beats % ORPHAN_BEATS == 0:
                        await self.adopt_orphans()
                    await self.drop_dead_seats()
            except StoreUnavailable:
                steady_since = None

    async def drop_dead_seats(self) -> None:
        """Record as dropped the connections of server processes that died holding seats.

        A process killed outright never records its connections' ends, so
        without this their seats would stay "connected" and never be
        abandoned. This process asks about the others that hold seats of the
        matches it has. Another process may record the same drop at once: the
        second finds the seat's connection already changed, and records nothing.
        """
        held = [
            (lm, n, s.conn)
            for lm in list(self._hub.live.values())
            if lm.match.status != "finished"
            for n, s in enumerate(lm.match.seats)
            if s is not None and s.conn is not None and instance_of(s.conn) != self._instance
        ]
        if not held:
            return
        alive = await self._store.alive({instance_of(conn) for _, _, conn in held})
        for lm, n, conn in held:
            if instance_of(conn) not in alive and self._hub.holds(lm):
                await self._hub.record_connection(lm, n, conn, connected=False)

    async def adopt_orphans(self) -> None:
        """Load the started, undecided matches no live process looks after, so that their timers run.

        Timers run only where a match is loaded, and the process holding a
        seat's connection has it loaded: so a running match is adopted when
        none of its seats' connections belongs to a live process. Adopting one
        that another process adopts too is harmless: appends are conditional,
        so one timer wins (docs/architecture.md, "No race is left without a
        process"). ``drop_dead_seats`` then records the dead connections as dropped.
        """
        running = await self._store.running()
        orphans = {
            mid: conns
            for mid, conns in running.items()
            if mid not in self._hub.live and mid not in self._unadoptable
        }
        alive = await self._store.alive({instance_of(c) for conns in orphans.values() for c in conns})
        for mid, conns in orphans.items():
            if any(instance_of(c) in alive for c in conns):
                continue
            try:
                (await self._hub.get(mid)).runs_here = True  # no spectator's, to let go of
            except Refused as exc:
                log.warning("could not take in match %s: %s", mid, exc.message)
                if exc.code in (ErrorCode.CORRUPT, ErrorCode.NOT_FOUND):  # no retry mends it
                    self._unadoptable.add(mid)
