"""Quick races: the public queue's shell. Its rules are ``server/matchmaking.py`` (who races whom).

Places are in the store (one per player: ``Store.queue_*``), so players on
different processes are paired. One process at a time pairs (it holds the
store's lease, renewed every round; if it dies, another takes over within
``LEASE_MS``): it reads the places of the ``Settings.quick_window``
longest waiting (no more, whatever the queue holds: a round's cost is
bounded, not one join's cost times the queue), starts a race for each pair (a match
opened with both seats taken, rated, on a fresh deal), takes both places
out in one atomic step, and tells every process on the bus. The process
holding a paired player's connection seats it; the seat's token was made
by that connection when it joined and only its hash was stored, so no
secret crosses the store or the bus.

A place past the window waits for a round in which it is in it: the
window's places pair among themselves, each with anyone of its pool within
30 s of waiting (``matchmaking.gap``), so the window moves on but for one
place a pool at most (7 variants, 3 clocks), and nobody waits much past
30 s for the queue's length alone.

A notice lost on the bus is made up for: every ``RECONCILE_EVERY`` rounds a
process compares its waiting connections with their places in the store (a
place gone because its player was paired is found through ``Store.queue_paired``).

A quick race's racers must be ready within ``READY_WITHIN_MS``, or it is
called off (``Match.tick``); the process holding a racer who was ready puts
them back in the queue with their old time, ahead of everyone who came
later, and the one who was not may not join again for ``NO_SHOW_BAR_MS``.

Each quick race is a match opened, counted against each racer's allowance of
matches opened (``Holdings.opening``: per identity and per address, as a
``create``). It is counted when the player joins, in the process holding
their connection, which knows their address: the pairing process may be
another, and knows neither the address nor that process's allowances. A
player past their allowance is refused (``rate_limited``, with the seconds
to wait) and gets no place, so no round can pair them: whoever would have
raced them waits on and is paired with someone else. A place that leaves the
queue unpaired (cancelled, its connection closed, taken over by another
connection or replaced by a new ``quick``) gives its count back: joining and
cancelling opens nothing. Put back after a race called off, a ready racer
is not counted again (the race they were counted for never took place).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from dataclasses import dataclass
from typing import Protocol, cast

from . import matchmaking
from . import protocol as p
from .errors import Conflict, ErrorCode, Refused, StoreUnavailable
from .holdings import Holdings
from .hub import new_code, new_token
from .live import LiveMatch
from .liveness import instance_of
from .match import Event, Match
from .match.events import CalledOff, CountdownStarted
from .match.state import QuickRacer, hash_token
from .retry import retry
from .seating import Client, Seating, take_seat, unbind
from .settings import Settings
from .store import QueueEntry, Store, shown_rating
from .text import clean_name

log = logging.getLogger(__name__)

CHANNEL = "grip:quick:{quick}"  # the queue's hash tag: on a cluster, the master holding the queue
LEASE_MS = 3_000  # the pairing process's lease: another takes over this long after it died
RECONCILE_EVERY = 4  # rounds between two comparisons of the waiting connections with the store
RECONCILE_ALONE_S = 0.5  # a process that never pairs: how often it counts a round
NO_SHOW_BAR_MS = 60_000
#: The rounds a join brings forward come at most this often, as a share of ``quick_pair_every_s``:
#: a round reads a window of the queue, and a ``quick`` and a ``quick_cancel`` again and again (15 pairs
#: a second a connection) each brought one on.
ROUND_GAP_SHARE = 0.2


class Server(Seating, Protocol):
    """What the queue uses of its server process (``App``): given, not imported, as the
    handlers' ``Context`` holds the queue."""

    settings: Settings
    store: Store
    instance: str
    holdings: Holdings


@dataclass
class Waiting:
    """A connection here that waits in the queue, with the token of the seat it will get.

    ``charged``: the ``Holdings`` keys its place was counted under as a match
    opened (none when it was put back after a race called off): given back if
    it leaves unpaired.
    """

    client: Client
    token: str
    place: QueueEntry
    charged: list[str]


class QuickRaces:
    def __init__(self, ctx: Server) -> None:
        self._ctx = ctx
        self.waiting: dict[str, Waiting] = {}  # by connection id
        self._wake = asyncio.Event()

    # ------------------------------------------------------------- the player

    async def join(self, client: Client, msg: p.QuickRace, keys: list[str]) -> None:
        """Give the client a place, counted as a match opened under ``keys`` (``Holdings.keys``)."""
        ctx = self._ctx
        if client.player is None:
            raise Refused(ErrorCode.BAD_KEY, "say hello first: quick races are rated")
        player = client.player.id
        await self._check_free(player)
        rating = await shown_rating(ctx.store, player, msg.variant)
        token = new_token()
        place = QueueEntry(
            player=player,
            name=clean_name(msg.name or client.player.name),
            conn=client.id,
            variant=msg.variant,
            time_limit_s=msg.time_limit_s,
            rating=rating,
            since=ctx.clock(),
            token_hash=hash_token(token),
        )
        await ctx.holdings.opening(keys)
        await self._enter(client, token, place, again=False, charged=keys)

    async def _enter(
        self, client: Client, token: str, place: QueueEntry, *, again: bool, charged: list[str]
    ) -> None:
        """Wait here in the place the store gives, counted under ``charged``: given back if the store
        gives none, and for the place this connection held before, if this one replaced it."""
        try:
            stored, previous = await self._ctx.store.queue_join(place)
        except BaseException:
            self._ctx.hub.spawn(self._ctx.holdings.unopened(charged))  # no place: nothing to count
            raise
        replaced = self.waiting.get(client.id)
        self.waiting[client.id] = Waiting(client, token, stored, charged)
        if replaced is not None and previous is not None and previous.conn == client.id:
            self._ctx.hub.spawn(self._ctx.holdings.unopened(replaced.charged))  # replaced: never paired
        client.send(
            p.Queued(
                variant=stored.variant,
                time_limit_s=stored.time_limit_s,
                since=stored.since,
                rating=stored.rating,
                again=again,
            )
        )
        if previous is not None and previous.conn != client.id:
            await self._notify({"kind": "moved", "conn": previous.conn})
        await self._notify({"kind": "joined"})

    async def _check_free(self, player: str) -> None:
        """Refused while the player's game in their last quick race goes on, or just after they failed to
        show up for it. A game over (resigned, finished) no longer counts, the race decided or not: a
        resigner races again while the other plays on, but nobody holds two quick seats still playing."""
        ctx = self._ctx
        code = await ctx.store.queue_paired(player)
        if code is None:
            return
        try:
            m = (await ctx.hub.get(code)).match
        except Refused:
            return  # expired, gone: nothing holds them
        seat = next((n for n, s in enumerate(m.seats) if s is not None and s.player == player), None)
        if m.called_off is not None:
            wait = m.called_off.at + NO_SHOW_BAR_MS - ctx.clock()
            if seat in m.called_off.absent and wait > 0:
                raise Refused(
                    ErrorCode.NOT_ALLOWED,
                    f"you were not ready for your last quick race: join again in {wait // 1000 + 1} s",
                )
        elif m.status != "finished" and not m.done_for(player):
            raise Refused(ErrorCode.NOT_ALLOWED, f"you have a quick race going: {code}")

    async def cancel(self, client: Client) -> None:
        await self.leave(client)
        client.send(p.Unqueued(reason="cancelled"))

    async def leave(self, client: Client) -> None:
        """The connection waits no more (it asked, or it closed); with the store away, its place
        is taken out once it answers (a place left in would be paired, and called off)."""
        w = self.waiting.pop(client.id, None)
        if w is None:
            return
        store, player = self._ctx.store, w.place.player
        try:
            left = await store.queue_leave(player, client.id)
        except StoreUnavailable:
            self._ctx.hub.spawn(self._leave_later(w))
            return
        if left:  # not paired meanwhile
            await self._ctx.holdings.unopened(w.charged)

    async def _leave_later(self, w: Waiting) -> None:
        store, player, conn = self._ctx.store, w.place.player, w.client.id
        left = await retry(
            lambda: store.queue_leave(player, conn), retry_on=StoreUnavailable, tries=60, pause_first=True
        )
        if left:
            await self._ctx.holdings.unopened(w.charged)

    # ----------------------------------------------------------------- pairing

    async def run(self) -> None:
        """Pair players while this process holds the lease; check the waiting connections here.

        A round comes every ``Settings.quick_pair_every_s``, or sooner when
        someone joins, but not within ``ROUND_GAP_SHARE`` of that after the
        last: joins coming together share a round. With 0, this process never
        pairs (it still seats and checks).
        """
        store, instance = self._ctx.store, self._ctx.instance
        every = self._ctx.settings.quick_pair_every_s
        loop = asyncio.get_running_loop()
        rounds, last = 0, loop.time()
        while True:
            try:
                async with asyncio.timeout(every or RECONCILE_ALONE_S):
                    await self._wake.wait()
            except TimeoutError:
                pass
            rest = last + every * ROUND_GAP_SHARE - loop.time()
            if rest > 0:
                await asyncio.sleep(rest)
            self._wake.clear()
            last = loop.time()
            rounds += 1
            try:
                if every and await store.queue_lease(instance, LEASE_MS):
                    await self.pair_now()
                if self.waiting and rounds % RECONCILE_EVERY == 0:
                    await self.reconcile()
            except (StoreUnavailable, Refused) as exc:
                log.warning("quick races: this round did not go through: %s", exc)

    def poke(self) -> None:
        """Look at the queue again soon (someone joined)."""
        self._wake.set()

    async def pair_now(self) -> None:
        """One round: start a race for every pair the queue holds now."""
        ctx = self._ctx
        places = await self._living(await ctx.store.queue_entries(ctx.settings.quick_window))
        for a, b in matchmaking.pair(places, ctx.clock()):
            await self._start(a, b)

    async def _living(self, places: list[QueueEntry]) -> list[QueueEntry]:
        """The places whose connection's process is alive (a dead one's are taken out)."""
        store, instance = self._ctx.store, self._ctx.instance
        others = {instance_of(e.conn) for e in places} - {instance}
        alive = await store.alive(others) | {instance}
        living = []
        for e in places:
            if instance_of(e.conn) in alive:
                living.append(e)
            else:
                await store.queue_leave(e.player, e.conn)
        return living

    async def _start(self, a: QueueEntry, b: QueueEntry) -> None:
        """Open the race, then take both places: if one changed meanwhile, the race is left to be called off."""
        ctx = self._ctx
        code = new_code()
        racers = [QuickRacer(e.player, e.name, e.rating, e.since, e.token_hash) for e in (a, b)]
        events = Match.open_quick(
            code,
            variant=a.variant,
            seed=secrets.token_hex(8),
            time_limit_s=a.time_limit_s,
            racers=racers,
            now=ctx.clock(),
        )
        try:
            await ctx.hub.open(events)
        except Conflict:
            return  # the code was taken: the next round pairs them
        if not await ctx.store.queue_claim((a, b), code):
            return  # nobody is told: its ready time calls it off, with nobody to put back
        seats = [{"player": e.player, "conn": e.conn, "seat": n} for n, e in enumerate((a, b))]
        await self._notify({"kind": "paired", "match": code, "seats": seats})

    # ----------------------------------------------------------------- notices

    async def subscribe(self) -> None:
        if self._ctx.hub.bus.shared:
            await self._ctx.hub.bus.subscribe(CHANNEL, self._on_bus)

    async def _notify(self, notice: dict[str, object]) -> None:
        """Act on a notice here, and tell the other processes."""
        self._on_notice(notice)
        bus = self._ctx.hub.bus
        if bus.shared:
            try:
                await bus.publish(CHANNEL, json.dumps(notice))
            except Exception:  # a lost notice is found by the next reconcile
                log.warning("quick races: a notice was not published")

    def _on_bus(self, data: str | None) -> None:
        if data is not None:
            self._on_notice(json.loads(data))

    def _on_notice(self, notice: dict[str, object]) -> None:
        kind = notice["kind"]
        if kind == "joined":
            self.poke()
        elif kind == "moved":
            w = self.waiting.pop(str(notice["conn"]), None)
            if w is not None:
                self._ctx.hub.spawn(self._ctx.holdings.unopened(w.charged))  # taken over, unpaired
                w.client.send(p.Unqueued(reason="elsewhere"))
        elif kind == "paired":
            seats = notice["seats"]
            assert isinstance(seats, list)
            for s in seats:
                w = self.waiting.get(s["conn"])
                if w is not None and w.place.player == s["player"]:
                    self._ctx.hub.spawn(self._seat(w, str(notice["match"]), int(s["seat"])))

    async def _seat(self, w: Waiting, code: str, seat: int) -> None:
        """Seat a paired connection here (``paired``), once."""
        if self.waiting.get(w.client.id) is not w:
            return  # seated already (a notice and a reconcile), or gone
        del self.waiting[w.client.id]
        ctx = self._ctx
        try:
            lm = await ctx.hub.get(code)
            w.client.send(p.Seated(type="paired", match=code, seat=seat, token=w.token))
            await take_seat(ctx, w.client, lm, seat)
        except Refused as exc:
            w.client.send(p.Error(code=exc.code, message=exc.message))

    async def reconcile(self) -> None:
        """Make up for lost notices: each waiting connection here as the store has it."""
        ctx = self._ctx
        places = await ctx.store.queue_places([w.place.player for w in self.waiting.values()])
        for conn, w in list(self.waiting.items()):
            place = places.get(w.place.player)
            if place is not None and place.conn == conn:
                continue
            if place is not None:  # a newer connection of theirs holds the place
                self._on_notice({"kind": "moved", "conn": conn})
                continue
            code = await ctx.store.queue_paired(w.place.player)
            seat = await self._seat_for(code, w) if code is not None else None
            if code is not None and seat is not None:
                await self._seat(w, code, seat)
            elif self.waiting.get(conn) is w:  # taken out without a race (its process was taken for dead)
                await self._enter(w.client, w.token, w.place, again=False, charged=w.charged)

    async def _seat_for(self, code: str, w: Waiting) -> int | None:
        """The seat of ``code`` that ``w``'s token holds, if any."""
        try:
            m = (await self._ctx.hub.get(code)).match
        except Refused:
            return None
        return next(
            (n for n, s in enumerate(m.seats) if s is not None and s.token_hash == w.place.token_hash), None
        )

    # ------------------------------------------------------ a Follower of matches

    def applied(self, lm: LiveMatch, e: Event) -> None:
        """A quick race called off: its ready racers whose connection is here go back in the queue.

        A quick race counting down where nobody here races or watches was opened
        here by the pairing: the racers' processes hold it (and run its timers),
        so this one lets it go, or the pairing process would follow every move of
        every quick race.
        """
        if isinstance(e, CountdownStarted) and lm.match.ready_by is not None and not lm.seats:
            self._ctx.hub.spawn(self._let_go(lm))
        if not isinstance(e, CalledOff):
            return
        for n, s in enumerate(lm.match.seats):
            client = lm.seats.get(n)
            if s is None or n in e.absent or s.queued_since is None or client is None:
                continue
            self._ctx.hub.spawn(self._requeue(lm, n, cast("Client", client)))

    async def appended(self, lm: LiveMatch, events: list[Event]) -> None:
        pass

    async def _let_go(self, lm: LiveMatch) -> None:
        hub = self._ctx.hub
        if hub.holds(lm) and not lm.seats and not lm.spectators:
            hub.drop(lm.match.id)

    async def _requeue(self, lm: LiveMatch, n: int, waiting: Client) -> None:
        """Back in the queue with the place's old time (a racer's peer in a match is a ``Client``)."""
        ctx = self._ctx
        m, s = lm.match, lm.match.seat(n)
        if waiting.live is not lm or s.player is None or s.queued_since is None:
            return
        await unbind(ctx, waiting)
        token = new_token()
        place = QueueEntry(
            player=s.player,
            name=s.name,
            conn=waiting.id,
            variant=m.variant,
            time_limit_s=m.time_limit_s,
            rating=s.rating if s.rating is not None else await shown_rating(ctx.store, s.player, m.variant),
            since=s.queued_since,
            token_hash=hash_token(token),
        )
        try:
            await self._enter(waiting, token, place, again=True, charged=[])
        except StoreUnavailable:
            waiting.send(p.Error(code=ErrorCode.UNAVAILABLE, message="could not put you back in the queue"))
