"""Server processes on a real Redis Cluster: matches spread over the masters, slots that move, replicas.

The scenario suite runs on the cluster too (the ``cluster`` backend and
``shared_url``); these are what only a cluster has. The cluster is the
tests' own (``tests/cluster.py``): six ``redis-server`` processes, three
masters with a replica each.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster import ClusterNode, TestCluster
from tests.processes import ROOT, ServerProcess
from tests.scaleout.racing import assert_consecutive, play_through, running_servers, seat_two, start
from tests.server.wsclient import WsClient


@pytest.fixture
def three(cluster_url: str) -> Iterator[list[ServerProcess]]:
    with running_servers(cluster_url, 3) as procs:
        yield procs


def events_key(code: str) -> str:
    return f"grip:match:{{{code}}}:events"


def command_calls(node: ClusterNode) -> dict[str, int]:
    """``INFO commandstats``: calls of each command this node served since its last reset."""
    with node.client() as c:
        return {name.removeprefix("cmdstat_"): int(s["calls"]) for name, s in c.info("commandstats").items()}


async def test_matches_spread_over_every_master_and_race_across_three_processes(
    redis_cluster: TestCluster, three: list[ServerProcess]
) -> None:
    masters = redis_cluster.masters()
    for node in masters:
        with node.client() as c:
            c.config_resetstat()
    creators: dict[str, WsClient] = {}
    for i in range(30):  # 30 random match ids: all on two masters out of three, 1 time in 60,000
        c = await WsClient.connect(three[i % 3].url)
        creators[(await c.request({"type": "create", "seed": str(i), "name": "Ann"}, "created"))["match"]] = c
    by_master = {redis_cluster.master_of(events_key(code)).port: code for code in creators}
    assert set(by_master) == {node.port for node in masters}
    for node in masters:
        with node.client() as c:
            assert c.keys("grip:match:{*}:events"), f"master {node.port} holds no match"
    # one race on each master, each across the three processes
    for i, code in enumerate(by_master.values()):
        a = creators[code]
        b = await WsClient.connect(three[(i + 1) % 3].url)
        await b.request({"type": "join", "match": code, "name": "Bob"}, "joined")
        spectator = await WsClient.connect(three[(i + 2) % 3].url)
        await spectator.request({"type": "watch", "match": code}, "watching")
        await start(a, b)
        acks_a, acks_b = await asyncio.gather(play_through(a, 1, 6), play_through(b, 1, 4))
        for c in (a, b):
            await c.send({"type": "finish"})
        results = [await c.expect("result", timeout=15) for c in (a, b, spectator)]
        assert results[0] == results[1] == results[2]
        assert [s["moves"] for s in results[0]["seats"]] == [["T"] * 6, ["T"] * 4]
        assert acks_a[-1]["view"]["moves"] == 6 and acks_b[-1]["view"]["moves"] == 4
        assert_consecutive(spectator)
    # every master ran appends and carried pub/sub: sharded, never the broadcast kind
    for node in masters:
        calls = command_calls(node)
        assert calls.get("evalsha", 0) > 0 and calls.get("spublish", 0) > 0, (node.port, calls)
        assert calls.get("publish", 0) == 0, (node.port, calls)


def _cli(node: ClusterNode, *command: str) -> str:
    return subprocess.run(
        ["redis-cli", "-p", str(node.port), *command], capture_output=True, text=True, check=True, timeout=5
    ).stdout.strip()


def migrate_slot(cluster: TestCluster, key: str, batch: int) -> ClusterNode:
    """Move ``key``'s slot to another master as ``redis-cli --cluster reshard`` does, ``batch`` keys a step.

    Each step takes a while (``STEP_S``), as in a slot holding many
    matches: moves go on meanwhile. Some reach the keys where they were,
    some are sent on to the keys' new master (``ASK``) or find the slot
    moved (``MOVED``); while the match's keys are between the two, Redis
    answers ``TRYAGAIN`` and redis-py tries again.
    """
    source = cluster.master_of(key)
    target = next(n for n in cluster.masters() if n.port != source.port)
    slot = _cli(source, "cluster", "keyslot", key)
    source_id, target_id = _cli(source, "cluster", "myid"), _cli(target, "cluster", "myid")
    _cli(target, "cluster", "setslot", slot, "importing", source_id)
    _cli(source, "cluster", "setslot", slot, "migrating", target_id)
    time.sleep(STEP_S)
    while keys := _cli(source, "cluster", "getkeysinslot", slot, str(batch)).split():
        _cli(source, "migrate", "127.0.0.1", str(target.port), "", "0", "5000", "keys", *keys)
        time.sleep(STEP_S)
    for node in cluster.masters():
        _cli(node, "cluster", "setslot", slot, "node", target_id)
    time.sleep(STEP_S)
    return target


#: How long a step of the migration takes (the pace of the migration, not a wait for anything).
STEP_S = 0.04


@pytest.mark.parametrize("batch", [100, 1], ids=["whole", "key_by_key"])
async def test_a_slot_moving_mid_race_is_followed_not_shown(
    redis_cluster: TestCluster, three: list[ServerProcess], batch: int
) -> None:
    """MOVED and ASK are followed by the store, the bus resubscribes where the channel went.

    ``redis-cli --cluster reshard`` moves a slot's keys ten at a time by
    default, a match's seven in one step; moved a key at a time, the match's
    keys stay split between two masters for a while, and its appends wait
    that out. Either way no player notices.
    """
    a, b, created, _ = await seat_two(three[0].url, three[1].url)
    code = created["match"]
    spectator = await WsClient.connect(three[2].url)
    await spectator.request({"type": "watch", "match": code}, "watching")
    await start(a, b)
    played = 0
    migrated = asyncio.Event()

    async def keep_playing() -> None:
        """A turn each, at a racer's pace, while the slot moves (24 turns empty the stock)."""
        nonlocal played
        while not migrated.is_set() and played < 22:
            await asyncio.gather(play_through(a, played + 1, 1), play_through(b, played + 1, 1))
            played += 1
            await asyncio.sleep(STEP_S / 2)  # the racers' pace, not a wait for anything

    racing = asyncio.create_task(keep_playing())
    while played < 2:
        await asyncio.sleep(0.01)  # (polling the racers' progress)
    before = played
    target = await asyncio.to_thread(migrate_slot, redis_cluster, events_key(code), batch)
    during = played - before
    migrated.set()
    await racing
    assert during > 0  # moves went on while the slot moved
    assert redis_cluster.master_of(events_key(code)).port == target.port
    for c in (a, b):
        await c.send({"type": "finish"})
    results = [await c.expect("result", timeout=15) for c in (a, b, spectator)]
    assert results[0] == results[1] == results[2]
    assert [s["moves"] for s in results[0]["seats"]] == [["T"] * played] * 2
    assert_consecutive(spectator)
    assert [m for c in (a, b) for m in c.received if m["type"] == "rejected"] == []  # nobody noticed
    with target.client() as c:
        assert c.exists(events_key(code))


def start_server(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", "--port", "0", "--redis", url, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_replicas_asked_for_but_missing_stop_the_server_at_start(redis_url: str, tmp_path: Path) -> None:
    """Rather than hang every move on a WAIT no replica can answer."""
    bare = TestCluster(tmp_path, replicas=0).start()
    try:
        for url in (redis_url, bare.url):
            run = start_server(url, "--redis-replicas", "1")
            assert run.returncode != 0
            assert "--redis-replicas 1" in run.stderr and "has 0" in run.stderr, run.stderr
    finally:
        bare.stop()


async def test_with_replicas_asked_for_each_write_waits_for_them(
    redis_cluster: TestCluster, cluster_url: str
) -> None:
    with running_servers(cluster_url, 2, "--redis-replicas", "1") as procs:
        a, b, created, _ = await seat_two(procs[0].url, procs[1].url)
        master = redis_cluster.master_of(events_key(created["match"]))
        with master.client() as c:
            c.config_resetstat()
        await start(a, b)
        await asyncio.gather(play_through(a, 1, 5), play_through(b, 1, 5))
        assert command_calls(master).get("wait", 0) >= 10  # one for each move, at least
