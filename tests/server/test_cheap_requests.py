"""A cheap request costs the server little, however long the match it names (adversarial audit).

A long race (2,000 plays a seat) takes tens of milliseconds to read and fold
from its log, or to step back through: a frame that names such a match must
not make the server do that for each one, or one connection's 30 frames a
second keep a core busy. These tests count the work instead of timing it.
"""

from __future__ import annotations

import pytest
from counting import count_calls, record_waits
from race import MakeAppT, client, lobby_pair, start_race

from server.engine.game import BaseGame
from server.hub import FINISHED_TTL_MS
from server.match.state import MAX_SEATINGS


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


async def test_a_board_held_from_spectators_is_not_rebuilt_for_each_watch(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ann drew ahead and swapped on: each watch stepped her game back over every held play and on again."""
    app = await make_app()
    race = await start_race(app, variant="free-swap")
    await race.move(0, "T")  # drawn ahead of Bob: held from spectators, and so is every play after it
    for _ in range(30):
        await race.move(0, next(m for m in race.views[0]["legal"] if "~" in m))
    undos = count_calls(monkeypatch, BaseGame, "undo")
    c = await client(app)
    first = await c.request({"type": "watch", "match": race.code}, "watching")
    assert first["boards"][0]["moves"] == []  # as shown: before her turn
    rebuilt = undos[0]
    for _ in range(5):
        again = await c.request({"type": "watch", "match": race.code}, "watching")
        assert again["boards"] == first["boards"]
    assert undos[0] == rebuilt  # the held board, built once
    await race.move(1, "T")  # Bob draws as far: her plays are shown, and the board spectators see moves on
    later = await c.request({"type": "watch", "match": race.code}, "watching")
    assert later["boards"][0]["view"] == race.views[0] and len(later["boards"][0]["moves"]) == 31


async def test_a_connection_resuming_the_seat_it_holds_records_nothing(make_app: MakeAppT) -> None:
    """Each such resume recorded a drop and a connect: two events a frame, and two lobbies to everyone."""
    app = await make_app()
    race = await start_race(app)
    await race.move(0)
    a, b = race.players
    lm = app.hub.live[race.code]
    ev = lm.match.ev
    resume = {"type": "resume", "match": race.code, "token": race.tokens[0], "last_ev": ev}
    for _ in range(10):
        resumed = await a.request(resume, "resumed")
        assert resumed["ev"] == ev and resumed["last_seq"] == 1 and resumed["missed"] == []
    from_far_back = await a.request({**resume, "last_ev": 0}, "resumed")  # a resync: the snapshot, still
    assert from_far_back["missed"] and from_far_back["ev"] == ev
    assert lm.match.ev == ev and lm.seats[0] is not None
    ack = await race.move(0)  # her seat is still hers, and nothing came between
    assert ack["ev"] == ev + 1
    await b.expect("progress", ev=ev + 1)
    assert [m["type"] for m in b.received[b.cursor - 1 :]] == ["progress"]
    assert not [m for m in b.received if m["type"] == "lobby" and m["ev"] > ev]


async def test_a_lobby_joined_and_left_again_and_again_stops_taking_joins(make_app: MakeAppT) -> None:
    """Each join and leave was two events more in the lobby's log, without end."""
    app = await make_app(rate_per_s=10_000.0, burst=10_000)
    race = await lobby_pair(app)
    b = race.players[1]
    for _ in range(MAX_SEATINGS - 2):  # the creator's seat and Bob's first are two
        await b.request({"type": "leave"}, "lobby")
        await b.request({"type": "join", "match": race.code}, "joined")
    await b.request({"type": "leave"}, "lobby")
    refused = await b.request({"type": "join", "match": race.code}, "error")
    assert refused["code"] == "not_allowed"
    assert app.hub.live[race.code].match.ev < 4 * MAX_SEATINGS


async def test_a_seat_let_go_of_and_resumed_again_and_again_waits_its_turn(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch lets go of the seat (a drop), a resume takes it back (a connect): two events a frame pair."""
    app = await make_app(resumes_per_min=300.0, resume_burst=2)  # then one each 0.2 s
    race = await start_race(app)
    other = await start_race(app)
    a = race.players[0]
    waits = record_waits(monkeypatch, app.resumes)
    lm = app.hub.live[race.code]
    for _ in range(3):
        await a.request({"type": "watch", "match": other.code}, "watching")
        ev = lm.match.ev
        resume = {"type": "resume", "match": race.code, "token": race.tokens[0], "last_ev": ev}
        assert (await a.request(resume, "resumed"))["missed"] == []
    assert waits[:2] == [0.0, 0.0] and waits[2] > 0 and waits[-1] == 0.0  # the third waited, then went
    assert lm.seats[0] is not None and lm.match.seat(0).conn is not None
