"""A process that may have missed events reads them from the store, however long the store is away."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from race import MakeAppT, start_race

from server.match import Match, encode_events
from server.store import StoreUnavailable
from tests.store_events import opening


async def test_a_catch_up_retries_until_the_store_answers(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await make_app()
    race = await start_race(app)
    lm = app.hub.live[race.code]
    # Another process's move: in the log, never applied here (its publish was lost).
    events = lm.match.decide_move(0, 1, "T", app.clock())
    assert isinstance(events, list)
    await app.store.append(race.code, lm.match.ev, events)
    real_events = app.store.events
    refusals = 3

    async def store_away_at_first(*args: Any, **kwargs: Any) -> Any:
        nonlocal refusals
        if refusals:
            refusals -= 1
            raise StoreUnavailable("the store is still away")
        return await real_events(*args, **kwargs)

    monkeypatch.setattr(app.store, "events", store_away_at_first)
    app.hub._on_bus(race.code, None)  # the bus reconnected: "you may have missed events"
    progress = await race.players[1].expect("progress", seat=0)
    assert progress["moves"] == 1 and progress["ev"] == events[0].ev
    assert refusals == 0 and lm.match.seat(0).last_seq == 1


async def test_a_seat_recorded_as_dropped_while_its_connection_is_here_connects_again(
    make_app: MakeAppT,
) -> None:
    """As when another process took this one for dead (its heartbeat lapsed in a stall)."""
    app = await make_app()
    race = await start_race(app)
    lm = app.hub.live[race.code]
    ann = lm.seats[0]
    await app.hub.execute(lm, lambda m: m.decide_disconnect(0, ann.id, app.clock()))
    bob = race.players[1]
    while (await bob.expect("lobby"))["seats"][0]["connected"]:
        pass  # up to the drop
    again = await bob.expect("lobby")
    assert again["seats"][0]["connected"] and lm.match.seat(0).gone_since is None
    await race.move(0)  # and Ann plays on


async def test_a_batch_just_past_a_stale_copy_does_not_hide_the_log_written_past_it(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """The copy is checked against the log as it stood at the gap, not when the check runs.

    Redis back from an older snapshot lost an event applied here; a process
    that never had it wrote its own under that number, then another, and
    published that. Pub/sub reconnects, so this process catches up, but the
    new batch can arrive before the check has run: folded on first, it left
    a last event the log does hold, and the check found the copy in step
    (two histories in one match, seen once in a busy CI run).
    """
    app = await make_app(**backend)
    lm = await app.hub.open(opening("CATCHUPX"))  # ev 1 and 2, in the log and here
    app.hub.apply(lm, lm.match.decide_join("Bob", "b" * 24, None, 0))  # ev 3 from the bus: the log lost it
    other = Match.from_events(opening("CATCHUPX"))  # a process that never had it writes ev 3 and 4
    written = other.decide_join("Cy", "c" * 24, None, 0)
    other.apply(written[0])
    connected = other.decide_connect(1, "conn-cy", 0)
    await app.store.append("CATCHUPX", 2, [*written, *connected])

    app.hub._on_bus("CATCHUPX", None)  # pub/sub reconnected: catch up
    app.hub._on_bus("CATCHUPX", encode_events(connected))  # ev 4 comes before the check has run

    async with asyncio.timeout(10):
        while lm.match.seats[1] is None or lm.match.seat(1).name != "Cy":
            await asyncio.sleep(0.01)  # reloaded from the log in the background
    assert lm.match.ev == 4 and lm.match.last_event == connected[0]
