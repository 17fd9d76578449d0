"""Three server processes on one Redis, then on a three-master Redis Cluster: same load, same run.

    .venv/bin/python bench/cluster.py --races 60 --duration 8

Starts its own ``redis-server`` and its own six-node cluster (three masters,
a replica each: ``tests/cluster.py``), on free ports, no persistence. Three
``python -m server --redis URL`` processes serve bench/load.py's bot races
(each race's two players on two different processes, so every move crosses
Redis pub/sub), in turn:

1. a single Redis, closed loop (the maximum), then paced;
2. the cluster, the same; each master's ``INFO commandstats`` counted over
   the closed loop (calls of the append script, of ``SPUBLISH``, of every
   command), to show each master carrying about a third of the matches' work;
3. the cluster with ``--redis-replicas 1`` (a ``WAIT`` after each write),
   the same: what waiting for the replica costs a move.

The paced phases offer the same rate (half the single Redis maximum), so
their move-to-ack latencies compare directly. Servers, redis-servers and
clients share this machine's CPUs as ``--server-cpus`` and ``--client-cpus``
say: on a machine this small the cluster has no more CPU than the single
Redis, and the figure that carries to a bigger one is the per-master share.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # noqa: E402  (bench/load.py: the bots, the worker pool, the reports)
from redis_fanout import line, races_options, start_redis  # noqa: E402

from tests.cluster import TestCluster  # noqa: E402

COUNTED = ("evalsha", "spublish", "publish", "wait")


def pin(pid: int, cpus: str) -> None:
    if cpus and load.pinned(cpus):
        subprocess.run(["taskset", "-pc", cpus, str(pid)], stdout=subprocess.DEVNULL, check=True)


def command_calls(cluster: TestCluster) -> dict[int, dict[str, int]]:
    """Calls of each command, by master port, since the last reset."""
    out = {}
    for node in cluster.masters():
        with node.client() as c:
            stats = c.info("commandstats")
        out[node.port] = {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}
    return out


def reset_stats(cluster: TestCluster) -> None:
    for node in cluster.masters():
        with node.client() as c:
            c.config_resetstat()


def shape(
    label: str, url: str, common: list[str], budget_pids: list[int], offered: float, *more: str
) -> tuple[load.Phase, load.Phase]:
    """The closed loop, then the paced phase at ``offered`` (0: half this closed loop's rate)."""
    args = load.parse_args(
        [*common, "--redis", url, "--processes", "3", *(f"--server-arg={a}" for a in more)]
    )
    servers = load.start_servers(args, Path("unused"))
    budget = [*servers, *(load.Pid(pid) for pid in budget_pids)]
    try:
        urls = [("127.0.0.1", s.port) for s in servers]
        closed = load.run_races(f"{label}, closed loop", args, budget, urls, 0.0)
        paced = load.run_races(f"{label}, paced", args, budget, urls, offered or closed.moves_s / 2)
    finally:
        for s in servers:
            s.stop()
    return closed, paced


def main(argv: list[str] | None = None) -> int:
    ours, common = races_options(__doc__ or "", argv, races=60, duration=8.0)
    load_before = load.load_average()
    with tempfile.TemporaryDirectory() as tmp:
        single, port = start_redis(ours.server_cpus, Path(tmp))
        try:
            s1, s2 = shape("single Redis", f"redis://127.0.0.1:{port}/0", common, [single.pid], 0.0)
        finally:
            single.terminate()
            single.wait(10)
        offered = s1.moves_s / 2  # the paced rate of the single Redis
        (Path(tmp) / "cluster").mkdir()
        cluster = TestCluster(Path(tmp) / "cluster").start()
        try:
            nodes = [n.proc.pid for n in cluster.nodes if n.proc is not None]
            for pid in nodes:
                pin(pid, ours.server_cpus)
            reset_stats(cluster)
            c1, c2 = shape("cluster", cluster.url, common, nodes, offered)
            calls = command_calls(cluster)
            cluster.flush()
            w1, w2 = shape(
                "cluster, --redis-replicas 1", cluster.url, common, nodes, offered, "--redis-replicas=1"
            )
        finally:
            cluster.stop()
    print(f"\n{ours.races} races over 3 server processes, {ours.duration:.0f} s measured per phase; servers and "
          f"redis-servers on CPUs {ours.server_cpus}, {ours.clients} client processes on CPUs "
          f"{ours.client_cpus}; load average before {load_before}, after {load.load_average()}")  # fmt: skip
    for label, ph in (
        ("single Redis, closed loop", s1),
        ("cluster, closed loop", c1),
        ("cluster + replicas, closed loop", w1),
        (f"single Redis, paced at {offered:.0f}/s", s2),
        (f"cluster, paced at {offered:.0f}/s", c2),
        (f"cluster + replicas, paced at {offered:.0f}/s", w2),
    ):
        line(label, ph)
    print("per master, over both cluster phases without replicas (share of the three):")
    totals = {cmd: sum(c.get(cmd, 0) for c in calls.values()) for cmd in COUNTED}
    everything = sum(sum(c.values()) for c in calls.values())
    for port_, c in sorted(calls.items()):
        parts = "  ".join(
            f"{cmd} {c.get(cmd, 0):7d} ({c.get(cmd, 0) / totals[cmd] * 100:3.0f} %)"
            if totals[cmd]
            else f"{cmd} 0"
            for cmd in COUNTED
        )
        print(
            f"  master {port_}: {parts}  all commands {sum(c.values()):7d} ({sum(c.values()) / everything * 100:3.0f} %)"
        )
    print("ratios:")
    print(f"  cluster / single Redis, sustained moves/s    {c1.moves_s / s1.moves_s:6.2f}x")
    print(f"  replicas / no replicas (cluster), moves/s    {w1.moves_s / c1.moves_s:6.2f}x")
    wait_ms = load.pct(w2.tally.ack_ms, 50) - load.pct(c2.tally.ack_ms, 50)
    print(f"  WAIT per move, paced: ack p50 +{wait_ms:.2f} ms, "
          f"CPU per move {w1.cpu_us_per_move / c1.cpu_us_per_move:.2f}x")  # fmt: skip
    errors = sum(ph.tally.rejects + ph.tally.errors for ph in (s1, s2, c1, c2, w1, w2))
    print(f"rejects+errors: {errors}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
