"""A request the server refuses costs it little, however long the match it names (adversarial audit).

A match's log is kept after it is dropped from memory, and a long race's
(2,000 plays a seat) takes tens of milliseconds to read and fold: a frame
that names such a match must not make the server read it only to refuse it,
or one connection's 30 frames a second keep a core busy. These tests count
the store's log reads instead of timing them.
"""

from __future__ import annotations

import pytest
from counting import count_calls
from race import MakeAppT, client, start_race

from server.hub import FINISHED_TTL_MS


async def test_an_expired_match_is_refused_without_reading_its_log(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await make_app()
    race = await start_race(app)
    await race.move(0)
    await race.finish_both()
    await race.leave()
    app.clock.advance(FINISHED_TTL_MS + 1)  # type: ignore[attr-defined]
    assert app.hub.sweep() == [race.code]
    reads = count_calls(monkeypatch, app.store, "events")
    c = await client(app)
    for frame in (
        {"type": "watch", "match": race.code},
        {"type": "join", "match": race.code},
        {"type": "resume", "match": race.code, "token": race.tokens[0]},
        {"type": "watch", "match": race.code},
    ):
        assert (await c.request(frame, "error"))["code"] == "not_found"
    assert reads[0] == 0 and race.code not in app.hub.live


async def test_the_replay_of_a_race_still_played_is_refused_without_reading_its_log(
    make_app: MakeAppT, backend: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await make_app(**backend)
    race = await start_race(app)
    await race.move(0)
    reads = count_calls(monkeypatch, app.store, "events")
    c = await client(app)
    refused = await c.request({"type": "replay", "match": race.code}, "error")
    assert refused["code"] == "wrong_phase" and reads[0] == 0
    assert (await c.request({"type": "replay", "match": "ACDEFGHJ"}, "error"))["code"] == "not_found"
    await race.finish_both()
    assert (await c.request({"type": "replay", "match": race.code}, "replay"))["match"] == race.code
