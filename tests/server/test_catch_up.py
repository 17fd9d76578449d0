"""A process that may have missed events reads them from the store, however long the store is away."""

from __future__ import annotations

from typing import Any

import pytest
from race import MakeAppT, start_race

from server.store import StoreUnavailable


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
