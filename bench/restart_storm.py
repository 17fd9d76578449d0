"""A restart under load: the embedded server restarted while races are played, and the reconnect storm after.

    .venv/bin/python bench/restart_storm.py --races 200

Starts ``python -m server`` (SQLite, a data directory of its own), seats
``--races`` races of two Python clients (``client.api``, protocol v2; its
reconnect and resume as any user's) and has every racer play a greedy move
every ``--pace`` seconds (with jitter). After ``--warm`` seconds the server is
stopped as a deploy stops it (SIGTERM) and started again on the same port and
data, ``--down`` seconds after it ended (a deploy's new process, or container,
taking that long to come up). Printed: how long the old process took to stop; the clients' dials from
then on (how many, and the most in any 100 ms: clients in lockstep come at
once); from the new process's
start, when ``/healthz`` first answered, when every client had its seat back
(resumed), and when every racer had a move acknowledged again; the new
process's CPU and peak RSS up to then; the errors clients met; then, each
seat resumed once more and compared with what its racer saw acknowledged,
any acknowledged move lost (the server's ``last_seq`` short of it) or
applied twice (more moves on the board than seqs acknowledged).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import collections
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import ClientConnection  # noqa: E402

from bench.load import proc_cpu_s  # noqa: E402
from client import Client, ClientError, connect  # noqa: E402
from server import protocol as p  # noqa: E402
from server.engine.view_players import greedy_view  # noqa: E402

LIMITS = ["--identity-burst", "100000", "--address-match-burst", "100000", "--match-burst", "100000"]
LIMITS += ["--games-per-address", "100000", "--lobbies-per-address", "100000"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(port: int, data: str) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "server", "--port", str(port), "--data", data, "--log", "WARNING", *LIMITS]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL)


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Racer:
    """One client: plays while ``go``, and remembers what was acknowledged and when."""

    def __init__(self, c: Client, dials: list[float]) -> None:
        self.c = c
        self.last_resumed = 0.0
        real_dial = c._dial

        async def dial() -> ClientConnection:  # every attempt's time, answered or not
            dials.append(time.monotonic())
            return await real_dial()

        c._dial = dial  # type: ignore[method-assign]
        self.acked = 0  # acks play() returned: one a seq, seqs 1, 2, 3, ...
        self.last_ack = 0.0
        self.done = False  # out of moves (greedy's)
        self.errors: collections.Counter[str] = collections.Counter()

    async def play(self, pace: float, go: asyncio.Event) -> None:
        while go.is_set():
            await asyncio.sleep(pace * random.uniform(0.5, 1.5))
            view = self.c.view
            if view is None:  # the countdown
                continue
            move = greedy_view(view.model_dump())
            if move is None:  # greedy would finish here: out of the count
                self.done = True
                return
            try:
                ack = await self.c.play(move, timeout=60)
            except ClientError as exc:
                self.errors[type(exc).__name__ + ": " + str(exc)[:60]] += 1
                if self.c.lost is not None:
                    return
                continue
            self.acked = ack.seq
            self.last_ack = time.monotonic()

    async def drain(self) -> None:
        try:
            async for ev in self.c.events():
                if isinstance(ev, p.Resumed):
                    self.last_resumed = time.monotonic()
                elif isinstance(ev, p.Error):
                    self.errors[f"error {ev.code.value}"] += 1
        except ClientError as exc:
            self.errors[type(exc).__name__ + ": " + str(exc)[:60]] += 1


async def seat(url: str, n: int) -> tuple[Client, Client]:
    a = await connect(url, name="Ann")
    b = await connect(url, name="Bob")
    seated = await a.create(deal=n + 1)
    await b.join(seated.match)
    await a.ready()
    await b.ready()
    return a, b


async def run(args: argparse.Namespace) -> None:
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="storm-") as data:
        server = start(port, data)
        while not healthy(port):
            await asyncio.sleep(0.05)
        pairs: list[tuple[Client, Client]] = []
        for first in range(0, args.races, 50):
            pairs += await asyncio.gather(*(seat(url, n) for n in range(first, min(first + 50, args.races))))
            print(f"  {len(pairs)} races seated", file=sys.stderr, flush=True)
        dials: list[float] = []
        racers = [Racer(c, dials) for pair in pairs for c in pair]
        go = asyncio.Event()
        go.set()
        tasks = [asyncio.create_task(r.play(args.pace, go)) for r in racers]
        tasks += [asyncio.create_task(r.drain()) for r in racers]
        await asyncio.sleep(args.warm)
        before = sum(r.acked for r in racers)
        print(f"  restarting; {before} moves acknowledged", file=sys.stderr, flush=True)
        stopping = time.monotonic()
        server.send_signal(signal.SIGTERM)
        await asyncio.to_thread(server.wait)
        stopped = time.monotonic() - stopping
        await asyncio.sleep(args.down)  # a deploy's new process comes up this much later
        t0 = time.monotonic()
        server = start(port, data)
        cpu0 = proc_cpu_s(server.pid)
        health = resumed = playing = None
        deadline = t0 + args.timeout
        while time.monotonic() < deadline and playing is None:
            now = time.monotonic()
            if health is None and await asyncio.to_thread(healthy, port):
                health = now - t0
            live = [r for r in racers if r.c.lost is None and not r.done]
            if resumed is None and all(r.last_resumed > t0 for r in live):
                resumed = now - t0
            if all(r.last_ack > t0 for r in live):
                playing = now - t0
            await asyncio.sleep(0.02)
        cpu = proc_cpu_s(server.pid) - cpu0
        rss = peak_rss_mib(server.pid)
        print(f"  storm over: {health=} {resumed=} {playing=}", file=sys.stderr, flush=True)
        go.clear()
        await asyncio.gather(*tasks[: len(racers)])
        lost_clients = sum(r.c.lost is not None for r in racers)
        # The server's word on each seat: resume once more, compare with what was acknowledged.
        lost = doubled = 0
        for r in racers:
            if r.c.lost is not None or r.c.match is None or r.c.token is None:
                continue
            got = await r.c.resume(r.c.match, r.c.token)
            moves = got.view.moves if got.view is not None else 0
            lost += got.last_seq < r.acked
            doubled += moves > got.last_seq
        errors: collections.Counter[str] = collections.Counter()
        for r in racers:
            errors.update(r.errors)
        for r in racers:
            await r.c.close()
        await asyncio.gather(*tasks, return_exceptions=True)
        server.send_signal(signal.SIGTERM)
        server.wait()

    def s(x: float | None) -> str:
        return "never" if x is None else f"{x:.2f} s"

    print(f"{args.races} races, {len(racers)} clients, a move each every ~{args.pace:g} s")
    print(f"  {before} moves acknowledged before the restart; the old process stopped in {stopped:.2f} s")
    dialed = sorted(d for d in dials if d >= stopping)
    after = dialed[bisect.bisect_left(dialed, t0) :]
    peak = max((bisect.bisect_left(after, d + 0.1) - i for i, d in enumerate(after)), default=0)
    print(f"  {len(dialed)} dials after the stop began (down {args.down:g} s), {len(after)} once the new")
    print(f"  process had started, at most {peak} of those in 100 ms")
    back = sorted(r.last_resumed - t0 for r in racers if r.last_resumed > t0)
    if back:
        q = statistics.quantiles(back, n=10)
        print(
            f"  seats back from the new start: median {q[4]:.2f} s, 90th {q[8]:.2f} s, last {back[-1]:.2f} s"
        )
    print(f"  from the new process's start: /healthz {s(health)}, every seat resumed {s(resumed)},")
    print(f"  every racer's move acknowledged again {s(playing)}")
    print(f"  new process up to then: {cpu:.2f} s CPU, peak RSS {rss:.0f} MiB")
    print(
        f"  clients that gave up: {lost_clients}; acknowledged moves lost: {lost}, applied twice: {doubled}"
    )
    for what, n in errors.most_common(8):
        print(f"  {n:6d} x {what}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--races", type=int, default=200)
    ap.add_argument("--pace", type=float, default=1.0, help="seconds between a racer's moves (jittered)")
    ap.add_argument("--warm", type=float, default=5.0, help="seconds of play before the restart")
    ap.add_argument(
        "--down", type=float, default=0.0, help="seconds between the old process's end and the new's start"
    )
    ap.add_argument(
        "--timeout", type=float, default=90.0, help="seconds to wait for every racer to play again"
    )
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
