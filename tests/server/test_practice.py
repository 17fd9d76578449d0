"""Practice games: hints from the solver's player (off the event loop) and undo."""

from __future__ import annotations

from race import MakeAppT, client, kick, start_race

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
