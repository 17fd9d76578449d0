"""Load benchmark: races of bot pairs (plus spectators) against a real server process.

    .venv/bin/python bench/load.py --races 40 --duration 15            # throughput + latency
    .venv/bin/python bench/load.py --races 0 --players 2000            # connected players, RSS each
    .venv/bin/python bench/load.py --races 0 --watchers 1000           # one match, 1000 spectators

The server runs as ``python -m server`` in a subprocess pinned to CPU 0
(``taskset``), with a high ``--rate``; the clients run here, pinned to the
other CPUs. Several server processes with ``--redis URL --processes N``.

Races phase, run twice, against our server and against ``bench/echo_server.py``
(a bare websockets relay sending the same message sizes to the same clients):
first closed-loop (each player sends its next move when the last is acked:
the sustained maximum), then paced at half of our maximum. Printed: moves/s,
p50/p95/p99 of move-to-ack and move-to-opponent-progress (and to spectators),
server CPU and RSS per connection from /proc, rejects and errors, and our
figures as ratios of the echo server's.

Bot players are lean (raw websockets, ``json.loads``, greedy from the view)
so that the client side costs little next to the server; every pair plays
greedy games back to back (create, join, ready, 3 s countdown, play).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.engine.view_players import greedy_view  # noqa: E402

LISTENING = re.compile(r"listening on http://[\d.]+:(\d+)/")
LAST_MOVES = re.compile(r'"moves":(\d+)')
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


# ----------------------------------------------------------------- processes


class Proc:
    """A server process: start, port, CPU seconds and RSS from /proc."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        self.port = 0
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            if m := LISTENING.search(line):
                self.port = int(m.group(1))
                break
        if not self.port:
            self.stop()
            raise RuntimeError(f"did not start: {argv}")
        # keep reading output so the pipe never fills
        self._drain = asyncio.get_event_loop().run_in_executor(None, self.proc.stdout.read)

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def pinned(cpus: str | None) -> list[str]:
    return ["taskset", "-c", cpus] if cpus and shutil.which("taskset") else []


def start_servers(args: argparse.Namespace, data: Path) -> list[Proc]:
    py = [sys.executable]
    if args.server_uvloop:
        py += [
            "-c",
            "import sys,uvloop; uvloop.install(); from server.__main__ import main; main(sys.argv[1:])",
        ]
    else:
        py += ["-m", "server"]
    common = ["--port", "0", "--rate", "1000000", "--log", "WARNING"]
    if args.redis:
        return [
            Proc([*pinned(args.server_cpus), *py, *common, "--redis", args.redis])
            for _ in range(args.processes)
        ]
    return [Proc([*pinned(args.server_cpus), *py, *common, "--data", str(data)])]


def start_echo(args: argparse.Namespace, sizes: dict[str, int]) -> Proc:
    return Proc(
        [
            *pinned(args.server_cpus), sys.executable, str(ROOT / "bench" / "echo_server.py"),
            "--ack", str(sizes["ack"]), "--progress", str(sizes["progress"]), "--board", str(sizes["board"]),
        ]
    )  # fmt: skip


# ----------------------------------------------------------------- measuring


@dataclass
class Stats:
    moves: int = 0
    ack_ms: list[float] = field(default_factory=list)
    progress_ms: list[float] = field(default_factory=list)
    spectator_ms: list[float] = field(default_factory=list)
    rejects: int = 0
    errors: int = 0
    sizes: dict[str, list[int]] = field(default_factory=lambda: {"ack": [], "progress": [], "board": []})
    sent: dict[tuple[int, int, int], float] = field(default_factory=dict)  # (race, seat, moves) -> t
    playing_s: float = 0.0
    recording: bool = False

    def record(self, kind: str, t0: float | None, t1: float) -> None:
        if self.recording and t0 is not None:
            getattr(self, f"{kind}_ms").append((t1 - t0) * 1000)


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100 * len(values)))]


def summary(values: list[float]) -> str:
    return f"p50 {pct(values, 50):7.2f}  p95 {pct(values, 95):7.2f}  p99 {pct(values, 99):7.2f} ms  (n={len(values)})"


# ----------------------------------------------------------------- clients


class Player:
    """One lean bot connection of a race."""

    def __init__(self, ws: ClientConnection, race: int, stats: Stats) -> None:
        self.ws, self.race, self.stats = ws, race, stats
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.seat = 0

    async def read(self) -> None:
        st = self.stats
        try:
            async for text in self.ws:
                t = time.perf_counter()
                assert isinstance(text, str)
                if text.startswith('{"type":"progress"'):
                    msg = json.loads(text)
                    st.sizes["progress"].append(len(text))
                    st.record("progress", st.sent.get((self.race, msg["seat"], msg["moves"])), t)
                    continue
                msg = json.loads(text)
                kind = msg.get("type")
                if kind == "ack":
                    st.sizes["ack"].append(len(text))
                    msg["t"] = t
                elif kind in ("rejected", "error"):
                    if kind == "rejected":
                        st.rejects += 1
                    else:
                        st.errors += 1
                    print(f"\n{kind}: {text[:200]}", file=sys.stderr)
                await self.inbox.put(msg)
        except ConnectionClosed:
            pass

    async def expect(self, *kinds: str) -> dict[str, Any]:
        while True:
            msg = await asyncio.wait_for(self.inbox.get(), 60)
            if msg.get("type") in kinds:
                return msg


async def spectate(ws: ClientConnection, race: int, stats: Stats) -> None:
    try:
        async for text in ws:
            t = time.perf_counter()
            assert isinstance(text, str)
            if text.startswith('{"type":"board"'):
                stats.sizes["board"].append(len(text))
                seat = int(text[text.index('"seat":') + 7])
                moves = int(LAST_MOVES.findall(text)[-1])
                stats.record("spectator", stats.sent.get((race, seat, moves)), t)
            elif '"type":"error"' in text[:20]:
                stats.errors += 1
    except ConnectionClosed:
        pass


async def play_game(me: Player, view: dict[str, Any], rate: float, stop: asyncio.Event) -> None:
    st = me.stats
    seq = 0
    interval = 1.0 / rate if rate > 0 else 0.0
    next_at = time.perf_counter()
    started = time.perf_counter()
    while not view["over"] and not stop.is_set():
        move = greedy_view(view)
        if move is None:
            await me.ws.send('{"type":"finish"}')
            break
        if interval:
            next_at += interval
            delay = next_at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        seq += 1
        t0 = time.perf_counter()
        st.sent[(me.race, me.seat, view["moves"] + 1)] = t0
        await me.ws.send(json.dumps({"type": "move", "seq": seq, "move": move}))
        ack = await me.expect("ack", "rejected")
        if ack["type"] != "ack":
            break
        if st.recording:
            st.moves += 1
            st.ack_ms.append((ack["t"] - t0) * 1000)
        view = ack["view"]
    if st.recording:
        st.playing_s += time.perf_counter() - started
    if stop.is_set() and not view["over"]:
        await me.ws.send('{"type":"finish"}')


async def race_loop(
    url: str, url2: str, race: int, spectators: int, rate: float, st: Stats, stop: asyncio.Event
) -> None:
    """Games back to back between two lean bots, watched by ``spectators``."""
    wss = [await connect(url, compression=None), await connect(url2, compression=None)]
    a, b = (Player(ws, race, st) for ws in wss)
    b.seat = 1
    readers = [asyncio.create_task(p.read()) for p in (a, b)]
    watchers = [await connect(url, compression=None, max_size=2**20) for _ in range(spectators)]
    spec_tasks: list[asyncio.Task[None]] = []
    game = 0
    try:
        while not stop.is_set():
            game += 1
            await a.ws.send(json.dumps({"type": "create", "deal": race * 1000 + game}))
            code = (await a.expect("created"))["match"]
            await b.ws.send(json.dumps({"type": "join", "match": code}))
            await b.expect("joined")
            for task in spec_tasks:
                task.cancel()
            for w in watchers:
                await w.send(json.dumps({"type": "watch", "match": code}))
            spec_tasks = [asyncio.create_task(spectate(w, race, st)) for w in watchers]
            for p in (a, b):
                await p.ws.send('{"type":"ready"}')
            starts = await asyncio.gather(a.expect("start"), b.expect("start"))
            await asyncio.gather(
                *(play_game(p, s["view"], rate, stop) for p, s in zip((a, b), starts, strict=True))
            )
            await asyncio.gather(a.expect("result"), b.expect("result"))
    finally:
        for task in [*readers, *spec_tasks]:
            task.cancel()
        for ws in [*wss, *watchers]:
            with contextlib.suppress(Exception):
                await ws.close()


async def echo_race_loop(
    url: str, race: int, spectators: int, rate: float, st: Stats, stop: asyncio.Event
) -> None:
    """The same players against the relay: endless 'games', the same frames and pacing."""
    wss = [await connect(url, compression=None), await connect(url, compression=None)]
    watchers = [await connect(url, compression=None, max_size=2**20) for _ in range(spectators)]
    for ws, role in [(wss[0], "p0"), (wss[1], "p1"), *((w, "spec") for w in watchers)]:
        await ws.send(json.dumps({"type": "echo_join", "group": f"{id(st)}-{race}", "role": role}))
        await ws.recv()
    players = [Player(ws, race, st) for ws in wss]
    players[1].seat = 1
    tasks = [asyncio.create_task(p.read()) for p in players]
    tasks += [asyncio.create_task(spectate(w, race, st)) for w in watchers]

    async def player(me: Player) -> None:
        seq = 0
        interval = 1.0 / rate if rate > 0 else 0.0
        next_at = time.perf_counter()
        while not stop.is_set():
            if interval:
                next_at += interval
                delay = next_at - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
            seq += 1
            t0 = time.perf_counter()
            st.sent[(race, me.seat, seq)] = t0
            await me.ws.send(json.dumps({"type": "move", "seq": seq, "move": "W>A1"}))
            ack = await me.expect("ack")
            if st.recording:
                st.moves += 1
                st.ack_ms.append((ack["t"] - t0) * 1000)

    try:
        await asyncio.gather(*(player(p) for p in players))
    finally:
        for task in tasks:
            task.cancel()
        for ws in [*wss, *watchers]:
            with contextlib.suppress(Exception):
                await ws.close()


def progress_bar(total: float, desc: str) -> Any:
    try:
        from tqdm import tqdm

        return tqdm(total=round(total), desc=desc, unit="s", leave=False, file=sys.stderr)
    except ImportError:
        return None


async def run_phase(
    label: str,
    procs: list[Proc],
    make: Callable[[int, Stats, asyncio.Event], Any],
    races: int,
    args: argparse.Namespace,
) -> tuple[Stats, dict[str, float]]:
    st = Stats()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(make(i, st, stop)) for i in range(races)]
    bar = progress_bar(args.warmup + args.duration, label)
    await tick(args.warmup, bar, st, tasks)
    cpu0 = sum(p.cpu_s() for p in procs)
    t0 = time.perf_counter()
    st.recording = True
    await tick(args.duration, bar, st, tasks)
    st.recording = False
    wall = time.perf_counter() - t0
    cpu = sum(p.cpu_s() for p in procs) - cpu0
    rss = sum(p.rss_kib() for p in procs)
    stop.set()
    if bar is not None:
        bar.close()
    done, pending = await asyncio.wait(tasks, timeout=30)
    for task in pending:
        task.cancel()
    for task in done:
        if task.exception() is not None:
            st.errors += 1
            print(f"\n{label}: {task.exception()!r}", file=sys.stderr)
    return st, {"wall": wall, "cpu": cpu / wall, "rss_kib": rss, "moves_s": st.moves / wall}


async def tick(seconds: float, bar: Any, st: Stats, tasks: list[asyncio.Task[Any]]) -> None:
    end = time.perf_counter() + seconds
    while (left := end - time.perf_counter()) > 0:
        await asyncio.sleep(min(0.5, left))
        if bar is not None:
            bar.n = min(bar.total, round(time.time() - bar.start_t))
            bar.set_postfix(moves=st.moves, refresh=True)
        for task in tasks:
            if task.done() and task.exception() is not None:
                raise RuntimeError(f"a race failed: {task.exception()!r}")


def report(label: str, st: Stats, m: dict[str, float], conns: int, base_rss: int) -> None:
    per_conn = (m["rss_kib"] - base_rss) / conns if conns else float("nan")
    print(f"{label}:")
    print(f"  sustained moves/s     {m['moves_s']:10.0f}   ({st.moves} moves in {m['wall']:.1f} s)")
    print(f"  move -> ack           {summary(st.ack_ms)}")
    print(f"  move -> opp. progress {summary(st.progress_ms)}")
    if st.spectator_ms:
        print(f"  move -> spectators    {summary(st.spectator_ms)}")
    print(f"  server CPU            {m['cpu'] * 100:9.0f} %   RSS {m['rss_kib'] / 1024:.1f} MiB, "
          f"{per_conn:.1f} KiB per connection over the idle process ({conns} connections)")  # fmt: skip
    print(f"  rejects {st.rejects}, errors {st.errors}")


# ----------------------------------------------------------------- scenarios


async def races_scenario(args: argparse.Namespace, data: Path) -> int:
    procs = start_servers(args, data)
    urls = [f"ws://127.0.0.1:{p.port}" for p in procs]
    base_rss = sum(p.rss_kib() for p in procs)
    conns = args.races * (2 + args.spectators)

    def ours(rate: float) -> Callable[[int, Stats, asyncio.Event], Any]:
        def make(i: int, st: Stats, stop: asyncio.Event) -> Any:
            return race_loop(
                urls[i % len(urls)], urls[(i + 1) % len(urls)], i, args.spectators, rate, st, stop
            )

        return make

    st1, m1 = await run_phase("ours, closed loop", procs, ours(args.rate), args.races, args)
    sizes = {k: round(statistics.mean(v)) if v else 100 for k, v in st1.sizes.items()}
    active = st1.playing_s / (2 * args.races * m1["wall"]) if args.races else 1.0
    half_total = m1["moves_s"] / 2
    st2, m2 = await run_phase(
        "ours, half load", procs, ours(half_total / (2 * args.races) / max(active, 0.05)), args.races, args
    )
    for p in procs:
        p.stop()
    echo = start_echo(args, sizes)
    echo_base = echo.rss_kib()
    eurl = f"ws://127.0.0.1:{echo.port}"

    def bare(rate: float) -> Callable[[int, Stats, asyncio.Event], Any]:
        def make(i: int, st: Stats, stop: asyncio.Event) -> Any:
            return echo_race_loop(eurl, i, args.spectators, rate, st, stop)

        return make

    try:
        st3, m3 = await run_phase("echo, closed loop", [echo], bare(args.rate), args.races, args)
        st4, m4 = await run_phase(
            "echo, half load", [echo], bare(half_total / (2 * args.races)), args.races, args
        )
    finally:
        echo.stop()
    print(f"\n{args.races} races, {args.spectators} spectators each, {args.duration:.0f} s measured after "
          f"{args.warmup:.0f} s warm-up; mean frame sizes {sizes}; players playing {active * 100:.0f}% of the time")  # fmt: skip
    report("race server, closed loop (maximum)", st1, m1, conns, base_rss)
    report(f"race server, half load (offered {half_total:.0f} moves/s)", st2, m2, conns, base_rss)
    report("bare echo relay, closed loop (maximum)", st3, m3, conns, echo_base)
    report(f"bare echo relay, same half load ({half_total:.0f} moves/s)", st4, m4, conns, echo_base)
    ratio_tp = m1["moves_s"] / m3["moves_s"] if m3["moves_s"] else float("nan")
    ratio_p99 = pct(st2.ack_ms, 99) / pct(st4.ack_ms, 99) if st4.ack_ms else float("nan")
    print("ratios to the bare echo relay:")
    print(f"  sustained moves/s     {ratio_tp:6.2f}x   (target >= 0.40)")
    print(f"  p99 move->ack at half {ratio_p99:6.2f}x   (target < 3)")
    print(f"  p50 move->ack at half {pct(st2.ack_ms, 50) / pct(st4.ack_ms, 50):6.2f}x")
    errors = sum(s.rejects + s.errors for s in (st1, st2, st3, st4))
    print(f"rejects+errors: {errors}")
    return 1 if errors else 0


async def players_scenario(args: argparse.Namespace, data: Path) -> int:
    """``--players`` connections seated in started matches, one move each: RSS per connection."""
    procs = start_servers(args, data)
    url = f"ws://127.0.0.1:{procs[0].port}"
    base = procs[0].rss_kib()
    st = Stats()
    bar = progress_bar(args.players, "connecting players")
    players: list[Player] = []
    readers: list[asyncio.Task[None]] = []
    pairs = args.players // 2

    async def pair(i: int) -> None:
        wss = [await connect(url, compression=None), await connect(url, compression=None)]
        a, b = Player(wss[0], i, st), Player(wss[1], i, st)
        b.seat = 1
        players.extend((a, b))
        readers.extend(asyncio.create_task(p.read()) for p in (a, b))
        await a.ws.send(json.dumps({"type": "create", "deal": i}))
        code = (await a.expect("created"))["match"]
        await b.ws.send(json.dumps({"type": "join", "match": code}))
        await b.expect("joined")
        for p in (a, b):
            await p.ws.send('{"type":"ready"}')
        for p in (a, b):
            await p.expect("start")
            await p.ws.send('{"type":"move","seq":1,"move":"T"}')
            await p.expect("ack")
        if bar is not None:
            bar.update(2)

    sem = asyncio.Semaphore(100)

    async def limited(i: int) -> None:
        async with sem:
            await pair(i)

    await asyncio.gather(*(limited(i) for i in range(pairs)))
    if bar is not None:
        bar.close()
    await asyncio.sleep(1)
    rss = procs[0].rss_kib()
    n = 2 * pairs
    print(f"{n} connected players in {pairs} started matches on one process:")
    print(f"  RSS {rss / 1024:.1f} MiB (idle process {base / 1024:.1f} MiB): "
          f"{(rss - base) / n:.1f} KiB per connection (target < 64)")  # fmt: skip
    print(f"  rejects {st.rejects}, errors {st.errors}")
    for p in players:
        await p.ws.close()
    for proc in procs:
        proc.stop()
    return 1 if st.rejects + st.errors or (rss - base) / n >= 64 else 0


async def watchers_scenario(args: argparse.Namespace, data: Path) -> int:
    """One match, ``--watchers`` spectators, both players at ``--watch-rate`` moves/s."""
    procs = start_servers(args, data)
    url = f"ws://127.0.0.1:{procs[0].port}"
    st = Stats()
    stop = asyncio.Event()
    watchers = []
    bar = progress_bar(args.watchers, "connecting spectators")
    for _ in range(args.watchers):
        watchers.append(await connect(url, compression=None, max_size=2**20))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    wss = [await connect(url, compression=None), await connect(url, compression=None)]
    a, b = Player(wss[0], 0, st), Player(wss[1], 0, st)
    b.seat = 1
    readers = [asyncio.create_task(p.read()) for p in (a, b)]
    await a.ws.send('{"type":"create","deal":1,"time_limit_s":3600}')
    code = (await a.expect("created"))["match"]
    await b.ws.send(json.dumps({"type": "join", "match": code}))
    await b.expect("joined")
    for w in watchers:
        await w.send(json.dumps({"type": "watch", "match": code}))
    tasks = [asyncio.create_task(spectate(w, 0, st)) for w in watchers]
    for p in (a, b):
        await p.ws.send('{"type":"ready"}')
    starts = [await a.expect("start"), await b.expect("start")]
    st.recording = True
    cpu0, t0 = procs[0].cpu_s(), time.perf_counter()
    await asyncio.gather(
        *(play_game(p, s["view"], args.watch_rate, stop) for p, s in zip((a, b), starts, strict=True))
    )
    wall = time.perf_counter() - t0
    cpu = (procs[0].cpu_s() - cpu0) / wall
    await asyncio.sleep(1)  # the last boards arrive
    st.recording = False
    deliveries = len(st.spectator_ms)
    print(f"one match, {args.watchers} spectators, 2 players at {args.watch_rate} moves/s each: "
          f"{st.moves} moves in {wall:.1f} s, {deliveries} board deliveries "
          f"(expected {st.moves * args.watchers})")  # fmt: skip
    print(f"  move -> every spectator {summary(st.spectator_ms)}  (target p99 <= 100 ms)")
    print(f"  move -> ack             {summary(st.ack_ms)}")
    print(
        f"  server CPU {cpu * 100:.0f} %, RSS {procs[0].rss_kib() / 1024:.1f} MiB; rejects {st.rejects}, errors {st.errors}"
    )
    for task in [*tasks, *readers]:
        task.cancel()
    for ws in [*wss, *watchers]:
        await ws.close()
    for proc in procs:
        proc.stop()
    missing = st.moves * args.watchers - deliveries
    return 1 if st.rejects + st.errors or missing else 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--races", type=int, default=20, help="concurrent races of bot pairs (0: skip)")
    ap.add_argument("--spectators", type=int, default=0, help="spectators per race")
    ap.add_argument(
        "--rate", type=float, default=0.0, help="moves/s per player in the first phase (0: closed loop)"
    )
    ap.add_argument("--duration", type=float, default=10.0, help="seconds measured per phase")
    ap.add_argument(
        "--warmup", type=float, default=4.0, help="seconds before measuring (the countdown is 3 s)"
    )
    ap.add_argument("--players", type=int, default=0, help="connected players for the RSS check (0: skip)")
    ap.add_argument("--watchers", type=int, default=0, help="spectators of one match for the fan-out check")
    ap.add_argument("--watch-rate", type=float, default=2.0, help="moves/s per player in the fan-out check")
    ap.add_argument("--redis", metavar="URL", help="run --processes servers sharing this Redis")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--server-cpus", default="0", help="taskset CPU list for servers ('' for none)")
    ap.add_argument("--client-cpus", default="1-", help="CPUs for this process ('' for none)")
    ap.add_argument("--server-uvloop", action="store_true", help="run the server on uvloop")
    return ap.parse_args(argv)


def pin_self(spec: str) -> None:
    if not spec or not hasattr(os, "sched_setaffinity"):
        return
    n = os.cpu_count() or 1
    cpus = set(range(int(spec[:-1]), n)) if spec.endswith("-") else {int(c) for c in spec.split(",")}
    cpus &= set(range(n))
    if cpus:
        os.sched_setaffinity(0, cpus)


async def main_async(args: argparse.Namespace) -> int:
    code = 0
    with tempfile.TemporaryDirectory() as tmp:
        if args.races:
            code |= await races_scenario(args, Path(tmp) / "races")
        if args.players:
            code |= await players_scenario(args, Path(tmp) / "players")
        if args.watchers:
            code |= await watchers_scenario(args, Path(tmp) / "watchers")
    return code


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    pin_self(args.client_cpus)
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
