"""Races across two server processes over Redis, against the same load on one embedded process.

    .venv/bin/python bench/redis_fanout.py --races 40 --duration 10

Both setups get the same CPU budget: the embedded server alone on
``--server-cpus`` (CPU 0); for Redis, two ``python -m server --redis``
processes *and* the throwaway ``redis-server`` on those same CPUs. The bot
clients are bench/load.py's (worker processes on ``--client-cpus``); in the
Redis setup the two players of each race sit on different processes, so
every move reaches the opponent over Redis pub/sub.

Each setup runs closed loop (the maximum), then open loop at the same offered
rate (half the embedded maximum). Printed: moves/s and p50/p99 of
move-to-opponent-progress for both, with server CPU, and Redis/embedded ratios.
Targets: Redis keeps >= 0.5 of the embedded throughput, and its p99
move-to-progress stays under 3x the embedded p99.

The redis-server is our own, on a free port, with no persistence, in a
temporary directory; nothing touches 127.0.0.1:6379.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load  # bench/load.py: the bots, the worker pool, the reports


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_redis(cpus: str, tmp: Path) -> tuple[subprocess.Popen[bytes], int]:
    exe = shutil.which("redis-server")
    if exe is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen(
        [*load.pinned(cpus), exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("redis-server did not start")


def line(label: str, ph: load.Phase) -> None:
    t = ph.tally
    print(f"  {label:34s} {ph.moves_s:8.0f} moves/s   move->progress p50 {load.pct(t.progress_ms, 50):7.2f}"
          f"  p99 {load.pct(t.progress_ms, 99):8.2f} ms   move->ack p99 {load.pct(t.ack_ms, 99):8.2f} ms   "
          f"server CPU {ph.server_cpu * 100:4.0f} %  ({ph.cpu_us_per_move:.0f} us/move)   "
          f"rejects {t.rejects}, errors {t.errors}")  # fmt: skip


def races_options(
    description: str, argv: list[str] | None, races: int, duration: float
) -> tuple[argparse.Namespace, list[str]]:
    """This bench's options, and bench/load.py's arguments for the same races."""
    ap = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--races", type=int, default=races)
    ap.add_argument("--duration", type=float, default=duration)
    ap.add_argument("--warmup", type=float, default=4.0)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--server-cpus", default="0", help="servers and redis-servers (taskset list)")
    ap.add_argument("--client-cpus", default="1-")
    ap.add_argument("--repeat", type=int, default=1, help="rounds, then medians (where the bench takes them)")
    ours = ap.parse_args(argv)
    common = [
        "--races", str(ours.races), "--duration", str(ours.duration), "--warmup", str(ours.warmup),
        "--clients", str(ours.clients), "--server-cpus", ours.server_cpus, "--client-cpus", ours.client_cpus,
    ]  # fmt: skip
    return ours, common


def main(argv: list[str] | None = None) -> int:
    ours, common = races_options(__doc__ or "", argv, races=40, duration=10.0)
    load_before = load.load_average()
    with tempfile.TemporaryDirectory() as tmp:
        args = load.parse_args(common)
        servers = load.start_servers(args, Path(tmp) / "embedded")
        try:
            urls = [("127.0.0.1", s.port) for s in servers]
            e1 = load.run_races("embedded, closed loop", args, servers, urls, 0.0)
            offered = e1.moves_s / 2
            e2 = load.run_races("embedded, paced", args, servers, urls, offered)
        finally:
            for s in servers:
                s.stop()
        redis, port = start_redis(ours.server_cpus, Path(tmp))
        try:
            args = load.parse_args([*common, "--redis", f"redis://127.0.0.1:{port}/0", "--processes", "2"])
            servers = load.start_servers(args, Path(tmp) / "unused")
            budget = [*servers, load.Pid(redis.pid)]  # the servers and Redis share the CPU budget
            try:
                urls = [("127.0.0.1", s.port) for s in servers]
                r1 = load.run_races("redis, closed loop", args, budget, urls, 0.0)
                r2 = load.run_races("redis, paced", args, budget, urls, offered)
            finally:
                for s in servers:
                    s.stop()
        finally:
            redis.terminate()
            redis.wait(10)
    print(f"\n{ours.races} races, {ours.duration:.0f} s measured per phase; servers (and redis-server) on CPUs "
          f"{ours.server_cpus}, {ours.clients} client processes on CPUs {ours.client_cpus}; "
          f"load average before {load_before}, after {load.load_average()}")  # fmt: skip
    line("embedded (1 process), closed loop", e1)
    line("redis (2 processes), closed loop", r1)
    line(f"embedded, paced at {offered:.0f} moves/s", e2)
    line(f"redis, paced at {offered:.0f} moves/s", r2)
    tp = r1.moves_s / e1.moves_s if e1.moves_s else float("nan")
    p99 = load.pct(r2.tally.progress_ms, 99) / load.pct(e2.tally.progress_ms, 99)
    p50 = load.pct(r2.tally.progress_ms, 50) / load.pct(e2.tally.progress_ms, 50)
    cost = r1.cpu_us_per_move / e1.cpu_us_per_move
    print("redis / embedded:")
    print(f"  sustained moves/s              {tp:6.2f}x   (target >= 0.5)")
    print(f"  p99 move->progress, same load  {p99:6.2f}x   (target < 3)")
    print(f"  p50 move->progress, same load  {p50:6.2f}x")
    print(f"  CPU per move (servers + redis) {cost:6.2f}x")
    errors = sum(ph.tally.rejects + ph.tally.errors for ph in (e1, e2, r1, r2))
    print(f"rejects+errors: {errors}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
