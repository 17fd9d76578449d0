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

import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import redis

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
    label: str, url: str, common: list[str], redis_pids: list[int], offered: float, *more: str
) -> tuple[load.Phase, load.Phase]:
    """The closed loop, then the paced phase at ``offered`` (0: half this closed loop's rate)."""
    args = load.parse_args(
        [*common, "--redis", url, "--processes", "3", *(f"--server-arg={a}" for a in more)]
    )
    servers = load.start_servers(args, Path("unused"))
    redis = [load.Pid(pid) for pid in redis_pids]
    try:
        urls = [("127.0.0.1", s.port) for s in servers]
        closed = load.run_races(f"{label}, closed loop", args, servers, urls, 0.0, apart=redis)
        paced = load.run_races(
            f"{label}, paced", args, servers, urls, offered or closed.moves_s / 2, apart=redis
        )
    finally:
        for s in servers:
            s.stop()
    return closed, paced


@dataclass
class Round:
    single: tuple[load.Phase, load.Phase]
    cluster: tuple[load.Phase, load.Phase]
    replicas: tuple[load.Phase, load.Phase]
    calls: dict[int, dict[str, int]]
    offered: float


def one_round(
    common: list[str], single_url: str, single_pid: int, cluster: TestCluster, nodes: list[int]
) -> Round:
    """The three shapes in turn, the paced phases at half the single Redis's closed-loop rate."""
    single = shape("single Redis", single_url, common, [single_pid], 0.0)
    offered = single[0].moves_s / 2
    cluster.flush()
    reset_stats(cluster)
    clustered = shape("cluster", cluster.url, common, nodes, offered)
    calls = command_calls(cluster)
    cluster.flush()
    replicas = shape("cluster, --redis-replicas 1", cluster.url, common, nodes, offered, "--redis-replicas=1")
    return Round(single, clustered, replicas, calls, offered)


def report(r: Round) -> None:
    (s1, s2), (c1, c2), (w1, w2) = r.single, r.cluster, r.replicas
    for label, ph in (
        ("single Redis, closed loop", s1),
        ("cluster, closed loop", c1),
        ("cluster + replicas, closed loop", w1),
        (f"single Redis, paced at {r.offered:.0f}/s", s2),
        (f"cluster, paced at {r.offered:.0f}/s", c2),
        (f"cluster + replicas, paced at {r.offered:.0f}/s", w2),
    ):
        line(label, ph)
        for note in ph.tally.notes[:3]:
            print(f"      {note}")
    print("  per master, both cluster phases without replicas (share of the three):")
    totals = {cmd: sum(c.get(cmd, 0) for c in r.calls.values()) for cmd in COUNTED}
    everything = sum(sum(c.values()) for c in r.calls.values())
    for port, c in sorted(r.calls.items()):
        parts = "  ".join(
            f"{cmd} {c.get(cmd, 0):6d} ({c.get(cmd, 0) / totals[cmd] * 100:3.0f} %)"
            if totals[cmd]
            else f"{cmd} 0"
            for cmd in COUNTED
        )
        print(
            f"    master {port}: {parts}  all {sum(c.values()):6d} ({sum(c.values()) / everything * 100:3.0f} %)"
        )
    print("  CPU per move, closed loop: the 3 server processes / every redis-server (masters and replicas)")
    for label, ph in (("single Redis", s1), ("cluster", c1), ("cluster + replicas", w1)):
        print(f"    {label:20s} {ph.cpu_us_per_move:6.0f} us / {redis_us(ph):5.0f} us")


def redis_us(ph: load.Phase) -> float:
    return ph.apart_cpu * ph.wall / ph.tally.moves * 1e6 if ph.tally.moves else float("nan")


def main(argv: list[str] | None = None) -> int:
    ours, common = races_options(__doc__ or "", argv, races=60, duration=8.0)
    load_before = load.load_average()
    rounds: list[Round] = []
    with tempfile.TemporaryDirectory() as tmp:
        single, port = start_redis(ours.server_cpus, Path(tmp))
        (Path(tmp) / "cluster").mkdir()
        cluster = TestCluster(Path(tmp) / "cluster").start()
        try:
            nodes = [n.proc.pid for n in cluster.nodes if n.proc is not None]
            for pid in nodes:
                pin(pid, ours.server_cpus)
            for _ in range(ours.repeat):
                with redis.Redis(port=port) as r:
                    r.flushall()
                rounds.append(one_round(common, f"redis://127.0.0.1:{port}/0", single.pid, cluster, nodes))
        finally:
            cluster.stop()
            single.terminate()
            single.wait(10)
    print(f"\n{ours.races} races over 3 server processes, {ours.duration:.0f} s measured per phase, "
          f"{ours.repeat} round(s); servers and redis-servers on CPUs {ours.server_cpus}, {ours.clients} client "
          f"processes on CPUs {ours.client_cpus}; load average before {load_before}, after {load.load_average()}")  # fmt: skip
    for n, r in enumerate(rounds, 1):
        print(f"round {n}:")
        report(r)

    def median(f: Callable[[Round], float]) -> str:
        xs = sorted(f(r) for r in rounds)
        return f"{statistics.median(xs):6.2f}  ({xs[0]:.2f}-{xs[-1]:.2f})"

    shares = [
        sum(c.values()) / sum(sum(c.values()) for c in r.calls.values()) * 100
        for r in rounds
        for c in r.calls.values()
    ]
    print("medians over the rounds (and their range):")
    print(
        f"  cluster / single Redis, sustained moves/s        {median(lambda r: r.cluster[0].moves_s / r.single[0].moves_s)}x"
    )
    print(
        f"  replicas / no replicas (cluster), moves/s        {median(lambda r: r.replicas[0].moves_s / r.cluster[0].moves_s)}x"
    )
    print(
        f"  WAIT per move, paced: ack p50 increase           {median(lambda r: load.pct(r.replicas[1].tally.ack_ms, 50) - load.pct(r.cluster[1].tally.ack_ms, 50))} ms"
    )
    print(
        f"  server CPU per move, replicas / none             {median(lambda r: r.replicas[0].cpu_us_per_move / r.cluster[0].cpu_us_per_move)}x"
    )
    print(
        f"  each master's share of all commands              {min(shares):.0f}-{max(shares):.0f} % (a third: 33 %)"
    )
    phases = [ph for r in rounds for ph in (*r.single, *r.cluster, *r.replicas)]
    errors = sum(ph.tally.rejects + ph.tally.errors for ph in phases)
    print(f"rejects+errors: {errors}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
