"""A race is rated once, even when two processes see its end and the store is slow to answer.

Two server processes talk to Redis through a link that holds every answer
back. The racers, one on each, finish at the same moment: both processes
decide, one decision lands. While its follow-ups crawl (the rating is one),
the running list is read twice more at once, as every process's liveness
loop does, and each reader runs the decided race's follow-ups too.
"""

from __future__ import annotations

import asyncio

from server import ratings
from server.store.redis import RUNNING, RedisStore
from tests.conftest import RedisServer
from tests.processes import ServerProcess
from tests.server.wsclient import WsClient
from tests.slowlink import SlowLink


async def test_two_processes_and_a_slow_store_rate_a_race_once(
    redis_server: RedisServer, redis_url: str
) -> None:
    link = await SlowLink(redis_server.port, 0.05).start()
    # started from a thread: the link answers on this loop meanwhile
    one, two = [
        await asyncio.to_thread(ServerProcess("--redis", link.url, "--rate", "1000").start) for _ in "12"
    ]
    store = await RedisStore.connect(redis_url)  # a quick one, for the test's own looks
    try:
        ann, bob = await WsClient.connect(one.url), await WsClient.connect(two.url)
        ids = [
            await c.request({"type": "hello", "name": n}, "welcome", 15)
            for c, n in ((ann, "Ann"), (bob, "Bob"))
        ]
        created = await ann.request({"type": "create", "rated": True}, "created", 15)
        code = created["match"]
        await bob.request({"type": "join", "match": code}, "joined", 15)
        for c in (ann, bob):
            await c.send({"type": "ready"})
        for c in (ann, bob):
            await c.expect("start", timeout=30)
        await ann.request({"type": "move", "seq": 1, "move": "T"}, "ack", 15)
        await asyncio.gather(ann.send({"type": "finish"}), bob.send({"type": "finish"}))
        async with asyncio.timeout(30):
            while await store.result(code) is None:
                await asyncio.sleep(0.005)
        await asyncio.gather(store.running(), store.running())  # the follow-ups, again, at once
        for c in (ann, bob):
            await c.expect("result", timeout=30)
            rated = await c.expect("rated", timeout=30)
            assert rated["match"] == code
        async with asyncio.timeout(30):
            while code.encode() in await store.client.smembers(RUNNING):
                await asyncio.sleep(0.01)
        result = await store.result(code)
        assert result is not None and ratings.is_rated(result)
        assert await store.rating_log("classic") == [code]
        stored = {w["player"]: (await store.ratings(w["player"]))["classic"] for w in ids}
        assert all(r.games == 1 for r in stored.values())
        assert ratings.replay([result])["classic"] == stored
        for w in ids:
            assert len(await store.rating_history(w["player"], "classic", 10)) == 1
            assert (await store.totals(w["player"])).games == 1
    finally:
        one.kill()
        two.kill()
        await store.close()
        await link.stop()
