"""A race whose process died, with nobody coming back for it, is still settled.

Timers run only where a match is loaded: a race left by a crashed process
(embedded: the previous run) must be taken in by a live one, or it stays
undecided for good (``Liveness.adopt_orphans``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakeclock import FakeClock
from race import MakeAppT, kick
from wsclient import WsClient

from server import liveness
from server.hub import UNLOAD_DECIDED_AFTER_MS
from server.match.events import Ended
from server.match.state import COUNTDOWN_MS
from server.protocol import now_ms
from server.store import open_store
from server.store.redis import RUNNING, RedisStore
from server.store.sqlite import SqliteStore
from tests.processes import ServerProcess
from tests.store_events import append, reopened_without, started

M = "ACDEFGHJ"


async def test_the_store_lists_a_race_from_its_countdown_to_its_decision(backend: dict[str, str]) -> None:
    store = await open_store(backend["store_url"])
    m = await started(store, M)
    leases = ("inst0-1", "inst1-1") if isinstance(store, RedisStore) else ()
    assert await store.running() == {M: leases}
    await append(store, m, m.tick(COUNTDOWN_MS))
    assert M in await store.running()
    await append(store, m, m.decide_leave(0, COUNTDOWN_MS))
    await append(store, m, m.decide_leave(1, COUNTDOWN_MS))  # both resigned: decided
    assert m.status == "finished"
    assert await store.running() == {}
    await store.close()


async def test_a_data_file_from_before_the_list_gets_its_running_races_listed(tmp_path: Path) -> None:
    path = str(tmp_path / "grip.db")
    store = SqliteStore(path)
    await started(store, M)
    await store.close()
    store = reopened_without(path, "running")
    assert await store.running() == {M: ()}
    await store.close()


async def test_a_race_whose_keys_expired_leaves_the_list(redis_url: str) -> None:
    """Every process died under it and its keys ran out: nothing is left to take in."""
    store = await RedisStore.connect(redis_url)
    await started(store, M)
    await store._redis.delete(f"grip:match:{{{M}}}:events")
    assert await store.running() == {}
    assert await store._redis.smembers(RUNNING) == set()
    await store.close()


async def test_a_race_its_process_died_under_ends_with_nobody_touching_it(
    backend: dict[str, str], make_app: MakeAppT, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kill -9 with both racers on the dead process, none coming back, no other process holding it.

    Embedded: the server restarted on its data takes the race in at start.
    Redis: a live process that never had it loaded takes it in once the dead
    one's heartbeat runs out. Either way the racers are recorded as dropped,
    abandoned after the grace period, and the result is written.
    """
    monkeypatch.setattr(liveness, "HEARTBEAT_S", 0.05)  # the survivor's beats: quick, not 6 s to steady
    monkeypatch.setattr(liveness, "INSTANCE_TTL_MS", 300)
    scaled_out = backend["store_url"].startswith("redis")
    clock = FakeClock(now_ms())  # the crashed server ran on real time
    survivor = await make_app(clock=clock, **backend) if scaled_out else None
    args = ["--redis", backend["store_url"]] if scaled_out else ["--data", str(tmp_path)]
    crashing = ServerProcess(*args).start()
    try:
        ann, bob = await WsClient.connect(crashing.url), await WsClient.connect(crashing.url)
        created = await ann.request({"type": "create", "seed": "3"}, "created")
        code = created["match"]
        await bob.request({"type": "join", "match": code}, "joined")
        for c in (ann, bob):
            await c.send({"type": "ready"})
        await ann.expect("start", timeout=10)
        await ann.request({"type": "move", "seq": 1, "move": "T"}, "ack")
    finally:
        crashing.kill()
    if survivor is None:
        survivor = await make_app(clock=clock, **backend)
        assert code in survivor.hub.live  # taken in at start
    async with asyncio.timeout(30):  # Redis: the dead one's heartbeat (6 s) runs out first
        while (lm := survivor.hub.live.get(code)) is None or any(
            s is not None and s.conn is not None for s in lm.match.seats
        ):
            await asyncio.sleep(0.05)
    assert survivor.hub.sweep() == [] and code in survivor.hub.live  # its timers run here: kept
    kick(survivor, code, survivor.settings.grace_ms)
    async with asyncio.timeout(10):
        while await survivor.store.result(code) is None:
            await asyncio.sleep(0.01)
    events = await survivor.store.events(code)
    assert sorted((e.seat, e.reason) for e in events if isinstance(e, Ended)) == [
        (0, "abandoned"),
        (1, "abandoned"),
    ]
    assert code not in await survivor.store.running()
    clock.advance(UNLOAD_DECIDED_AFTER_MS + 1)
    survivor.hub.sweep()  # a decided orphan nobody watches leaves memory like any other
    assert code not in survivor.hub.live
