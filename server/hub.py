"""The asyncio shell around matches: it only moves messages.

For every command: decide (pure, ``match.py``), append to the store (durable,
conditional on the last ``ev``), publish on the bus, then apply and fan the
renderings out to this process's connections. Events other processes
appended arrive over the bus and take the same apply path; a gap in ``ev``
is filled from the store, so every connection sees every event once, in
order, whichever process decided it.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import protocol as p
from .bus import Bus
from .errors import Conflict, ErrorCode, Refused, StoreUnavailable
from .feed import SpectatorFeed
from .match import DEFAULT_GRACE_MS, Audience, Duplicate, Event, Match, decode_events, encode_events
from .match.events import Connected, Disconnected, Moved, Opened, RematchOpened
from .match.render import render
from .protocol import now_ms
from .store import Store

log = logging.getLogger(__name__)

LOBBY_TTL_MS = 30 * 60_000
FINISHED_TTL_MS = 10 * 60_000
#: A decided match that nobody in this process is attached to (no seat, no
#: spectator) leaves memory this long after its decision. If someone asks for
#: it before it expires, it is read back from the store.
UNLOAD_DECIDED_AFTER_MS = 60_000
APPEND_ATTEMPTS = 8
CLOSE_TRY_AGAIN = 1013  # a connection closed so that its client resumes (and catches up)
RELOAD = "reload "  # on a match's channel instead of events: its store lost events, load it again
SETTLE_AGAIN_S = 3.0  # a write a frozen Redis had queued can land after the first look: look again


def new_code() -> str:
    return "".join(secrets.choice(p.CODE_ALPHABET) for _ in range(p.CODE_LENGTH))


def new_token() -> str:
    return secrets.token_urlsafe(24)  # 192 bits


class Peer(Protocol):
    """A connection as the hub sees it: an id, a queue to write to, a way to close."""

    id: str

    def send(self, message: p.Outgoing) -> None: ...

    def send_many(self, frames: Sequence[bytes]) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


@dataclass
class LiveMatch:
    """A match this process holds in memory, with its local audience."""

    match: Match
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    seats: dict[int, Peer] = field(default_factory=dict)
    spectators: SpectatorFeed[Peer] = field(default_factory=SpectatorFeed)
    timer: asyncio.TimerHandle | None = None
    deadline: int | None = None  # what ``timer`` is set for
    published: str | None = None  # the last batch this process published (its echo is skipped)
    reloading: bool = False  # being read again from the store (``Hub._reload``)


class Hub:
    def __init__(
        self,
        store: Store,
        bus: Bus,
        *,
        clock: Callable[[], int] = now_ms,
        grace_ms: int = DEFAULT_GRACE_MS,
        on_event: Callable[[Event], None] | None = None,
    ) -> None:
        self.store = store
        self.bus = bus
        self._reload_notice = RELOAD + secrets.token_hex(4)  # this process's own, to skip its echo
        self._unloadable: set[str] = set()  # orphans whose log does not replay, or is gone: not retried
        self.clock = clock
        self.grace_ms = grace_ms
        self.live: dict[str, LiveMatch] = {}
        self._loading: dict[str, asyncio.Future[LiveMatch]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._on_event = on_event

    # -------------------------------------------------------------- lookup

    async def get(self, match_id: str) -> LiveMatch:
        """The live match, loaded from the store (and subscribed) on first use."""
        lm = self.live.get(match_id)
        if lm is None:
            pending = self._loading.get(match_id)
            if pending is None:
                pending = asyncio.ensure_future(self._load(match_id))
                self._loading[match_id] = pending
                pending.add_done_callback(lambda _: self._loading.pop(match_id, None))
            lm = await asyncio.shield(pending)
        if self.expired(lm.match):
            self.drop(match_id)
            raise Refused(ErrorCode.NOT_FOUND, f"match {match_id} has expired")
        return lm

    async def _load(self, match_id: str) -> LiveMatch:
        await self.bus.subscribe(_channel(match_id), lambda data: self._on_bus(match_id, data))
        try:
            events = await self.store.events(match_id)
            match = Match.from_events(events, self.grace_ms) if events else None
        except StoreUnavailable:
            await self.bus.unsubscribe(_channel(match_id))
            raise
        except ValueError as exc:  # unreadable JSON, a gap, a move the engine refuses: no retry mends it
            await self.bus.unsubscribe(_channel(match_id))
            log.error("match %s: its stored log does not replay: %s", match_id, exc)
            raise Refused(ErrorCode.CORRUPT, f"the stored log of match {match_id} does not replay") from None
        if match is None:
            await self.bus.unsubscribe(_channel(match_id))
            raise Refused(ErrorCode.NOT_FOUND, f"no match {match_id}")
        opened = self.live.get(match_id)
        if opened is not None:  # ``open`` registered it during this read: keep the one LiveMatch
            return opened
        lm = LiveMatch(match)
        self.live[match_id] = lm
        self._schedule(lm)
        return lm

    def expired(self, m: Match) -> bool:
        now = self.clock()
        if m.status == "lobby":
            return now > m.created_at + LOBBY_TTL_MS
        if m.status == "finished":
            return now > m.decided_at + FINISHED_TTL_MS
        return False

    # ------------------------------------------------------------ commands

    async def open(self, events: list[Event]) -> LiveMatch:
        """Start a new match log (create, rematch); Conflict if the id is taken."""
        opened = events[0]
        assert isinstance(opened, Opened)
        await self._append(opened.match, 0, events)
        await self.bus.subscribe(_channel(opened.match), lambda data: self._on_bus(opened.match, data))
        lm = self.live.get(opened.match)
        if lm is None:
            lm = self.live[opened.match] = LiveMatch(Match(opened, self.grace_ms))
        # else: loaded meanwhile (a rematch's seat resumed at once, a bot's): one LiveMatch, that one
        self._apply(lm, events[1:])
        return lm

    async def execute(
        self, lm: LiveMatch, decide: Callable[[Match], list[Event] | Duplicate]
    ) -> list[Event] | Duplicate:
        """Decide, make durable, publish, apply: the one path every change takes."""
        async with lm.lock:
            for _ in range(APPEND_ATTEMPTS):
                decision = decide(lm.match)
                if isinstance(decision, Duplicate) or not decision:
                    return decision
                expected = lm.match.ev
                try:
                    shift = await self._append(lm.match.id, expected, decision)
                except Conflict as exc:
                    if exc.behind:
                        await self._reload(lm)
                        raise Refused(
                            ErrorCode.UNAVAILABLE,
                            "the store lost this match's latest events; resume to go on from what it kept",
                        ) from None
                    if lm.match.ev == expected:  # the bus has not brought the news yet: read it
                        await self._catch_up(lm)
                    continue
                except Refused:  # no answer: the write may land all the same
                    self.spawn(self._settle(lm, expected))
                    raise
                if shift:  # placed after others' moves we had not seen: take them in first
                    decision = [e.model_copy(update={"ev": e.ev + shift}) for e in decision]
                    if lm.match.ev < decision[0].ev - 1:  # unless the bus brought them meanwhile
                        await self._catch_up(lm)
                self._apply(lm, decision)
                await self._publish(lm.match.id, decision)
                await self._after(lm, decision)
                return decision
        raise Refused(ErrorCode.UNAVAILABLE, "the match is busy; try again")

    async def _append(self, match_id: str, expected: int, events: list[Event]) -> int:
        rebase = len(events) == 1 and isinstance(events[0], Moved)
        try:
            return await self.store.append(match_id, expected, events, rebase=rebase)
        except StoreUnavailable:
            raise Refused(
                ErrorCode.UNAVAILABLE,
                "the store did not answer; send it again (a move resent with its seq counts once)",
            ) from None

    async def _settle(self, lm: LiveMatch, after: int) -> None:
        """Make an append that got no answer known everywhere, should it land after all.

        A timed-out write may still be carried out (Redis runs what it had
        queued once it is back), and then no process would hear of it: its
        writer reported a failure and published nothing. So read the log from
        where the append stood, once the store answers and once more a little
        later; apply what is missing here, and publish it for the others
        (receivers drop what they already have).
        """
        for pause in (0.0, SETTLE_AGAIN_S):
            await asyncio.sleep(pause)
            events = await self._read_log(lm, after)
            if events:
                async with lm.lock:
                    self._apply(lm, events)
                await self._publish(lm.match.id, events)

    async def _read_log(self, lm: LiveMatch, after: int) -> list[Event]:
        """The match's events after ``after``, as soon as the store answers (while the match is here)."""
        delay = 0.1
        while self.live.get(lm.match.id) is lm:
            try:
                return await self.store.events(lm.match.id, after)
            except StoreUnavailable:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 2.0)
        return []

    async def _publish(self, match_id: str, events: list[Event]) -> None:
        if not self.bus.shared:
            return  # one process: it has applied them, and no other is listening
        data = encode_events(events)
        live = self.live.get(match_id)
        if live is not None:
            live.published = data
        await self._offer(match_id, data)

    async def _offer(self, match_id: str, data: str) -> None:
        """Publish; if the bus does not take it, keep offering it in the background."""
        try:
            await self.bus.publish(_channel(match_id), data)
        except Exception:
            # The events are durable; keep offering them until the bus takes them
            # (receivers drop what they already have, and fill gaps from the store).
            log.warning("publish failed for %s; retrying in the background", match_id)
            self.spawn(self._republish(match_id, data))

    async def _republish(self, match_id: str, data: str) -> None:
        delay = 0.1
        for _ in range(60):
            await asyncio.sleep(delay)
            try:
                await self.bus.publish(_channel(match_id), data)
                return
            except Exception:
                delay = min(delay * 2, 2.0)
        log.error("gave up publishing to %s; its other processes will catch up on the next event", match_id)

    async def _after(self, lm: LiveMatch, events: list[Event]) -> None:
        """Follow-ups of a decision: a rematch opens its new match here, once."""
        for e in events:
            if isinstance(e, RematchOpened):
                seed = secrets.token_hex(8)
                try:
                    await self.open(lm.match.rematch_log(e.match, seed, self.clock()))
                except Conflict:
                    log.warning("rematch id %s was taken", e.match)

    async def _reload(self, lm: LiveMatch, *, tell_others: bool = True) -> None:
        """Rebuild this process's copy of a match from the store, which lost events applied here.

        Redis restarted from an older snapshot (or its keys removed) holds less
        than it acknowledged. The copy here can no longer be written on (every
        append would conflict: "the match is busy" for good), and the store's
        log is what any process would load, so it is the one to go on from:
        those moves are lost. The connections here are closed so that each
        resumes, as after a dropped line, onto what the store kept. The other
        processes are told to do the same before anything new is published
        here: their copies are as stale, and the events appended from now on
        would look to them like ones they already have (``tell_others`` is
        False when that notice is what brought the news here).
        """
        match_id = lm.match.id
        if tell_others and self.bus.shared:
            await self._offer(match_id, self._reload_notice)
        log.error(
            "match %s: the store's log ends before event %d applied here; reloading", match_id, lm.match.ev
        )
        lm.reloading = True
        try:
            events = await self.store.events(match_id)
        finally:
            lm.reloading = False
        if not events:  # nothing left of it
            self.drop(match_id)
            return
        lm.match = Match.from_events(events, self.grace_ms)  # a prefix of a log that replayed: it replays
        self._schedule(lm)
        for peer in [*lm.seats.values(), *lm.spectators]:
            peer.close(CLOSE_TRY_AGAIN, "the match was reloaded from the store; resume")

    async def _reload_if_the_store_answers(self, lm: LiveMatch, *, tell_others: bool) -> None:
        """``_reload`` where nobody waits on it (a notice on the bus, a catch-up).

        With the store away it gives up: the loss is found again at the next
        catch-up or the next append.
        """
        try:
            await self._reload(lm, tell_others=tell_others)
        except StoreUnavailable:
            log.warning("could not reload %s; it reloads at its next append", lm.match.id)

    async def _locked_reload(self, lm: LiveMatch) -> None:
        """Another process found the store had lost events of this match: reload it here too."""
        async with lm.lock:
            if self.live.get(lm.match.id) is lm:
                await self._reload_if_the_store_answers(lm, tell_others=False)

    async def _catch_up(self, lm: LiveMatch) -> None:
        self._apply(lm, await self.store.events(lm.match.id, lm.match.ev))

    def tick_soon(self, lm: LiveMatch) -> None:
        lm.timer = None  # it has fired
        self.spawn(self._tick(lm))

    async def _tick(self, lm: LiveMatch) -> None:
        try:
            if not await self.execute(lm, lambda m: m.tick(self.clock())):
                self._schedule(lm)  # woke before the deadline (timers may fire early): sleep again
        except Refused:
            log.warning("tick for %s failed; retrying", lm.match.id)
            lm.timer = asyncio.get_running_loop().call_later(1.0, self.tick_soon, lm)
            lm.deadline = None  # the next event reschedules for the real deadline, as before

    # ------------------------------------------------------ apply, fan-out

    def _on_bus(self, match_id: str, data: str | None) -> None:
        lm = self.live.get(match_id)
        if lm is None:
            return
        if data is not None and data == lm.published:
            return  # our own batch, applied before it was published: no need to decode it
        if data is not None and data.startswith(RELOAD):
            if data != self._reload_notice:
                self.spawn(self._locked_reload(lm))
            return
        if lm.reloading:  # the copy is being replaced: read what this was once the new one is in
            self.spawn(self._locked_catch_up(lm))
            return
        events = decode_events(data) if data is not None else []
        if data is None or (events and events[0].ev > lm.match.ev + 1):
            self.spawn(self._locked_catch_up(lm))
            return
        self._apply(lm, events)

    async def _locked_catch_up(self, lm: LiveMatch) -> None:
        """What this process missed (a gap on the bus, or its reconnect), however long the store is away.

        The read starts at the last event applied here: a log without it has
        lost events (Redis back from an older snapshot), and the match is
        reloaded. Pub/sub reconnects after every Redis restart, so this is
        where the processes find out, before anyone writes.
        """
        last = lm.match.ev
        events = await self._read_log(lm, last - 1)
        async with lm.lock:
            if self.live.get(lm.match.id) is not lm:
                return
            if lm.match.ev >= last and not (events and events[0].ev == last):
                await self._reload_if_the_store_answers(lm, tell_others=True)
            else:
                self._apply(lm, events)

    def _apply(self, lm: LiveMatch, events: list[Event]) -> None:
        m = lm.match
        for e in events:
            if e.ev <= m.ev:
                continue  # already applied (our own events, echoed back)
            m.apply(e)
            if self._on_event:
                self._on_event(e)
            if isinstance(e, Connected):
                self._take_over(lm, e)
            elif isinstance(e, Disconnected) and (peer := lm.seats.get(e.seat)) and peer.id == e.conn:
                # Recorded as gone while attached here: another process took this one for dead
                # (its heartbeat lapsed in a stall). Left so, the player would be abandoned mid-play.
                self.spawn(self.record_connection(lm, e.seat, e.conn, connected=True))
            self._fan_out(lm, e)
        self._schedule(lm)

    def _fan_out(self, lm: LiveMatch, e: Event) -> None:
        for audience, message in render(lm.match, e, lambda a: _present(lm, a)):
            if (racer := audience.racer) is not None:
                peer = lm.seats.get(racer)
                if peer is not None:
                    peer.send(message)
                continue
            peers = [peer for seat, peer in lm.seats.items() if audience.has_seat(seat)]
            watchers = audience.has_spectators and bool(lm.spectators)
            if not (peers or watchers):
                continue  # nobody to tell (a board with no spectators): not even encoded
            data = p.encode(message)  # encoded once for every receiver
            for peer in peers:
                peer.send(data)
            if watchers:
                lm.spectators.post(data)

    def _take_over(self, lm: LiveMatch, e: Connected) -> None:
        old = lm.seats.get(e.seat)
        if old is not None and old.id != e.conn:
            del lm.seats[e.seat]
            _evict(old)

    def _schedule(self, lm: LiveMatch) -> None:
        deadline = lm.match.next_deadline()
        if lm.timer is not None and deadline == lm.deadline:
            return  # already set for it (most events, e.g. every move, leave the deadline alone)
        if lm.timer is not None:
            lm.timer.cancel()
            lm.timer = None
        lm.deadline = deadline
        if deadline is not None:
            delay = max(0.0, (deadline - self.clock()) / 1000)
            lm.timer = asyncio.get_running_loop().call_later(delay, self.tick_soon, lm)

    # ------------------------------------------------------------ audience

    def attach_seat(self, lm: LiveMatch, seat: int, peer: Peer) -> None:
        old = lm.seats.get(seat)
        lm.seats[seat] = peer
        if old is not None and old is not peer:
            _evict(old)  # a newer connection of this process: the seat's Connected finds it gone

    def detach(self, lm: LiveMatch, peer: Peer) -> int | None:
        """Forget a peer; return the seat it held, if it still held one."""
        lm.spectators.discard(peer)
        for seat, held in list(lm.seats.items()):
            if held is peer:
                del lm.seats[seat]
                return seat
        return None

    # ------------------------------------------------------------- upkeep

    async def let_go_of_the_dead(self, instance: str) -> None:
        """Record as dropped the connections of server processes that died holding seats.

        A process killed outright never records its connections' ends, so
        without this their seats would stay "connected" and never be
        abandoned. Every process renews its heartbeat in the store; ``instance``
        (this one) asks about the others that hold seats here. Another process
        may record the same drop at once: the second finds the seat's
        connection already changed, and records nothing.
        """
        held = [
            (lm, n, s.conn)
            for lm in list(self.live.values())
            if lm.match.status != "finished"
            for n, s in enumerate(lm.match.seats)
            if s is not None and s.conn is not None and instance_of(s.conn) != instance
        ]
        if not held:
            return
        alive = await self.store.alive({instance_of(conn) for _, _, conn in held})
        for lm, n, conn in held:
            if instance_of(conn) not in alive and self.live.get(lm.match.id) is lm:
                await self.record_connection(lm, n, conn, connected=False)

    async def take_in_orphans(self) -> None:
        """Load the started, undecided matches no live process looks after, so that their timers run.

        Timers (the countdown, the time limit, a dropped racer's grace period)
        run only where a match is loaded. A race whose process died (or,
        embedded, the earlier run) with its racers never coming back would
        wait, undecided, for somebody to touch it: no result, and a ranked
        daily attempt used up but never on the board. The process holding a
        seat's connection has the match loaded; so a running match is taken
        in when none of its seats' connections belongs to a live process: its
        racers were all on dead processes, or are all gone. That also takes
        in, everywhere, a race whose racers all left a live process meanwhile:
        harmless (appends are conditional, so one timer wins) and short (it
        is decided within the grace period, then unloaded like any decided
        match nobody watches). ``let_go_of_the_dead`` then records the dead
        connections as dropped.
        """
        running = await self.store.running()
        orphans = {
            mid: conns
            for mid, conns in running.items()
            if mid not in self.live and mid not in self._unloadable
        }
        alive = await self.store.alive({instance_of(c) for conns in orphans.values() for c in conns})
        for mid, conns in orphans.items():
            if any(instance_of(c) in alive for c in conns):
                continue
            try:
                await self.get(mid)
            except Refused as exc:
                log.warning("could not take in match %s: %s", mid, exc.message)
                if exc.code in (ErrorCode.CORRUPT, ErrorCode.NOT_FOUND):  # no retry mends it
                    self._unloadable.add(mid)

    async def record_connection(self, lm: LiveMatch, seat: int, conn: str, *, connected: bool) -> None:
        """Record a seat's connection as started or ended; if the store cannot take it, keep trying.

        Callers are letting go of a connection or correcting the record of one,
        and nobody waits on the answer. But a drop left unrecorded would keep
        the seat "connected" for good, so a player who never comes back would
        never be abandoned: while the store is unavailable (a full disk, Redis
        away) it is tried again in the background, for as long as the match is
        here. Once the seat's record names another connection, recording it
        changes nothing, so a late retry is harmless.
        """
        if not await self._try_recording(lm, seat, conn, connected):
            self.spawn(self._keep_recording(lm, seat, conn, connected))

    async def _try_recording(self, lm: LiveMatch, seat: int, conn: str, connected: bool) -> bool:
        """False only when the store was unavailable (worth another try)."""
        decide = Match.decide_connect if connected else Match.decide_disconnect
        try:
            await self.execute(lm, lambda m: decide(m, seat, conn, self.clock()))
        except Refused as exc:
            log.warning(
                "could not record %s as %s to %s: %s",
                conn,
                "connected" if connected else "gone",
                lm.match.id,
                exc.message,
            )
            return exc.code is not ErrorCode.UNAVAILABLE
        return True

    async def _keep_recording(self, lm: LiveMatch, seat: int, conn: str, connected: bool) -> None:
        delay = 0.1
        while self.live.get(lm.match.id) is lm:
            await asyncio.sleep(delay)
            if await self._try_recording(lm, seat, conn, connected):
                return
            delay = min(delay * 2, 2.0)

    def sweep(self) -> list[str]:
        """Drop expired matches from memory, telling whoever still watches; return their ids.

        Decided matches left alone are unloaded too, unannounced, since nobody
        is there to tell. Quick games can end by the thousand in the ten
        minutes a decided match stays open, so without this, those decided
        matches would hold most of the memory (docs/benchmarks.md).
        """
        gone = [mid for mid, lm in self.live.items() if self.expired(lm.match)]
        for mid in gone:
            self.drop(mid)
        now = self.clock()
        for mid in [mid for mid, lm in self.live.items() if _left_alone(lm, now)]:
            self.drop(mid)
        return gone

    def drop(self, match_id: str) -> None:
        lm = self.live.pop(match_id, None)
        if lm is None:
            return
        if lm.timer is not None:
            lm.timer.cancel()
        gone = p.encode(p.Error(code=ErrorCode.NOT_FOUND, message=f"match {match_id} has expired"))
        for peer in lm.seats.values():
            peer.send(gone)
        lm.seats.clear()
        lm.spectators.post(gone)  # after whatever they still have to read
        self.spawn(self.bus.unsubscribe(_channel(match_id)))

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` in the background, for as long as the hub runs (``close`` cancels it)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for mid in list(self.live):
            lm = self.live.pop(mid)
            if lm.timer is not None:
                lm.timer.cancel()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def connection_id(instance: str, n: object) -> str:
    """A connection's id names its server process: ``let_go_of_the_dead`` reads it back."""
    return f"{instance}-{n}"


def instance_of(connection: str) -> str:
    return connection.partition("-")[0]


def _evict(peer: Peer) -> None:
    peer.send(p.Error(code=ErrorCode.TAKEN_OVER, message="this seat was taken over by a newer connection"))
    peer.close(1000, "seat taken over")


def _left_alone(lm: LiveMatch, now: int) -> bool:
    m = lm.match
    return (
        m.status == "finished"
        and now > m.decided_at + UNLOAD_DECIDED_AFTER_MS
        and not lm.seats
        and not lm.spectators
    )


def _present(lm: LiveMatch, audience: Audience) -> bool:
    """Whether this process has anyone in ``audience`` (the racers' messages are cheap: always)."""
    if audience.racer is not None:
        return audience.racer in lm.seats
    if audience.kind == "spectators":
        return bool(lm.spectators)
    return True


def _channel(match_id: str) -> str:
    return f"grip:match:{match_id}"
