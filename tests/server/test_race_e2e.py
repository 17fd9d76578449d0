"""Whole races over real websockets, on every backend."""

from __future__ import annotations

import asyncio
from typing import Any

from race import MakeAppT, client, greedy, kick, start_race
from wsclient import Msg, WsClient

from server.match.state import COUNTDOWN_MS

Backend = dict[str, str]


def evs(messages: list[Msg]) -> list[int]:
    """The distinct evs of a message stream, in order of first appearance."""
    out: list[int] = []
    for m in messages:
        ev = m.get("ev")
        if isinstance(ev, int) and (not out or out[-1] != ev):
            out.append(ev)
    return out


def assert_consecutive(messages: list[Msg], after: int) -> None:
    got = evs(messages)
    assert got == list(range(after + 1, after + 1 + len(got))), got


async def boards_seen(spectator: WsClient, count: int) -> None:
    """Read until ``count`` boards came after the snapshot: a board held back comes with a later event."""
    while sum(m["type"] == "board" for m in spectator.received) < count:
        await spectator.recv()


async def test_complete_race_to_a_result(make_app: MakeAppT, backend: Backend) -> None:
    app = await make_app(**backend)
    race = await start_race(app)
    a, b = race.players
    spectator = await client(app)
    watching = await spectator.request({"type": "watch", "match": race.code}, "watching")
    assert watching["lobby"]["status"] == "playing"
    assert [bd["view"]["leftover"] for bd in watching["boards"]] == [72, 72]

    for _ in range(5):  # Bob makes a few moves, then finishes
        await race.move(1)
    progress = await a.expect("progress", seat=1, moves=race.views[1]["moves"])
    assert progress["leftover"] == race.views[1]["leftover"]
    await b.send({"type": "finish"})
    await a.expect("finished", seat=1, reason="finish")
    while not race.views[0]["over"]:  # Ann plays her game out
        await race.move(0)
    results = await asyncio.gather(*(c.expect("result") for c in (a, b, spectator)))
    stored = await app.store.result(race.code)
    assert stored is not None, "the result was sent before it was stored"
    assert results[0] == results[1] == results[2] == stored.model_dump(mode="json")
    result = results[0]
    assert result["seed"] == "12345" and result["match"] == race.code
    ann, bob = result["seats"]
    assert (ann["reason"], bob["reason"]) == ("over", "finish")
    assert ann["score"] == race.views[0]["leftover"] and bob["score"] == race.views[1]["leftover"]
    assert len(ann["moves"]) >= race.seqs[0] - 1 and len(bob["moves"]) == 5
    assert result["winner"] == (0 if ann["score"] <= bob["score"] else 1)
    # Racers never got a board; the spectator got every one of them.
    assert not [m for m in a.received + b.received if m["type"] == "board"]
    boards = [m for m in spectator.received if m["type"] == "board"]
    assert len(boards) == race.seqs[0] - 1 + 5
    assert_consecutive(spectator.received[1:], watching["ev"])


async def test_resume_mid_race(make_app: MakeAppT, backend: Backend) -> None:
    app = await make_app(**backend)
    race = await start_race(app)
    a, b = race.players
    acks = [await race.move(0) for _ in range(3)]
    await race.move(1)
    await a.expect("progress", seat=1, moves=1)
    last_ev = max(m["ev"] for m in a.received if "ev" in m)
    await a.close()
    for _ in range(2):
        await race.move(1)
    await b.seen("lobby", ev=last_ev + 1)  # Ann's disconnect is in the log

    a2 = await client(app)
    await a2.send({"type": "resume", "match": race.code, "token": race.tokens[0], "last_ev": last_ev})
    resumed = await a2.expect("resumed")
    assert resumed["seat"] == 0 and resumed["last_seq"] == 3
    assert resumed["view"] == acks[-1]["view"]
    assert resumed["opponents"][0]["moves"] == 3
    missed = resumed["missed"]
    assert_consecutive(missed, last_ev)
    assert evs(missed)[-1] == resumed["ev"]
    assert [m["moves"] for m in missed if m["type"] == "progress"] == [2, 3]
    # Live events continue right after the snapshot.
    await race.move(1)
    await a2.expect("progress", moves=4)
    assert_consecutive(a2.received[1:], resumed["ev"])
    # A resent, already-acked seq gets the same ack and changes nothing.
    for ack in acks:
        again = await a2.request({"type": "move", "seq": ack["seq"], "move": ack["move"]}, "ack")
        assert again == ack
    race.players[0] = a2
    ack4 = await race.move(0)
    assert ack4["seq"] == 4 and ack4["view"]["moves"] == len(acks) + 1 + len(ack4["auto"])
    assert app.hub.live[race.code].match.seat(0).last_seq == 4


async def test_second_connection_takes_the_seat_over(make_app: MakeAppT, backend: Backend) -> None:
    app = await make_app(**backend)
    race = await start_race(app)
    a = race.players[0]
    await race.move(0)
    a2 = await client(app)
    resumed = await a2.request({"type": "resume", "match": race.code, "token": race.tokens[0]}, "resumed")
    assert resumed["last_seq"] == 1
    error = await a.expect("error")
    assert error["code"] == "taken_over"
    assert await a.closed() == 1000
    # The new connection plays on; the old one is gone from the seat.
    race.players[0] = a2
    ack = await race.move(0)
    assert ack["seq"] == 2
    assert app.hub.live[race.code].seats[0] is not None


async def test_old_connection_cannot_move_after_take_over(make_app: MakeAppT, backend: Backend) -> None:
    app = await make_app(**backend)
    race = await start_race(app)
    a, _ = race.players
    a2 = await client(app)
    await a2.request({"type": "resume", "match": race.code, "token": race.tokens[0]}, "resumed")
    # Racing the close: a move from the old connection must not be applied.
    await a.send({"type": "move", "seq": 1, "move": "T"})
    await a.expect("error", code="taken_over")
    await a.closed()
    assert app.hub.live[race.code].match.seat(0).last_seq == 0


async def test_spectator_joins_while_moves_are_in_flight(make_app: MakeAppT, backend: Backend) -> None:
    app = await make_app(**backend)
    race = await start_race(app)
    n = 20
    halfway = asyncio.Event()

    async def play(seat: int) -> None:
        for seq in range(1, n + 1):
            await race.move(seat, "T")
            if seq == 3:
                halfway.set()

    movers = [asyncio.create_task(play(seat)) for seat in (0, 1)]
    spectator = await client(app)
    await halfway.wait()
    watching = await spectator.request({"type": "watch", "match": race.code}, "watching")
    await asyncio.gather(*movers)
    last = max(race.players[seat].received[-1]["ev"] for seat in (0, 1))
    assert watching["ev"] < last, "the spectator came too late to test anything"
    shown = {b["seat"]: b["view"]["moves"] for b in watching["boards"]}
    await boards_seen(spectator, sum(n - moves for moves in shown.values()))
    live = spectator.received[1:]
    assert_consecutive(live, watching["ev"])
    assert evs(live)[-1] == last
    # Each move: its progress, live, and its board (spectators get both, as the issue says), once;
    # a board drawn ahead of the other racer comes when they catch up (spectator lag), in order.
    assert {m["type"] for m in live} == {"board", "progress"}
    progress = [m["ev"] for m in live if m["type"] == "progress"]
    assert progress == list(range(watching["ev"] + 1, last + 1))
    live = [m for m in live if m["type"] == "board"]
    for seat in (0, 1):
        assert watching["boards"][seat]["moves"] == ["T"] * shown[seat]
        later = [m for m in live if m["seat"] == seat]
        assert [m["view"]["moves"] for m in later] == list(range(shown[seat] + 1, n + 1))


async def test_many_spectators_get_every_frame_once_in_order(make_app: MakeAppT, backend: Backend) -> None:
    """More spectators than the feed writes in one turn of the loop, and moves coming meanwhile."""
    app = await make_app(**backend)
    race = await start_race(app)
    spectators = await asyncio.gather(*(client(app) for _ in range(150)))
    watching = await asyncio.gather(
        *(s.request({"type": "watch", "match": race.code}, "watching") for s in spectators)
    )
    start = watching[0]["ev"]
    assert all(w["ev"] == start for w in watching)

    async def play(seat: int) -> None:
        for _ in range(6):
            await race.move(seat)

    await asyncio.gather(play(0), play(1))
    await race.players[0].send({"type": "resign"})
    await race.players[1].send({"type": "finish"})
    result = await race.players[0].expect("result")
    for s in spectators:
        await s.seen("result", ev=result["ev"])
        live = s.received[1:]
        assert_consecutive(live, start)
        assert [m["ev"] for m in live if m["type"] == "progress"] == list(range(start + 1, start + 13))
        for seat in (0, 1):  # every board, in order: some when the other racer caught up or ended
            boards = [m for m in live if m["type"] == "board" and m["seat"] == seat]
            assert [m["view"]["moves"] for m in boards] == list(range(1, 7))
        assert live[-1]["type"] == "result"


async def test_rematch_from_both_opens_a_new_match(make_app: MakeAppT, backend: Backend) -> None:
    app = await make_app(**backend)
    race = await start_race(app)
    a, b = race.players
    await race.move(0)
    await a.send({"type": "finish"})
    await b.send({"type": "resign"})
    result = (await a.expect("result"))["winner"]
    assert result == 0
    await b.expect("result")
    await a.send({"type": "rematch"})
    await b.send({"type": "rematch"})
    rematched = await asyncio.gather(a.expect("rematched"), b.expect("rematched"))
    new = rematched[0]["match"]
    assert new == rematched[1]["match"] != race.code
    lobbies: list[Any] = []
    for seat, c in enumerate((a, b)):
        r = await c.request({"type": "resume", "match": new, "token": race.tokens[seat]}, "resumed")
        assert r["seat"] == seat and r["lobby"]["status"] == "lobby" and r["last_seq"] == 0
        lobbies.append(r["lobby"])
    assert [s["name"] for s in lobbies[0]["seats"]] == ["Ann", "Bob"]
    await a.send({"type": "ready"})
    await b.send({"type": "ready"})
    await a.expect("countdown")
    kick(app, new, 3000)
    start = await b.expect("start")
    assert start["view"]["leftover"] == 72
    assert greedy(start["view"])
    old = await app.store.result(race.code)
    assert old is not None and old.seed == "12345"


async def test_a_racer_cannot_watch_their_own_race_until_its_result(
    make_app: MakeAppT, backend: Backend
) -> None:
    """Watching shows both boards; the opponent's would reveal the racer's own stock to come."""
    app = await make_app(**backend)
    ann = await client(app)
    me = await ann.request({"type": "hello", "name": "Ann"}, "welcome")
    code = (await ann.request({"type": "create", "seed": "12345"}, "created"))["match"]
    bob = await client(app)
    await bob.request({"type": "join", "match": code}, "joined")
    for c in (ann, bob):
        await c.send({"type": "ready"})
    await ann.expect("countdown")
    kick(app, code, COUNTDOWN_MS)
    view = (await ann.expect("start"))["view"]
    watch = {"type": "watch", "match": code}
    refused = await ann.request(watch, "error")  # on the racing connection
    assert refused["code"] == "not_allowed"
    other_tab = await client(app)
    await other_tab.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
    assert (await other_tab.request(watch, "error"))["code"] == "not_allowed"
    assert not any(m["type"] in ("watching", "board") for m in ann.received + other_tab.received)
    # Ann still holds her seat and plays on; once the result is out she may watch.
    ack = await ann.request({"type": "move", "seq": 1, "move": greedy(view)}, "ack")
    assert ack["seq"] == 1
    for c in (ann, bob):
        await c.send({"type": "finish"})
    await ann.expect("result")
    watching = await other_tab.request(watch, "watching")
    assert len(watching["boards"]) == 2
