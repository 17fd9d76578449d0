"""Practice games: hints from the solver's player (off the event loop) and undo."""

from __future__ import annotations

import asyncio
from typing import Any

from race import MakeAppT, client, kick, start_race
from wsclient import WsClient

from server.app import App
from server.match.state import COUNTDOWN_MS


async def test_hint_is_a_legal_move_and_undo_takes_a_play_back(make_app: MakeAppT) -> None:
    app = await make_app()
    c = await client(app)
    created = await c.request({"type": "create", "seats": 1, "deal": 4}, "created")
    early = await c.request({"type": "hint"}, "error")
    assert early["code"] == "wrong_phase"
    await c.send({"type": "ready"})
    await c.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    view = (await c.expect("start"))["view"]
    hint = await c.request({"type": "hint"}, "hint", timeout=30)
    assert hint["move"] in view["legal"]
    ack = await c.request({"type": "move", "seq": 1, "move": hint["move"]}, "ack")
    assert ack["view"]["moves"] == 1
    undone = await c.request({"type": "undo"}, "undone")
    assert undone["view"] == view and undone["moves"] == [hint["move"]]
    assert undone["ev"] == ack["ev"] + 1  # it is an event too: the stream of evs has no gap
    again = await c.request({"type": "move", "seq": 2, "move": hint["move"]}, "ack")
    assert again["ev"] == undone["ev"] + 1
    # a resend after undos gets the very ack it was given (the undone seq 1 was not in seq 2's game)
    third = await c.request({"type": "move", "seq": 3, "move": "T"}, "ack")
    await c.request({"type": "undo"}, "undone")
    await c.request({"type": "undo"}, "undone")
    for ack in (again, third):
        assert await c.request({"type": "move", "seq": ack["seq"], "move": ack["move"]}, "ack") == ack


async def test_no_hints_or_undo_in_a_race(make_app: MakeAppT) -> None:
    app = await make_app()
    race = await start_race(app)
    a = race.players[0]
    assert (await a.request({"type": "hint"}, "error"))["code"] == "not_allowed"
    assert (await a.request({"type": "undo"}, "error"))["code"] == "not_allowed"


async def test_a_player_who_asks_hint_after_hint_is_refused_past_the_quota(make_app: MakeAppT) -> None:
    """Each hint may keep a solver worker busy for seconds: a player has a quota (issue 19)."""
    app = await make_app(hints_per_min=0.001, hint_burst=2)
    c = await client(app)
    await c.request({"type": "hello", "name": "Ann"}, "welcome")
    created = await c.request({"type": "create", "seats": 1, "deal": 4}, "created")
    await c.send({"type": "ready"})
    await c.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    await c.expect("start")
    for _ in range(2):
        await c.request({"type": "hint"}, "hint", timeout=30)
    refused = await c.request({"type": "hint"}, "error")
    assert refused["code"] == "rate_limited" and "hints" in refused["message"]


async def practice_v2(app: App) -> tuple[WsClient, str, str, dict[str, Any]]:
    """A v2 connection in a practice game just started: it, the match, the seat's token, the start's view."""
    c = await client(app)
    await c.request({"type": "hello", "v": 2}, "welcome")
    created = await c.request({"type": "create", "seats": 1, "deal": 4}, "created")
    await c.send({"type": "ready"})
    await c.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    return c, created["match"], created["token"], (await c.expect("start"))["view"]


async def test_an_undo_resent_with_its_seq_after_a_drop_undoes_once(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """v2's undo takes the next seq: sent again (its answer lost with the line), it is answered again, not applied again."""
    app = await make_app(**backend)
    c, code, token, view = await practice_v2(app)
    first, second = view["legal"][0], "T"
    await c.request({"type": "move", "seq": 1, "move": first}, "ack")
    last = await c.request({"type": "move", "seq": 2, "move": second}, "ack")
    await c.send({"type": "undo", "seq": 3})
    seat = app.hub.live[code].match.seat(0)
    async with asyncio.timeout(10):
        while seat.last_seq < 3:  # applied; its answer is lost with the line
            await asyncio.sleep(0.01)
    await c.close()

    again = await client(app)
    await again.request({"type": "hello", "v": 2}, "welcome")
    resumed = await again.request(
        {"type": "resume", "match": code, "token": token, "last_ev": last["ev"]}, "resumed"
    )
    assert resumed["last_seq"] == 3 and resumed["view"]["moves"] == 1
    undone = await again.request({"type": "undo", "seq": 3}, "undone")
    assert (
        undone["ev"] == last["ev"] + 1 and undone["moves"] == [second] and undone["view"] == resumed["view"]
    )
    # one undo in the log, and the board as it left it: the next move is seq 4, on one play
    assert [e.kind for e in await app.store.events(code)].count("undone") == 1
    ack = await again.request({"type": "move", "seq": 4, "move": second}, "ack")
    assert ack["ev"] > undone["ev"] and app.hub.live[code].match.seat(0).numbers.moves == 2
    # and a move resent after it still gets its first ack (the replay steps over the numbered undo)
    assert await again.request({"type": "move", "seq": 4, "move": second}, "ack") == ack


async def test_an_undo_whose_seq_is_out_of_step_is_refused_out_of_order(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    app = await make_app(**backend)
    c, code, _, view = await practice_v2(app)
    await c.request({"type": "move", "seq": 1, "move": view["legal"][0]}, "ack")
    for seq in (3, 1):  # ahead of the next (2), or the seq of a move
        refused = await c.request({"type": "undo", "seq": seq}, "error")
        assert refused["code"] == "out_of_order", refused
    await c.request({"type": "undo", "seq": 2}, "undone")
    refused = await c.request({"type": "move", "seq": 2, "move": view["legal"][0]}, "rejected")
    assert refused["code"] == "out_of_order" and refused["last_seq"] == 2  # seq 2 was the undo
    assert app.hub.live[code].match.seat(0).numbers.moves == 0


async def test_a_v1_undo_has_no_seq(make_app: MakeAppT) -> None:
    """v1 is as it was: its undo takes no seq (and a seqless v2 undo still works, numbering nothing)."""
    app = await make_app()
    c = await client(app)
    created = await c.request({"type": "create", "seats": 1, "deal": 4}, "created")
    await c.send({"type": "ready"})
    await c.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    view = (await c.expect("start"))["view"]
    await c.request({"type": "move", "seq": 1, "move": view["legal"][0]}, "ack")
    assert (await c.request({"type": "undo", "seq": 2}, "error"))["code"] == "bad_message"
    await c.request({"type": "undo"}, "undone")
    assert (await c.request({"type": "move", "seq": 2, "move": "T"}, "ack"))["seq"] == 2
