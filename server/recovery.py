"""Recovery: how a process's copy of a match gets back in step with the log.

The command path (``server/hub.py``) assumes the bus delivers and the store
answers. When they do not, this mends it, always by reading the match's log
again: a write that got no answer is settled, a gap on the bus is caught up,
a publish the bus refused is offered again, and a copy ahead of a store that
lost events (Redis back from an older snapshot) is reloaded, everywhere.
docs/architecture.md ("Where this goes beyond the design card") tells why
each is needed.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Coroutine
from typing import Any, Protocol

from .bus import Bus
from .errors import StoreUnavailable
from .live import CLOSE_TRY_AGAIN, LiveMatch, channel
from .match import Event, Match
from .match.events import holds_at_its_number
from .retry import retry
from .store import Store

log = logging.getLogger(__name__)

RELOAD = "reload "  # on a match's channel instead of events: its store lost events, load it again
TELL = "tell "  # on a match's channel instead of events: a message for everyone in it (``Hub.tell``)
SETTLE_AGAIN_S = 3.0  # a write a frozen Redis had queued can land after the first look: look again
PUBLISH_TRIES = 60  # a batch the bus refused is offered this many times (about two minutes)


class Host(Protocol):
    """What recovery needs of the hub: its backends, and a way to apply what it reads."""

    store: Store
    bus: Bus
    grace_ms: int

    def holds(self, lm: LiveMatch) -> bool:
        """Whether ``lm`` is still this process's copy of its match."""

    def apply(self, lm: LiveMatch, events: list[Event]) -> None: ...

    async def publish(self, match_id: str, events: list[Event]) -> None: ...

    def schedule(self, lm: LiveMatch) -> None: ...

    def drop(self, match_id: str) -> None: ...

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None: ...


class Recovery:
    def __init__(self, host: Host) -> None:
        self._host = host
        self.reload_notice = RELOAD + secrets.token_hex(4)  # this process's own, to skip its echo

    async def offer(self, match_id: str, data: str) -> None:
        """Publish; if the bus does not take it, keep offering it in the background.

        The events are durable already: receivers drop what they have, and
        fill gaps from the store.
        """
        bus = self._host.bus
        try:
            await bus.publish(channel(match_id), data)
        except Exception:
            log.warning("publish failed for %s; retrying in the background", match_id)
            self._host.spawn(self._republish(match_id, data))

    async def _republish(self, match_id: str, data: str) -> None:
        async def publish() -> bool:
            await self._host.bus.publish(channel(match_id), data)
            return True

        if not await retry(publish, retry_on=Exception, tries=PUBLISH_TRIES, pause_first=True):
            log.error(
                "gave up publishing to %s; its other processes will catch up on the next event", match_id
            )

    def settle(self, lm: LiveMatch) -> None:
        """Make an append that got no answer known everywhere, should it land after all.

        A timed-out write may still be carried out (Redis runs what it had
        queued once it is back), and then no process would hear of it: its
        writer reported a failure and published nothing. So read the log
        again, once the store answers and once more a little later; apply what
        is missing here, and publish it for the others (receivers drop what
        they already have). A write that counts only once replicated
        (``--redis-replicas``) is shown once that is confirmed: applying it
        here acknowledges it to its mover. The read starts at the copy's last
        event as it stood when the write failed, as a catch-up's does: a log
        without it, or with another event there, is another history, and the
        copy is reloaded from it rather than folded onto it.
        """
        self._host.spawn(self._settle(lm, lm.match, lm.match.last_event))

    async def _settle(self, lm: LiveMatch, copy: Match, seen: Event) -> None:
        await self._check(lm, copy, seen, settling=True)
        await asyncio.sleep(SETTLE_AGAIN_S)
        await self._check(lm, lm.match, lm.match.last_event, settling=True)

    async def _confirmed(self, lm: LiveMatch) -> bool:
        """Whether the log as read is as safe as an acknowledged append, asking while the match is here."""

        async def confirm() -> bool:
            await self._host.store.confirm(lm.match.id)
            return True

        return bool(await retry(confirm, retry_on=StoreUnavailable, keep_going=lambda: self._host.holds(lm)))

    async def _read_log(self, lm: LiveMatch, after: int) -> list[Event]:
        """The match's events after ``after``, as soon as the store answers (while the match is here)."""
        events = await retry(
            lambda: self._host.store.events(lm.match.id, after),
            retry_on=StoreUnavailable,
            keep_going=lambda: self._host.holds(lm),
        )
        return events or []

    async def catch_up(self, lm: LiveMatch) -> bool:
        """Apply what the log holds beyond this copy (the caller holds the lock); False if it was reloaded.

        As after a gap on the bus (``_check``), the read starts at the
        copy's last event: a log that lost it, or holds another event there,
        is not this copy's history, and folding its later events on would mix
        two; the copy is reloaded from the log instead.
        """
        seen = lm.match.last_event
        if self._fold(lm, await self._host.store.events(lm.match.id, seen.ev - 1), seen):
            return True
        await self.reload(lm)
        return False

    def _fold(self, lm: LiveMatch, events: list[Event], seen: Event) -> bool:
        """Apply ``events``, read from the log from ``seen`` on, if they go on from it: whether they did."""
        if not holds_at_its_number(events, seen):
            return False
        self._host.apply(lm, events)
        return True

    def catch_up_soon(self, lm: LiveMatch, *, tell_others: bool = True) -> None:
        """Check this copy against the log in the background: a gap on the bus, its reconnect, another's reload notice.

        The copy's last event is taken now, not when the check runs: batches
        go on arriving meanwhile, and one that starts just past a stale copy
        (the first write after Redis came back from a snapshot, published
        right after the reconnect) would be folded on, leaving a last event
        the log does hold, and the mix of histories unseen.
        """
        self._host.spawn(self._check(lm, lm.match, lm.match.last_event, tell_others=tell_others))

    async def _check(
        self, lm: LiveMatch, copy: Match, seen: Event, *, tell_others: bool = True, settling: bool = False
    ) -> None:
        """What this process missed, however long the store is away: a catch-up's and a settle's one path.

        ``settling`` (``settle``): what the read finds past the copy is
        confirmed first (``_confirmed``), and published once folded.

        The read starts at ``seen``: a log without it has lost events (Redis
        back from an older snapshot), and the match is reloaded. So is one
        with another event there: the store lost events, then a process that
        had not applied them (it loaded the match from the store, or found the
        loss first) wrote new ones with their numbers; folding the log's later
        events onto this copy would mix two histories (and decide a result
        from moves the log no longer holds). Pub/sub reconnects after every
        Redis restart, so this is where the processes find out, before anyone
        writes. Another process's reload notice is checked the same way
        (``tell_others`` is then False) rather than obeyed: it can come after
        this process found the loss itself and reloaded, or late (offered
        again after the bus refused it), when the copy here is in step and
        the players have resumed onto it; reloading then would only close
        their connections once more.
        """
        while True:
            events = await self._read_log(lm, seen.ev - 1)
            news = settling and len(events) > 1 and holds_at_its_number(events, seen) is True
            if news and not await self._confirmed(lm):
                return
            async with lm.lock:
                if not self._host.holds(lm):
                    return
                if lm.match is not copy:  # reloaded during the read (another notice, another catch-up)
                    copy, seen = lm.match, lm.match.last_event  # from the log: check it as it is now
                    continue
                if not self._fold(lm, events, seen):
                    await self.try_reload(lm, tell_others=tell_others)
                    return
            if news:
                await self._host.publish(lm.match.id, events[1:])  # the first is ``seen``
            return

    async def reload(self, lm: LiveMatch, *, tell_others: bool = True) -> None:
        """Rebuild this process's copy of a match from the store, which lost events applied here.

        The store's log is what any process would load, so it is the one to
        go on from. The connections here are closed so that each resumes onto
        it; the other processes are told first to do the same, since their
        copies are as stale (``tell_others`` is False when that notice is what
        brought the news here). docs/architecture.md, "A store that lost
        events is reloaded from, not written past".
        """
        host, match_id = self._host, lm.match.id
        if tell_others and host.bus.shared:
            await self.offer(match_id, self.reload_notice)
        log.error(
            "match %s: the store's log does not hold event %d as applied here; reloading",
            match_id,
            lm.match.ev,
        )
        lm.reloading = True
        try:
            events = await host.store.events(match_id)
        finally:
            lm.reloading = False
        if not events:  # nothing left of it
            host.drop(match_id)
            return
        lm.match = Match.from_events(events, host.grace_ms)  # a prefix of a log that replayed: it replays
        host.schedule(lm)
        for peer in [*lm.seats.values(), *lm.spectators]:
            peer.close(CLOSE_TRY_AGAIN, "the match was reloaded from the store; resume")

    async def try_reload(self, lm: LiveMatch, *, tell_others: bool) -> None:
        """``reload`` where nobody waits on it (a notice on the bus, a catch-up).

        With the store away it gives up: the loss is found again at the next
        catch-up or the next append.
        """
        try:
            await self.reload(lm, tell_others=tell_others)
        except StoreUnavailable:
            log.warning("could not reload %s; it reloads at its next append", lm.match.id)
