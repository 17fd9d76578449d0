"""A Redis Cluster losing nodes under live races: kill -9 a master, a replica, a whole shard.

Each test has a cluster of its own (these break it). With ``--redis-replicas
1`` an acknowledged move is on the replica too, so a master's death loses
none: every acked move is in the result, once. Moves the cluster cannot take
are answered ``unavailable`` (send it again), never acknowledged falsely.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from server.store import open_store
from tests.cluster import ClusterNode, TestCluster, wait_until
from tests.conftest import need_redis_cluster_programs
from tests.processes import ServerProcess
from tests.scaleout.racing import (
    assert_consecutive,
    healthz,
    play_through,
    reply,
    running_servers,
    seat_two,
    start,
    wait_for,
)
from tests.server.wsclient import WsClient


@pytest.fixture
def own_cluster(tmp_path: Path) -> Iterator[TestCluster]:
    need_redis_cluster_programs()
    cluster = TestCluster(tmp_path).start()
    yield cluster
    cluster.stop()


def events_key(code: str) -> str:
    return f"grip:match:{{{code}}}:events"


def replica_of(cluster: TestCluster, master: ClusterNode) -> ClusterNode:
    with master.client() as c:
        return cluster.node(int(c.info("replication")["slave0"]["port"]))


async def watched_health(proc: ServerProcess, seen: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        seen.append((await asyncio.to_thread(healthz, proc))[0])
        await asyncio.sleep(0.05)


Acks = list[list[dict[str, Any]]]  # each racer's, in order


async def both_play_on(a: WsClient, b: WsClient, acks: Acks, n: int, timeout: float = 30) -> Acks:
    """Both racers play n more turns, each from the seq after their last ack: ``acks`` and theirs."""
    more = await asyncio.gather(
        *(play_through(c, len(mine) + 1, n, timeout) for c, mine in zip((a, b), acks, strict=True))
    )
    return [mine + new for mine, new in zip(acks, more, strict=True)]


async def finish_and_check(a: WsClient, b: WsClient, spectator: WsClient, acks: Acks) -> dict[str, Any]:
    """Both finish; everyone gets the same result, holding each acknowledged move once."""
    for c in (a, b):
        await c.send({"type": "finish"})
    results = [await c.expect("result", timeout=30) for c in (a, b, spectator)]
    assert results[0] == results[1] == results[2]
    assert [s["moves"] for s in results[0]["seats"]] == [["T"] * len(seat) for seat in acks]
    for seat, acked in enumerate(acks):
        assert [ack["seq"] for ack in acked] == list(range(1, len(acked) + 1))
        assert results[0]["seats"][seat]["score"] == acked[-1]["view"]["leftover"]
    assert_consecutive(spectator)
    return results[0]


async def test_a_master_killed_mid_race_loses_no_acknowledged_move(own_cluster: TestCluster) -> None:
    """kill -9 the master holding a live race: its replica takes over; racers and spectator go on."""
    with running_servers(own_cluster.url, 3, "--redis-replicas", "1") as procs:
        a, b, created, _ = await seat_two(procs[0].url, procs[1].url)
        key = events_key(created["match"])
        spectator = await WsClient.connect(procs[2].url)
        await spectator.request({"type": "watch", "match": created["match"]}, "watching")
        await start(a, b)
        acks = await both_play_on(a, b, [[], []], 4)
        health: list[int] = []
        stop = asyncio.Event()
        watcher = asyncio.create_task(watched_health(procs[2], health, stop))
        rest = asyncio.ensure_future(both_play_on(a, b, acks, 14, timeout=90))
        master = own_cluster.master_of(key)
        master.kill()  # while both racers' moves are in flight
        await asyncio.to_thread(
            wait_until, lambda: own_cluster.master_of(key).port != master.port, 30, "the replica takes over"
        )
        # the new master has no replica left: nothing can be acknowledged until the old one is back
        master.start()
        await asyncio.to_thread(own_cluster.wait_ok)
        acks = await rest
        await wait_for(lambda: healthz(procs[2])[0] == 200)
        stop.set()
        await watcher
        assert 503 in health  # the store was reported down while the slot had no master
        await finish_and_check(a, b, spectator, acks)


async def test_a_replica_killed_under_load_holds_back_acks_until_it_is_back(own_cluster: TestCluster) -> None:
    """With ``--redis-replicas 1`` a move its master cannot copy is not acknowledged, only there.

    Two races on two masters; the replica of one race's master dies: that
    race's moves are answered ``unavailable`` until it is back, the other's
    never are.
    """
    with running_servers(own_cluster.url, 2, "--redis-replicas", "1") as procs:
        races: dict[int, tuple[WsClient, WsClient, dict[str, Any]]] = {}
        while len(races) < 2:  # two races whose matches live on two different masters
            a, b, created, _ = await seat_two(procs[0].url, procs[1].url)
            races.setdefault(own_cluster.master_of(events_key(created["match"])).port, (a, b, created))
        (hit_port, (a, b, hit)), (_, (c, d, _)) = races.items()
        spectator = await WsClient.connect(procs[1].url)
        await spectator.request({"type": "watch", "match": hit["match"]}, "watching")
        for x, y in ((a, b), (c, d)):
            await start(x, y)
        acks = await both_play_on(a, b, [[], []], 3)
        replica = replica_of(own_cluster, own_cluster.node(hit_port))
        replica.kill()
        await a.send({"type": "move", "seq": 4, "move": "T"})
        refused = await reply(a)
        assert refused["type"] == "rejected" and refused["code"] == "unavailable"
        other = await asyncio.gather(play_through(c, 1, 8, timeout=20), play_through(d, 1, 8, timeout=20))
        assert not [m for x in (c, d) for m in x.received if m["type"] == "rejected"]  # untouched
        assert [len(x) for x in other] == [8, 8]
        replica.start()
        await finish_and_check(a, b, spectator, await both_play_on(a, b, acks, 6, timeout=60))


@pytest.fixture
def durable_cluster(tmp_path: Path) -> Iterator[TestCluster]:
    """Nodes with AOF on: a shard whose master and replica both die comes back with its data."""
    need_redis_cluster_programs()
    cluster = TestCluster(tmp_path, "--appendonly", "yes", "--appendfsync", "always").start()
    yield cluster
    cluster.stop()


async def test_a_cluster_that_lost_a_slot_is_degraded_and_refuses_moves(durable_cluster: TestCluster) -> None:
    with running_servers(durable_cluster.url, 2) as procs:
        a, b, created, _ = await seat_two(procs[0].url, procs[1].url)
        spectator = await WsClient.connect(procs[1].url)
        await spectator.request({"type": "watch", "match": created["match"]}, "watching")
        await start(a, b)
        acks = await both_play_on(a, b, [[], []], 3)
        master = durable_cluster.master_of(events_key(created["match"]))
        shard = [master, replica_of(durable_cluster, master)]
        for node in shard:
            node.kill()  # no copy of those slots is left
        await wait_for(lambda: all(healthz(p)[0] == 503 for p in procs), timeout=30)
        for player, seq in ((a, 4), (b, 4)):
            await player.send({"type": "move", "seq": seq, "move": "T"})
            answer = await reply(player)
            assert answer["type"] == "rejected" and answer["code"] == "unavailable"
        for node in shard:
            node.start()
        await asyncio.to_thread(durable_cluster.wait_ok)
        await wait_for(lambda: all(healthz(p)[0] == 200 for p in procs), timeout=30)
        await finish_and_check(a, b, spectator, await both_play_on(a, b, acks, 3))


async def test_a_cluster_out_of_reach_is_unhealthy_not_an_error(own_cluster: TestCluster) -> None:
    """With no node answering, redis-py's cluster client raises ``RedisClusterUnreachableError``.

    That is no ``RedisError``: the store's ping let it out, and ``/healthz``
    answered websockets' 500 page instead of 503 (most likely the page a
    failover test's poll of it read once, on a busy machine).
    """
    store = await open_store(own_cluster.url)
    try:
        assert await store.ping()
        for node in own_cluster.nodes:
            node.kill()
        assert [await store.ping() for _ in range(3)] == [False, False, False]
    finally:
        await store.close()
