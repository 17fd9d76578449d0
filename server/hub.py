"""The asyncio shell around matches: it only moves messages.

For every command: decide (pure, ``server/match/``), append to the store
(durable, conditional on the last ``ev``), apply and fan the renderings out
to this process's connections, then publish on the bus for the others. Events other processes
appended arrive over the bus and take the same apply path; a gap in ``ev``
is filled from the store, so every connection sees every event once, in
order, whichever process decided it. When the bus or the store falter,
``server/recovery.py`` mends the copies; the timers of the matches here run
from this hub.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import Any, Protocol

from . import protocol as p
from .bus import Bus
from .errors import Conflict, ErrorCode, Refused, StoreUnavailable
from .live import LiveMatch, Peer, channel
from .match import DEFAULT_GRACE_MS, Duplicate, Event, Match, decode_events, encode_events
from .match.events import Connected, Disconnected, Moved, Opened, RematchOpened, holds_at_its_number, with_ev
from .match.render import render
from .protocol import now_ms
from .recovery import RELOAD, TELL, Recovery
from .retry import retry
from .store import Store

log = logging.getLogger(__name__)

LOBBY_TTL_MS = 30 * 60_000
FINISHED_TTL_MS = 10 * 60_000
#: A decided match that nobody in this process is attached to (no seat, no
#: spectator) leaves memory this long after its decision. If someone asks for
#: it before it expires, it is read back from the store.
UNLOAD_DECIDED_AFTER_MS = 60_000
APPEND_ATTEMPTS = 8


class Follower(Protocol):
    """A part of the process that follows matches: what quick races and the list of live races do."""

    def applied(self, lm: LiveMatch, e: Event) -> None:
        """``e`` was applied to this process's copy of its match (every process holding it)."""

    async def appended(self, lm: LiveMatch, events: list[Event]) -> None:
        """This process appended ``events`` (and applied and published them): once, where decided.

        Not told of a batch of moves alone (``Hub._after``): no follower does
        anything after a play, and awaiting each of them cost every move a
        coroutine apiece. A move that ends a game comes with its ``Ended``.
        """


def new_code() -> str:
    return "".join(secrets.choice(p.CODE_ALPHABET) for _ in range(p.CODE_LENGTH))


def new_token() -> str:
    return secrets.token_urlsafe(24)  # 192 bits


class Hub:
    def __init__(
        self,
        store: Store,
        bus: Bus,
        *,
        clock: Callable[[], int] = now_ms,
        grace_ms: int = DEFAULT_GRACE_MS,
    ) -> None:
        self.store = store
        self.bus = bus
        self.clock = clock
        self.grace_ms = grace_ms
        self.live: dict[str, LiveMatch] = {}
        self._loading: dict[str, asyncio.Future[LiveMatch]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.followers: list[Follower] = []
        self.recovery = Recovery(self)
        self.tick_failures = 0  # ticks that raised something unexpected (``/metrics``)
        self._telling = f"{TELL}{secrets.token_hex(4)} "  # this process's own, to skip its echo

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
        """The match folded from its log, unless its result says it has expired.

        Its result is read first: a match decided long ago keeps its log in the
        store, and folding a 2,000-play race through the engine (60 ms) only to
        drop it as expired made every ``watch`` of an old code that dear.
        """
        result = await self.store.result(match_id)
        if result is not None and self._past_ttl(result.decided_at):
            raise Refused(ErrorCode.NOT_FOUND, f"match {match_id} has expired")
        await self.bus.subscribe(channel(match_id), lambda data: self._on_bus(match_id, data))
        try:
            events = await self.store.events(match_id)
            match = Match.from_events(events, self.grace_ms) if events else None
        except StoreUnavailable:
            await self.bus.unsubscribe(channel(match_id))
            raise
        except ValueError as exc:  # unreadable JSON, a gap, a move the engine refuses: no retry mends it
            await self.bus.unsubscribe(channel(match_id))
            log.error("match %s: its stored log does not replay: %s", match_id, exc)
            raise Refused(ErrorCode.CORRUPT, f"the stored log of match {match_id} does not replay") from None
        if match is None:
            await self.bus.unsubscribe(channel(match_id))
            raise Refused(ErrorCode.NOT_FOUND, f"no match {match_id}")
        opened = self.live.get(match_id)
        if opened is not None:  # ``open`` registered it during this read: keep the one LiveMatch
            return opened
        lm = LiveMatch(match)
        self.live[match_id] = lm
        self.schedule(lm)
        return lm

    def expired(self, m: Match) -> bool:
        now = self.clock()
        if m.status == "lobby":
            return now > m.created_at + LOBBY_TTL_MS
        if m.status == "finished":
            return self._past_ttl(m.decided_at)
        return False

    def _past_ttl(self, decided_at: int) -> bool:
        """Whether a match decided at ``decided_at`` has been dropped by now (``FINISHED_TTL_MS``)."""
        return self.clock() > decided_at + FINISHED_TTL_MS

    # ------------------------------------------------------------ commands

    async def open(self, events: list[Event]) -> LiveMatch:
        """Start a new match log (create, rematch); Conflict if the id is taken."""
        opened = events[0]
        assert isinstance(opened, Opened)
        await self._append(opened.match, 0, events)
        await self.bus.subscribe(channel(opened.match), lambda data: self._on_bus(opened.match, data))
        lm = self.live.get(opened.match)
        if lm is None:
            lm = self.live[opened.match] = LiveMatch(Match(opened, self.grace_ms))
        # else: loaded meanwhile (a rematch's seat resumed at once, a bot's): one LiveMatch, that one
        self.apply(lm, events[1:])
        return lm

    async def execute(
        self, lm: LiveMatch, decide: Callable[[Match], list[Event] | Duplicate]
    ) -> list[Event] | Duplicate:
        """Decide, make durable, apply here, publish: the one path every change takes."""
        async with lm.lock:
            for _ in range(APPEND_ATTEMPTS):
                decision = decide(lm.match)
                if isinstance(decision, Duplicate):
                    await self.store.confirm(lm.match.id)  # its first append may be the one unanswered
                    return decision
                if not decision:
                    return decision
                expected = lm.match.ev
                await self._open_rematches(lm, decision)
                try:
                    shift = await self._append(lm.match.id, expected, decision)
                except Conflict as exc:
                    # The log moved on and the bus has not brought the news yet, or it lost events
                    # applied here (then, or if it holds another history, the copy is reloaded).
                    if (exc.behind or lm.match.ev == expected) and not await self.recovery.catch_up(lm):
                        raise Refused(
                            ErrorCode.UNAVAILABLE,
                            "the store lost this match's latest events; resume to go on from what it kept",
                        ) from None
                    continue
                except Refused:  # no answer: the write may land all the same
                    self.recovery.settle(lm)
                    raise
                if shift:  # placed after others' moves we had not seen: take them in first
                    decision = [with_ev(e, e.ev + shift) for e in decision]
                    if lm.match.ev < decision[0].ev - 1:  # unless the bus brought them meanwhile
                        await self.recovery.catch_up(lm)
                self.apply(lm, decision)
                if self.bus.shared:
                    await self.publish(lm.match.id, decision)
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

    async def publish(self, match_id: str, events: list[Event]) -> None:
        """Tell the other processes (none to tell when the bus is not shared)."""
        if not self.bus.shared:
            return  # one process: it has applied them, and no other is listening
        data = encode_events(events)
        live = self.live.get(match_id)
        if live is not None:
            live.published = data
        await self.recovery.offer(match_id, data)

    async def tell(self, lm: LiveMatch, message: p.Message) -> None:
        """Tell everyone in a match, here and in the other processes, something its log does not hold."""
        self._tell_here(lm, p.encode(message))
        if self.bus.shared:
            await self.recovery.offer(lm.match.id, self._telling + p.encode(message).decode())

    def _tell_here(self, lm: LiveMatch, data: bytes) -> None:
        for peer in lm.seats.values():
            peer.send(data)
        if lm.spectators:
            lm.spectators.post(data)

    async def _open_rematches(self, lm: LiveMatch, events: list[Event]) -> None:
        """A rematch decided: open its new match before the decision is written.

        ``rematched`` sends every racer (here, and elsewhere) to resume the new
        code at once, and a process that reads the old log (a catch-up after a
        gap, a conflict, a settle) tells its racers as soon as it finds
        ``rematch_opened`` there: with the new log written after it, a resume
        in between found no such match (``not_found``). Opened first, the
        announcement always names a match that exists. If the open fails, so
        does the rematch (``unavailable``: the client asks again, and a new code
        is drawn); a new match opened for a decision that then lost its append
        is a lobby nobody knows of, forgotten with the other lobbies.
        """
        for e in events:
            if isinstance(e, RematchOpened):
                seed = secrets.token_hex(8)
                try:
                    await self.open(lm.match.rematch_log(e.match, seed, self.clock()))
                except Conflict:
                    log.warning("rematch id %s was taken", e.match)
                    raise Refused(ErrorCode.UNAVAILABLE, "the rematch's code was taken; ask again") from None

    async def _after(self, lm: LiveMatch, events: list[Event]) -> None:
        """Follow-ups of a decision: the followers'."""
        if _plays_only(events):
            return  # nothing follows a play (``Follower.appended``)
        for follower in self.followers:
            await follower.appended(lm, events)

    def tick_soon(self, lm: LiveMatch) -> None:
        lm.timer = None  # it has fired
        self.spawn(self._tick(lm))

    async def _tick(self, lm: LiveMatch) -> None:
        try:
            if not await self.execute(lm, lambda m: m.tick(self.clock())):
                self.schedule(lm)  # woke before the deadline (timers may fire early): sleep again
        except Exception as exc:  # whatever it was, the match's clock must not stop for good
            if isinstance(exc, Refused):
                log.warning("tick for %s failed; retrying", lm.match.id)
            else:
                self.tick_failures += 1
                log.exception("tick for %s raised; retrying", lm.match.id)
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
            if data != self.recovery.reload_notice:
                self.recovery.catch_up_soon(lm, tell_others=False)
            return
        if data is not None and data.startswith(TELL):
            if not data.startswith(self._telling):  # another process's: ours went out here already
                self._tell_here(lm, data.split(" ", 2)[2].encode())
            return
        if lm.reloading:  # the copy is being replaced: read what this was once the new one is in
            self.recovery.catch_up_soon(lm)
            return
        events = decode_events(data) if data is not None else []
        if (
            data is None
            or (events and events[0].ev > lm.match.ev + 1)
            or holds_at_its_number(events, lm.match.last_event) is False
        ):
            self.recovery.catch_up_soon(lm)
            return
        self.apply(lm, events)

    def apply(self, lm: LiveMatch, events: list[Event]) -> None:
        """Fold events in (those not applied yet), tell the peers here, set the timer (a move changes no deadline)."""
        m = lm.match
        for e in events:
            if e.ev <= m.ev:
                continue  # already applied (our own events, echoed back)
            m.apply(e)
            for follower in self.followers:
                follower.applied(lm, e)
            if isinstance(e, Connected):
                self._take_over(lm, e)
            elif isinstance(e, Disconnected) and (peer := lm.seats.get(e.seat)) and peer.id == e.conn:
                # Recorded as gone while attached here: another process took this one for dead
                # (its heartbeat lapsed in a stall). Left so, the player would be abandoned mid-play.
                self.spawn(self.record_connection(lm, e.seat, e.conn, connected=True))
            self._fan_out(lm, e)
        if not _plays_only(events):
            self.schedule(lm)

    def _fan_out(self, lm: LiveMatch, e: Event) -> None:
        plan = lm.fan_out()
        for audience, message in render(lm.match, e, plan.present):
            plan.deliver(audience, message)

    def _take_over(self, lm: LiveMatch, e: Connected) -> None:
        old = lm.seats.get(e.seat)
        if old is not None and old.id != e.conn:
            lm.unseat(e.seat)
            _evict(old)

    def schedule(self, lm: LiveMatch) -> None:
        """Set the match's timer for its next deadline (``Match.next_deadline``)."""
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
        old = lm.seat(seat, peer)
        if old is not None and old is not peer:
            _evict(old)  # a newer connection of this process: the seat's Connected finds it gone

    def detach(self, lm: LiveMatch, peer: Peer) -> int | None:
        """Forget a peer; return the seat it held, if it still held one."""
        lm.spectators.discard(peer)
        for seat, held in list(lm.seats.items()):
            if held is peer:
                lm.unseat(seat)
                return seat
        return None

    # ------------------------------------------------------------- upkeep

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
        record = partial(self._record_connection, lm, seat, conn, connected)
        try:
            await record()
        except Refused:  # the store did not answer
            self.spawn(self._retry_recording(record, lm))

    async def _record_connection(self, lm: LiveMatch, seat: int, conn: str, connected: bool) -> None:
        """Refused only when the store was unavailable (worth another try)."""
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
            if exc.code is ErrorCode.UNAVAILABLE:
                raise

    async def _retry_recording(self, record: Callable[[], Awaitable[None]], lm: LiveMatch) -> None:
        await retry(record, retry_on=Refused, keep_going=lambda: self.holds(lm), pause_first=True)

    def holds(self, lm: LiveMatch) -> bool:
        """Whether ``lm`` is still this process's copy of its match (not dropped, not replaced)."""
        return self.live.get(lm.match.id) is lm

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
        for mid in [mid for mid, lm in self.live.items() if _idle_decided(lm, now) or self._only_watched(lm)]:
            self.drop(mid)
        return gone

    def _only_watched(self, lm: LiveMatch) -> bool:
        """Whether ``lm`` was loaded here only for spectators, gone since, and is played elsewhere.

        With a shared bus the racers' processes hold it and run its timers;
        kept, this process followed every move of every race a connection had
        watched in turn, to its end. (Not at once when the last spectator
        leaves: two races watched by turns would be read back every time.)
        """
        m = lm.match
        return (
            self.bus.shared
            and not lm.runs_here
            and not lm.seats
            and not lm.spectators
            and m.status != "finished"
        )

    def drop(self, match_id: str) -> None:
        lm = self.live.pop(match_id, None)
        if lm is None:
            return
        if lm.timer is not None:
            lm.timer.cancel()
        gone = p.encode(p.Error(code=ErrorCode.NOT_FOUND, message=f"match {match_id} has expired"))
        for seat, peer in list(lm.seats.items()):
            peer.send(gone)
            lm.unseat(seat)
        lm.spectators.post(gone)  # after whatever they still have to read
        self.spawn(self.bus.unsubscribe(channel(match_id)))

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


def _evict(peer: Peer) -> None:
    peer.send(p.Error(code=ErrorCode.TAKEN_OVER, message="this seat was taken over by a newer connection"))
    peer.close(1000, "seat taken over")


def _idle_decided(lm: LiveMatch, now: int) -> bool:
    """Whether nobody here is in ``lm`` and nothing will happen in it: decided a minute ago, or called off.

    A lobby called off while someone sat in it (its creator made another, a
    quick race's racer was not ready) was held for ``LOBBY_TTL_MS`` after they
    left: two connections creating and joining lobbies held each half an hour.
    """
    m = lm.match
    if lm.seats or lm.spectators:
        return False
    if m.status == "lobby":
        return m.called_off is not None
    return m.status == "finished" and now > m.decided_at + UNLOAD_DECIDED_AFTER_MS


def _plays_only(events: list[Event]) -> bool:
    """Whether ``events`` are moves alone: nearly every batch, and one that changes no deadline and
    concerns no follower."""
    return all(type(e) is Moved for e in events)
