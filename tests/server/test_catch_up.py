"""A process that may have missed events reads them from the store, however long the store is away."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from race import MakeAppT, start_race

from server.app import App
from server.errors import ErrorCode, Refused
from server.live import LiveMatch
from server.match import Event, Match, encode_events
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


async def stale_copy_of_a_log_written_past_it(app: App, code: str) -> tuple[LiveMatch, list[Event]]:
    """A copy here with an ev 3 the log lost, and the log with another ev 3 and an ev 4 past it.

    As after Redis came back from an older snapshot, and a process that
    never had the lost event wrote its own under that number, then another.
    Returns the copy and the log's ev 4.
    """
    lm = await app.hub.open(opening(code))  # ev 1 and 2, in the log and here
    app.hub.apply(lm, lm.match.decide_join("Bob", "b" * 24, None, 0))  # ev 3 from the bus: the log lost it
    other = Match.from_events(opening(code))
    written = other.decide_join("Cy", "c" * 24, None, 0)
    other.apply(written[0])
    connected = other.decide_connect(1, "conn-cy", 0)
    await app.store.append(code, 2, [*written, *connected])
    return lm, connected


async def test_a_batch_just_past_a_stale_copy_does_not_hide_the_log_written_past_it(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """The copy is checked against the log as it stood at the gap, not when the check runs.

    Pub/sub reconnects, so this process catches up, but the batch written
    past the lost event can arrive before the check has run: folded on
    first, it left a last event the log does hold, and the check found the
    copy in step (two histories in one match, seen once in a busy CI run).
    """
    app = await make_app(**backend)
    lm, connected = await stale_copy_of_a_log_written_past_it(app, "CATCHUPX")
    app.hub._on_bus("CATCHUPX", None)  # pub/sub reconnected: catch up
    app.hub._on_bus("CATCHUPX", encode_events(connected))  # ev 4 comes before the check has run

    async with asyncio.timeout(10):
        while lm.match.seats[1] is None or lm.match.seat(1).name != "Cy":
            await asyncio.sleep(0.01)  # reloaded from the log in the background
    assert lm.match.ev == 4 and lm.match.last_event == connected[0]


async def test_a_command_that_meets_a_log_written_past_a_stale_copy_reloads_it(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """The append's conflict reads the log from the copy's last event, and finds another history there.

    Before, it read on from the copy's ``ev``, folded the log's ev 4 onto the
    stale copy, and appended the command after it: two histories in one match.
    """
    app = await make_app(**backend)
    lm, connected = await stale_copy_of_a_log_written_past_it(app, "CATCHUPY")
    with pytest.raises(Refused) as refused:
        await app.hub.execute(lm, lambda m: m.decide_ready(0, app.clock()))
    assert refused.value.code is ErrorCode.UNAVAILABLE  # resume onto the log
    assert lm.match.seat(1).name == "Cy" and lm.match.last_event == connected[0]
    assert [e.kind for e in await app.store.events("CATCHUPY")] == [
        "opened",
        "seated",
        "seated",
        "connected",
    ]


async def test_a_write_settled_after_no_answer_reloads_a_copy_the_log_went_past(
    make_app: MakeAppT, backend: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store write that got no answer is settled by reading the log from the copy's last event.

    Before, the settle read on from the copy's ``ev`` and folded the log's
    ev 4 onto the stale copy (Bob's seat, Cy's connection): two histories in
    one match, where the catch-ups reload.
    """
    app = await make_app(**backend)
    lm, connected = await stale_copy_of_a_log_written_past_it(app, "UNHEARD9")

    async def no_answer(*args: Any, **kwargs: Any) -> int:
        raise StoreUnavailable("the store did not answer")

    with monkeypatch.context() as patch:
        patch.setattr(app.store, "append", no_answer)
        with pytest.raises(Refused) as refused:
            await app.hub.execute(lm, lambda m: m.decide_ready(0, app.clock()))
    assert refused.value.code is ErrorCode.UNAVAILABLE  # settled in the background
    async with asyncio.timeout(10):
        while lm.match.ev < 4:
            await asyncio.sleep(0.01)
    assert lm.match.seat(1).name == "Cy" and lm.match.last_event == connected[0]
