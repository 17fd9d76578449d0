"""Requests a client can repeat cheaply that made the server redo work out of proportion (adversarial audit).

Each test counts the work (store reads, pairing rounds, results built), not time; the boards'
reads are counted in test_board_cost.py.
"""

from __future__ import annotations

import pytest
from counting import count_calls
from race import MakeAppT, client

from server.protocol import Result


async def test_joining_and_leaving_the_quick_queue_again_and_again_does_not_bring_a_round_each(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``quick`` brought a pairing round on at once, and a round reads the whole queue."""
    app = await make_app(quick_pair_every_s=60.0)  # rounds brought on by joins: at most one in 12 s
    rounds = count_calls(monkeypatch, app.quick, "pair_now")
    c = await client(app)
    await c.request({"type": "hello"}, "welcome")
    for _ in range(20):
        await c.request({"type": "quick"}, "queued")
        await c.request({"type": "quick_cancel"}, "unqueued")
    await c.request({"type": "quick"}, "queued")
    assert rounds[0] <= 2  # the first join's (and, on a slow machine, one more); it was 21


async def test_asking_for_the_live_list_again_and_again_reads_it_once_a_period(
    make_app: MakeAppT, backend: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``live`` read (and sorted) every race of every process from the store."""
    app = await make_app(live_every_s=60.0, **backend)
    reads = count_calls(monkeypatch, app.store, "live_top")
    c = await client(app)
    for order in ["newest", "closest"] * 10:
        await c.request({"type": "live", "order": order}, "live", order=order)
        await c.send({"type": "live_stop"})
    assert reads[0] == 1  # it was 20


async def test_a_page_of_history_builds_no_game_whole(
    make_app: MakeAppT, backend: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``history`` built each listed result whole, every move of every seat (a long game's 40 KB)."""
    app = await make_app(**backend)
    c = await client(app)
    me = await c.request({"type": "hello"}, "welcome")
    codes = []
    for _ in range(3):
        codes.append((await c.request({"type": "create", "seats": 1}, "created"))["match"])
        await c.request({"type": "ready"}, "start")
        await c.request({"type": "move", "seq": 1, "move": "T"}, "ack")
        await c.request({"type": "finish"}, "result")
    built = count_calls(monkeypatch, Result, "model_validate_json")
    page = await c.request({"type": "history", "limit": 2}, "history")
    newest = sorted(codes, reverse=True)  # decided at the same time (the test's clock): by code
    assert [g["match"] for g in page["games"]] == newest[:2] and page["next"]
    assert all(g["practice"] and g["outcome"] == "solo" for g in page["games"])
    rest = await c.request({"type": "history", "before": page["next"]}, "history")
    assert [g["match"] for g in rest["games"]] == newest[2:] and rest["player"] == me["player"]
    assert built[0] == 0  # it was one for each game listed, and one more a page
