"""A decision's writes outside its match's slot are steps: a crash between them loses nothing.

On Redis (and a Redis Cluster, where they live on other masters) a
decision is the match's own script, then each player's totals, the
leaderboard, the results index, and last the match leaves ``grip:running``,
its to-do list. A server killed between any two is restarted: the
leaderboard, both players' figures and the running list come out as if
nothing had happened, and running the steps yet again counts nothing twice.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from server import daily
from server.protocol import now_ms
from server.stats import fold
from server.store.redis import RUNNING, RedisStore
from tests.processes import ServerProcess
from tests.server.wsclient import WsClient


async def daily_race_to_the_decision(url: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    """Ann and Bob race today's deal, ranked, to its end; the decision kills the server."""
    ann, bob = await WsClient.connect(url), await WsClient.connect(url)
    ann_id = await ann.request({"type": "hello", "name": "Ann"}, "welcome")
    bob_id = await bob.request({"type": "hello", "name": "Bob"}, "welcome")
    created = await ann.request({"type": "create", "daily": True, "seats": 2}, "created")
    await bob.request({"type": "join", "match": created["match"]}, "joined")
    for c in (ann, bob):
        await c.send({"type": "ready"})
    for c in (ann, bob):
        await c.expect("start", timeout=15)
    await ann.request({"type": "move", "seq": 1, "move": "T"}, "ack")
    await ann.request({"type": "finish"}, "finished")
    await bob.send({"type": "finish"})  # the decision: the server dies writing it
    return ann_id, bob_id, created["match"]


@pytest.mark.parametrize("step", ["decided", "first_player", "listed"])
async def test_a_server_killed_between_a_decisions_steps_loses_nothing_and_counts_nothing_twice(
    shared_url: str, step: str
) -> None:
    dying = ServerProcess("--redis", shared_url, module="tests.dying_server", env={"GRIP_DIE_AT": step})
    dying.start()
    ann, bob, code = await daily_race_to_the_decision(dying.url)
    assert dying.proc is not None
    assert await asyncio.to_thread(dying.proc.wait, 15) == -9
    store = await RedisStore.connect(shared_url)
    try:
        assert (await store.result(code)) is not None  # the match's own write landed
        assert code in {m.decode() for m in await store._redis.smembers(RUNNING)}  # and it is listed
        restarted = ServerProcess("--redis", shared_url).start()  # finishes the steps as it starts
        try:
            c = await WsClient.connect(restarted.url)
            await c.request({"type": "hello", "player": ann["player"], "key": ann["key"]}, "welcome")
            board = await c.request({"type": "leaderboard", "day": daily.day_of(now_ms())}, "leaderboard")
            assert sorted(e["player"] for e in board["top"]) == sorted([ann["player"], bob["player"]])
            assert {e["match"] for e in board["top"]} == {code}
            for who, rival in ((ann, bob), (bob, ann)):
                figures = await c.request({"type": "stats", "player": who["player"]}, "stats")
                assert [(v["variant"], v["played"]) for v in figures["variants"]] == [("classic", 1)]
                (h2h,) = figures["head_to_head"]
                assert h2h["opponent"] == rival["player"] and h2h["wins"] + h2h["losses"] + h2h["draws"] == 1
                assert (figures["daily_streak"], figures["best_daily_streak"]) == (1, 1)
        finally:
            restarted.kill()
        assert await store.running() == {}
        assert await store._redis.smembers(RUNNING) == set()
        before = {p["player"]: await store.totals(p["player"]) for p in (ann, bob)}
        # the steps run once more (a second crash before the list was cleared): nothing doubles
        await store._redis.sadd(RUNNING, code)
        assert await store.running() == {}
        for player, totals in before.items():
            assert await store.totals(player) == totals
            assert totals == fold(player, await store.player_results(player))
            assert totals.games == 1
        assert len((await store.leaderboard(daily.day_of(now_ms()), None)).top) == 2
    finally:
        await store.close()
