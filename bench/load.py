"""Load benchmark: races of bot pairs (plus spectators) against a real server process.

    .venv/bin/python bench/load.py --races 150 --duration 10        # throughput + latency, ratios to echo
    .venv/bin/python bench/load.py --races 0 --players 2000         # connected players, RSS each
    .venv/bin/python bench/load.py --races 0 --watchers 1000        # one match, 1000 spectators

The server runs as ``python -m server`` (embedded, ``--rate 1000000``) in a
subprocess pinned to ``--server-cpus`` (CPU 0) with ``taskset``, on
``--server-python`` (this interpreter unless told; the echo relay too). The clients
run in ``--clients`` worker processes (multiprocessing, one event loop each,
uvloop when installed), pinned to ``--client-cpus`` (the other CPUs), so the
server, not the clients, should be the limit. Every figure is printed with the
server's CPU (% of one core) and the clients' CPU (% of their cores): a
server well under 100% means the clients (or the machine) were the limit.

Races phase, run against our server and against ``bench/echo_server.py`` (a
bare websockets relay sending the same frame sizes to the same clients):
first closed loop (every player sends its next move as soon as the last is
acked: the sustained maximum), then open loop at half of our maximum: a
pacer in each worker sends moves at a fixed aggregate rate, each from a player
that is playing and not waiting for an ack (so the countdown between games
does not distort the offered rate; moves that found no idle player are
counted as "missed"). Printed: moves/s, p50/p95/p99 of move-to-ack,
move-to-opponent-progress and move-to-spectator, server and client CPU, RSS
per connection, rejects and errors, and our figures as ratios of the echo's.

The bots are the client's sans-I/O ``Session`` (``client/session.py``, the
one the Python client and the server's bots wrap) on a minimal WebSocket
client on ``asyncio.Protocol`` (a zero masking key, so the payload goes out
as is). They speak protocol v2 (``--protocol 1`` for v1): each plays its
greedy move on its own ``ClientGame`` and the ack brings the revealed cards
and the check; in v1 the ack's view is the board. A move costs the client
less than the server. Against the echo relay the bots skip the session (the
relay speaks no protocol) and send a fixed move. Latencies are taken with
``time.monotonic()`` (system-wide), so sends in one process and receipts in
another can be joined.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import json
import math
import multiprocessing as mp
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from client.session import ClientError, Session  # noqa: E402
from server import protocol as p  # noqa: E402
from server.engine.view_players import greedy_view  # noqa: E402
from server.match.state import COUNTDOWN_MS  # noqa: E402

try:
    import orjson

    loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover
    loads = json.loads

LISTENING = re.compile(r"listening on http://[\d.]+:(\d+)/")
SEAT_MOVES = re.compile(rb'"seat":(\d+).*"moves":(\d+)', re.S)  # greedy: the last "moves"
CLK_TCK = os.sysconf("SC_CLK_TCK")
COUNTDOWN_S = COUNTDOWN_MS / 1000
START_TIMEOUT_S = 60.0  # past the warm-up, the longest the measured window waits for every race to play
WINDOW_LEAD_S = 0.2  # a window opens at least this long after it is sent to the workers
now = time.monotonic


# ----------------------------------------------------------------- processes


class Pid:
    """Any process whose CPU seconds and RSS we read from /proc."""

    def __init__(self, pid: int) -> None:
        self._pid = pid

    @property
    def pid(self) -> int:
        return self._pid

    def cpu_s(self) -> float:
        return proc_cpu_s(self.pid)

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0


class Proc(Pid):
    """A server process: start, port, CPU seconds and RSS from /proc."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        self.port = 0
        self.output: list[str] = []
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.output.append(line)
            if m := LISTENING.search(line):
                self.port = int(m.group(1))
                break
        if not self.port:
            self.stop()
            raise RuntimeError(f"did not start: {argv}\n{''.join(self.output)}")
        super().__init__(self.proc.pid)
        # keep reading its output so the pipe never fills
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if len(self.output) < 200:
                self.output.append(line)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def cpu_list(spec: str) -> set[int]:
    """'0', '1-', '1-3', '0,2' -> CPU numbers that exist here."""
    n = os.cpu_count() or 1
    out: set[int] = set()
    for part in filter(None, spec.split(",")):
        lo, dash, hi = part.partition("-")
        out |= set(range(int(lo), (int(hi) + 1) if hi else n)) if dash else {int(lo)}
    return out & set(range(n))


def pinned(cpus: str | None) -> list[str]:
    return ["taskset", "-c", cpus] if cpus and shutil.which("taskset") else []


def server_argv(args: argparse.Namespace) -> list[str]:
    py = [args.server_python]
    if args.server_uvloop:
        py += [
            "-c",
            "import sys,uvloop; uvloop.install(); from server.__main__ import main; main(sys.argv[1:])",
        ]
    else:
        py += ["-m", "server"]
    return [
        *pinned(args.server_cpus), *py, "--port", "0", "--rate", "1000000", "--log", "WARNING", *args.server_arg,
    ]  # fmt: skip


def start_servers(args: argparse.Namespace, data: Path) -> list[Proc]:
    env = {**os.environ, **dict(kv.split("=", 1) for kv in args.server_env)}
    if args.redis:
        return [Proc([*server_argv(args), "--redis", args.redis], env) for _ in range(args.processes)]
    return [Proc([*server_argv(args), "--data", str(data)], env)]


def start_echo(args: argparse.Namespace, sizes: dict[str, int]) -> Proc:
    return Proc(
        [
            *pinned(args.server_cpus), args.server_python, str(ROOT / "bench" / "echo_server.py"),
            "--ack", str(sizes["ack"]), "--progress", str(sizes["progress"]), "--board", str(sizes["board"]),
        ]
    )  # fmt: skip


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# ----------------------------------------------------------------- a lean WebSocket client


class Wire(asyncio.Protocol):
    """A minimal RFC 6455 client: text frames in and out, pings answered, nothing else.

    ``on_frame(payload, t)`` gets each text frame's bytes and the monotonic time
    its bytes were read. Outgoing frames use the all-zero masking key, which
    servers accept and which makes masking a no-op.
    """

    def __init__(self, on_frame: Callable[[bytes, float], None]) -> None:
        self.on_frame = on_frame
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.open = False
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @classmethod
    async def connect(cls, host: str, port: int, on_frame: Callable[[bytes, float], None]) -> Wire:
        loop = asyncio.get_running_loop()
        _, wire = await loop.create_connection(lambda: cls(on_frame), host, port)
        key = base64.b64encode(os.urandom(16)).decode()
        assert wire.transport is not None
        wire.transport.write(
            f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        await asyncio.wait_for(wire.ready, 30)
        return wire

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not an asyncio.Transport

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ready.done():
            self.ready.set_exception(ConnectionError("closed during the handshake"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        t = now()
        buf = self.buf
        buf += data
        if not self.open:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            if b" 101 " not in buf[: buf.find(b"\r\n")]:
                self.ready.set_exception(ConnectionError(bytes(buf[:end]).decode(errors="replace")))
                return
            del buf[: end + 4]
            self.open = True
            self.ready.set_result(None)
        pos, n = 0, len(buf)
        while n - pos >= 2:
            b0, length = buf[pos], buf[pos + 1] & 0x7F
            head = 2
            if length == 126:
                if n - pos < 4:
                    break
                length, head = int.from_bytes(buf[pos + 2 : pos + 4], "big"), 4
            elif length == 127:
                if n - pos < 10:
                    break
                length, head = int.from_bytes(buf[pos + 2 : pos + 10], "big"), 10
            if n - pos < head + length:
                break
            payload = bytes(buf[pos + head : pos + head + length])
            pos += head + length
            op = b0 & 0x0F
            if op == 1:
                self.on_frame(payload, t)
            elif op == 9:
                self._write(0xA, payload)
            elif op == 8 and self.transport is not None:
                self.transport.close()
        del buf[:pos]

    def _write(self, op: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            head = bytes((0x80 | op, 0x80 | n))
        elif n < 65536:
            head = bytes((0x80 | op, 0xFE)) + n.to_bytes(2, "big")
        else:
            head = bytes((0x80 | op, 0xFF)) + n.to_bytes(8, "big")
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(head + b"\0\0\0\0" + payload)

    def send(self, text: str | bytes) -> None:
        self._write(1, text if isinstance(text, bytes) else text.encode())

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self._write(8, (1000).to_bytes(2, "big"))
            self.transport.close()


# ----------------------------------------------------------------- measuring


@dataclass
class Tally:
    """What one worker measured; summed over the workers by ``merge``."""

    moves: int = 0  # acks received inside the window
    missed: int = 0  # paced sends that found no idle player
    ack_ms: list[float] = field(default_factory=list)
    progress_ms: list[float] = field(default_factory=list)
    spectator_ms: list[float] = field(default_factory=list)
    rejects: int = 0
    errors: int = 0
    size_sum: dict[str, int] = field(default_factory=lambda: {"ack": 0, "progress": 0, "board": 0})
    size_n: dict[str, int] = field(default_factory=lambda: {"ack": 0, "progress": 0, "board": 0})
    playing_s: float = 0.0  # player-seconds spent in a started game inside the window
    players: int = 0
    cpu_s: float = 0.0  # client CPU inside the window
    sent: dict[tuple[int, int, int], float] = field(default_factory=dict)  # (race, seat, moves) -> t
    deliveries: list[tuple[int, int, int, float]] = field(default_factory=list)  # (race, seat, moves, t)
    notes: list[str] = field(default_factory=list)

    def size(self, kind: str, n: int) -> None:
        if self.size_n[kind] < 10_000:
            self.size_sum[kind] += n
            self.size_n[kind] += 1

    def error(self, text: str) -> None:
        self.errors += 1
        if len(self.notes) < 5:
            self.notes.append(text)


def merge(tallies: Iterable[Tally]) -> Tally:
    out = Tally()
    for t in tallies:
        out.moves += t.moves
        out.missed += t.missed
        out.ack_ms += t.ack_ms
        out.progress_ms += t.progress_ms
        out.spectator_ms += t.spectator_ms
        out.rejects += t.rejects
        out.errors += t.errors
        for k in out.size_sum:
            out.size_sum[k] += t.size_sum[k]
            out.size_n[k] += t.size_n[k]
        out.playing_s += t.playing_s
        out.players += t.players
        out.cpu_s += t.cpu_s
        out.sent.update(t.sent)
        out.deliveries += t.deliveries
        out.notes += t.notes
    return out


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100 * len(values)))]


def summary(values: list[float]) -> str:
    return f"p50 {pct(values, 50):7.2f}  p95 {pct(values, 95):7.2f}  p99 {pct(values, 99):7.2f} ms  (n={len(values)})"


@dataclass
class Window:
    """The measured interval, in ``time.monotonic()`` seconds (shared by every process)."""

    start: float
    end: float

    def __contains__(self, t: float) -> bool:
        return self.start <= t < self.end


# ----------------------------------------------------------------- bots


class Player:
    """A connection speaking the protocol through a ``Session``: its lifecycle messages wait in ``inbox``."""

    def __init__(self, w: Worker) -> None:
        self.w = w
        self.session = Session(version=w.version, greet=False)
        self.wire: Wire | None = None
        self.inbox: deque[p.Message] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.retry_armed = False
        self.joined = asyncio.get_running_loop().create_future()  # echo: the relay has it in its group

    def echo_joined(self, data: bytes) -> None:
        """The relay answers each ``echo_join`` once it has the connection in its group."""
        if data.startswith(b'{"type":"echo_joined"') and not self.joined.done():
            self.joined.set_result(None)

    def flush(self) -> None:
        """Write what the session has to send; keep the pause it asks before a retry (the store away)."""
        assert self.wire is not None
        for message in self.session.data_to_send():
            self.wire.send(p.encode(message))
        delay = self.session.retry_timer()
        if delay is not None and not self.retry_armed:
            self.retry_armed = True
            asyncio.get_running_loop().call_later(delay, self.retry)

    def retry(self) -> None:
        self.retry_armed = False
        if self.wire is not None and not self.wire.closed.done():
            self.session.retry()
            self.flush()

    async def greet(self) -> None:
        """v2 is asked for with a hello (v1 needs none)."""
        if self.w.version != 1:
            self.session.hello()
            self.flush()
            await self.expect("welcome")

    def take(self, msg: p.Message) -> None:
        if isinstance(msg, p.Error):
            self.w.tally.error(f"{msg.code.value}: {msg.message}")
        self.inbox.append(msg)
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def expect(self, *kinds: str) -> Any:
        deadline = now() + 60
        while True:
            while self.inbox:
                msg = self.inbox.popleft()
                if getattr(msg, "type", None) in kinds:
                    return msg
            self.waiter = asyncio.get_running_loop().create_future()
            await asyncio.wait_for(self.waiter, max(0.1, deadline - now()))


class Bot(Player):
    """One racer: its session's game (v2; v1: the view of the last ack) and greedy's moves."""

    def __init__(self, w: Worker, race: int, seat: int) -> None:
        super().__init__(w)
        self.race, self.seat = race, seat
        self.seq = 0  # echo only: the relay's moves are numbered here
        self.t0 = 0.0
        self.busy = False  # a move is waiting for its ack
        self.game_over: asyncio.Future[None] | None = None
        self.started = 0.0

    def on_frame(self, data: bytes, t: float) -> None:
        w = self.w
        if data.startswith(b'{"type":"progress"'):
            w.tally.size("progress", len(data))
            m = SEAT_MOVES.search(data)
            if m is not None:
                t0 = w.tally.sent.get((self.race, int(m.group(1)), int(m.group(2))))
                if t0 is not None:
                    w.tally.progress_ms.append((t - t0) * 1000)
            if w.echo:
                return
        elif data.startswith(b'{"type":"ack"'):
            w.tally.size("ack", len(data))
            if w.echo:
                self.on_ack(t, None)
                return
        elif w.echo:
            self.echo_joined(data)
            return
        session = self.session
        session.receive(data)
        for _, outcome in session.outcomes_received():
            self.on_ack(t, outcome if isinstance(outcome, ClientError) else None)
        for msg in session.events_received():
            if isinstance(msg, p.Rejected | p.RejectedV2):
                w.tally.rejects += 1
                w.tally.notes.append(f"rejected {msg.seq}: {msg.code.value}: {msg.message}")
            elif not isinstance(msg, p.Ack | p.AckV2 | p.Progress):
                self.take(msg)
        self.flush()

    # -- playing

    def begin(self) -> asyncio.Future[None]:
        self.seq = 0
        self.game_over = asyncio.get_running_loop().create_future()
        self.started = now()
        self.ready_for_next()
        return self.game_over

    def ready_for_next(self) -> None:
        if self.w.stopping:
            self.end_game(finish=True)
        elif self.w.closed_loop:
            self.move()
        else:
            self.w.idle.append(self)

    def over(self) -> bool:
        if self.w.echo:
            return False
        s = self.session
        return s.game.is_over if s.game is not None else s.view is None or s.view.over

    def move(self) -> bool:
        """Send the next greedy move; False when the game is over for this bot."""
        assert self.wire is not None
        if self.over():
            self.end_game(finish=False)
            return False
        if self.w.echo:
            self.seq += 1
            text, moves = f'{{"type":"move","seq":{self.seq},"move":"W>A1"}}', self.seq
        else:
            s = self.session
            legal = s.game.legal_texts() if s.game is not None else s.view.legal if s.view else []
            move = greedy_view({"legal": legal})
            if move is None:
                self.end_game(finish=True)
                return False
            s.move(move)  # v2: played here at once, on trust
            moves = s.game.move_count if s.game is not None else (s.view.moves + 1 if s.view else 0)
        self.t0 = t0 = now()
        if t0 in self.w.window:
            self.w.tally.sent[(self.race, self.seat, moves)] = t0
        self.busy = True
        if self.w.echo:
            self.wire.send(text)
        else:
            self.flush()
        return True

    def on_ack(self, t: float, refused: ClientError | None) -> None:
        w = self.w
        self.busy = False
        if t in w.window:
            w.tally.moves += 1
            w.tally.ack_ms.append((t - self.t0) * 1000)
            if w.counter is not None:
                w.counter.value += 1
        if self.game_over is None or self.game_over.done():
            return
        if refused is not None:
            self.end_game(finish=True)
            return
        self.ready_for_next()

    def account(self) -> None:
        """Add this game's time inside the window to the tally (once)."""
        if self.game_over is None or self.game_over.done() or self.started < 0:
            return
        w = self.w
        lo, hi = max(self.started, w.window.start), min(now(), w.window.end)
        w.tally.playing_s += max(0.0, hi - lo)
        self.started = -1.0

    def end_game(self, finish: bool) -> None:
        if self.game_over is None or self.game_over.done():
            return
        if finish and self.wire is not None and not self.over():
            if self.w.echo:
                self.wire.send('{"type":"finish"}')
            else:
                self.session.command(p.Finish())
                self.flush()
        self.account()
        self.game_over.set_result(None)


class Spectator(Player):
    """One spectator: its session rebuilds the boards (v2) or takes them (v1); the delay of each is timed."""

    def __init__(self, w: Worker, race: int) -> None:
        super().__init__(w)
        self.race = race

    def on_frame(self, data: bytes, t: float) -> None:
        w = self.w
        if data.startswith(b'{"type":"board"'):
            w.tally.size("board", len(data))
        if w.echo:
            m = SEAT_MOVES.search(data) if data.startswith(b'{"type":"board"') else None
            if m is not None:
                self.delivered(int(m.group(1)), int(m.group(2)), t)
            else:
                self.echo_joined(data)
            return
        session = self.session
        session.receive(data)
        for msg in session.events_received():
            if isinstance(msg, p.Board | p.BoardV2):
                board = session.boards.get(msg.seat)
                moves = board.move_count if board is not None else msg.view.moves if msg.view else 0
                self.delivered(msg.seat, moves, t)
            elif not isinstance(msg, p.Progress):
                self.take(msg)
        self.flush()

    def delivered(self, seat: int, moves: int, t: float) -> None:
        w = self.w
        if t not in w.window:
            return
        key = (self.race, seat, moves)
        if w.keep_deliveries:
            w.tally.deliveries.append((*key, t))
        elif (t0 := w.tally.sent.get(key)) is not None:
            w.tally.spectator_ms.append((t - t0) * 1000)


# ----------------------------------------------------------------- one client process


@dataclass
class Job:
    """What one worker process does."""

    kind: str  # "races" | "echo" | "players" | "watchers" | "fanout-players"
    urls: list[tuple[str, int]]
    races: list[int] = field(default_factory=list)
    spectators: int = 0  # per race (races) or in all (watchers)
    pairs: list[int] = field(default_factory=list)
    match: str = ""  # watchers: the match to watch
    cpus: set[int] = field(default_factory=set)
    rate: float = 0.0  # moves/s this worker offers in all (0: closed loop)
    per_player_rate: float = 0.0  # fanout players: each player's own pace
    version: p.Version = 2  # the protocol the clients speak


class Worker:
    def __init__(self, job: Job, pipe: Connection, counter: Any, playing: Any) -> None:
        self.job, self.pipe, self.counter, self.playing = job, pipe, counter, playing
        self.tally = Tally()
        self.window = Window(float("inf"), float("inf"))
        self.echo = job.kind == "echo"
        self.version = job.version
        self.closed_loop = job.rate <= 0
        self.keep_deliveries = job.kind == "watchers"
        self.idle: deque[Bot] = deque()
        self.stopping = False
        self.wires: list[Wire] = []

    async def recv(self) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, self.pipe.recv)

    async def wire(self, url: tuple[str, int], on_frame: Callable[[bytes, float], None]) -> Wire:
        wire = await Wire.connect(*url, on_frame)
        self.wires.append(wire)
        return wire

    async def run(self) -> None:
        job = self.job
        handler = {
            "races": self.races,
            "echo": self.races,
            "players": self.players,
            "watchers": self.watchers,
            "fanout-players": self.fanout_players,
        }[job.kind]
        try:
            await handler()
        finally:
            for wire in self.wires:
                wire.close()
            await asyncio.sleep(0.05)

    def race_playing(self) -> None:
        """Count a race in whose first game both bots have begun (the parent waits for all before measuring)."""
        with self.playing.get_lock():
            self.playing.value += 1

    async def measure_until_end(self) -> None:
        await asyncio.sleep(max(0.0, self.window.start - now()))
        cpu0 = time.process_time()
        await asyncio.sleep(max(0.0, self.window.end - now()))
        self.tally.cpu_s = time.process_time() - cpu0

    # -- races (ours or echo)

    async def races(self) -> None:
        job = self.job
        sem = asyncio.Semaphore(64)

        async def setup(race: int) -> tuple[list[Bot], list[Spectator]]:
            async with sem:
                bots = [Bot(self, race, 0), Bot(self, race, 1)]
                for bot in bots:
                    bot.wire = await self.wire(job.urls[(race + bot.seat) % len(job.urls)], bot.on_frame)
                specs = [Spectator(self, race) for _ in range(job.spectators)]
                for s in specs:
                    s.wire = await self.wire(job.urls[race % len(job.urls)], s.on_frame)
                if self.echo:
                    group = f"{os.getpid()}-{race}"
                    for wire, role in [(b.wire, f"p{b.seat}") for b in bots] + [
                        (s.wire, "spec") for s in specs
                    ]:
                        assert wire is not None
                        wire.send(json.dumps({"type": "echo_join", "group": group, "role": role}))
                    # a move before the relay has the whole group would find no opponent or spectator
                    await asyncio.wait_for(asyncio.gather(*(pl.joined for pl in [*bots, *specs])), 60)
                else:
                    await asyncio.gather(*(player.greet() for player in [*bots, *specs]))
                return bots, specs

        setups = await asyncio.gather(*(setup(r) for r in job.races))
        self.tally.players = 2 * len(job.races)
        self.pipe.send(("ready", None))
        assert await self.recv() == ("go", None)
        loops = [asyncio.create_task(self.race_loop(b, s)) for b, s in setups]
        pacer = None if self.closed_loop else asyncio.create_task(self.pacer(job.rate))
        # The window comes once every race is playing (``open_window``); nothing counts before it.
        _window, start, end = await self.recv()
        self.window = Window(start, end)
        await self.measure_until_end()
        self.stopping = True
        if pacer is not None:
            pacer.cancel()
        for bots, _ in setups:
            for bot in bots:
                bot.account()  # the time played inside the window, for games still going
                if not bot.busy:
                    bot.end_game(finish=True)
        await asyncio.sleep(0.2)  # the finishes go out; games still counting down are left to the server
        for task in loops:
            if task.done() and not task.cancelled() and task.exception() is not None:
                self.tally.error(f"race: {task.exception()!r}")
            task.cancel()

    async def race_loop(self, bots: list[Bot], specs: list[Spectator]) -> None:
        a, b = bots
        race = a.race
        if self.echo:
            self.race_playing()
            await asyncio.gather(*(bot.begin() for bot in bots))
            return
        # Races start at random offsets over one countdown: started together, their
        # 3 s countdowns stayed in step and left the server idle all at once.
        await asyncio.sleep(random.uniform(0, COUNTDOWN_S))
        game = 0
        while not self.stopping:
            game += 1
            code = await seat_pair(a, b, race * 1000 + game)
            for spectator in specs:
                spectator.session.watch(code)
                spectator.flush()
            for bot in bots:
                bot.session.command(p.Ready())
                bot.flush()
            await asyncio.gather(a.expect("start"), b.expect("start"))
            if self.stopping:
                for bot in bots:
                    bot.session.command(p.Finish())
                    bot.flush()
                return
            games = [a.begin(), b.begin()]
            if game == 1:
                self.race_playing()
            await asyncio.gather(*games)
            if self.stopping:
                return
            await asyncio.gather(a.expect("result"), b.expect("result"))

    async def pacer(self, rate: float) -> None:
        """Open loop: ``rate`` moves a second from this worker, each from an idle player."""
        start = now()
        issued = 0
        while True:
            due = int((now() - start) * rate) - issued
            for _ in range(due):
                issued += 1
                while self.idle:
                    bot = self.idle.popleft()
                    playing = bot.game_over is not None and not bot.game_over.done()
                    if playing and not bot.busy and bot.move():
                        break
                else:
                    if self.window.start <= now() < self.window.end:
                        self.tally.missed += 1
            await asyncio.sleep(0.001)

    # -- connected players (RSS)

    async def players(self) -> None:
        job = self.job
        sem = asyncio.Semaphore(50)

        async def pair(i: int) -> None:
            async with sem:
                a, b = Bot(self, i, 0), Bot(self, i, 1)
                for bot in (a, b):
                    bot.wire = await self.wire(job.urls[0], bot.on_frame)
                    await bot.greet()
                await seat_pair(a, b, i)
                for bot in (a, b):
                    bot.session.command(p.Ready())
                    bot.flush()
                for bot in (a, b):
                    await bot.expect("start")
                    bot.session.move("T")
                    bot.flush()
                    bot.t0 = now()
                # each player counts on the progress bar when its first move is acked (on_ack)

        self.window = Window(0.0, float("inf"))
        await asyncio.gather(*(pair(i) for i in job.pairs))
        deadline = now() + 30
        while self.tally.moves < 2 * len(job.pairs) and now() < deadline:
            await asyncio.sleep(0.05)  # the acks arrive
        if self.tally.moves < 2 * len(job.pairs):
            self.tally.error(f"{self.tally.moves} acks for {2 * len(job.pairs)} moves")
        self.tally.players = 2 * len(job.pairs)
        self.pipe.send(("ready", None))
        await self.recv()  # ("close", None)

    # -- one match, many spectators

    async def watchers(self) -> None:
        job = self.job
        sem = asyncio.Semaphore(50)
        specs = [Spectator(self, 0) for _ in range(job.spectators)]

        async def one(s: Spectator) -> None:
            async with sem:
                s.wire = await self.wire(job.urls[0], s.on_frame)
                await s.greet()
                s.session.watch(job.match)
                s.flush()

        await asyncio.gather(*(one(s) for s in specs))
        self.pipe.send(("ready", None))
        _go, start, end = await self.recv()
        self.window = Window(start, end)
        await self.measure_until_end()

    async def fanout_players(self) -> None:
        """The two racers of the watched match: create and join, hand out the code, play paced."""
        job = self.job
        a, b = Bot(self, 0, 0), Bot(self, 0, 1)
        for bot in (a, b):
            bot.wire = await self.wire(job.urls[0], bot.on_frame)
            await bot.greet()
        code = await seat_pair(a, b, 1, time_limit_s=3600)
        self.pipe.send(("ready", code))
        _go, start, end = await self.recv()
        self.window = Window(start, end)
        for bot in (a, b):
            bot.session.command(p.Ready())
            bot.flush()
        await asyncio.gather(a.expect("start"), b.expect("start"))
        self.closed_loop = False
        interval = 1.0 / job.per_player_rate

        async def play(bot: Bot) -> None:
            over = bot.begin()
            self.idle.clear()
            next_at = now()
            while not over.done() and now() < self.window.end:
                next_at += interval
                await asyncio.sleep(max(0.0, next_at - now()))
                if bot.busy:
                    continue  # a late ack: skip this beat
                if not bot.move():
                    break
            if not over.done():
                bot.end_game(finish=True)

        await asyncio.gather(*(play(bot) for bot in (a, b)))
        await asyncio.sleep(0.2)


async def seat_pair(a: Bot, b: Bot, deal: int, time_limit_s: int = 600) -> str:
    """``a`` creates a match on ``deal``, ``b`` joins it; its code."""
    a.session.request(p.Create(deal=deal, time_limit_s=time_limit_s))
    a.flush()
    code: str = (await a.expect("created")).match
    b.session.request(p.Join(match=code))
    b.flush()
    await b.expect("joined")
    return code


def worker_main(job: Job, pipe: Connection, counter: Any, playing: Any) -> None:
    if job.cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, job.cpus)
    with contextlib.suppress(ImportError):
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    # A worker lives for one phase: its cyclic garbage can wait, and its own
    # collector pauses (tens of ms with hundreds of connections) would be
    # counted as the server's latency.
    gc.disable()
    w = Worker(job, pipe, counter, playing)
    try:
        asyncio.run(w.run())
    except BaseException as exc:  # reported to the parent: "done" in place of what it waits for
        traceback.print_exc()  # the whole of it, on the bench's stderr
        w.tally.error(f"worker: {exc!r}")
    w.tally.sent = w.tally.sent if job.kind == "fanout-players" else {}
    pipe.send(("done", w.tally))


# ----------------------------------------------------------------- the parent


class Pool:
    """Client worker processes running ``jobs``; the parent only coordinates."""

    def __init__(self, jobs: list[Job]) -> None:
        ctx = mp.get_context("fork")
        self.counter = ctx.Value("q", 0, lock=False)  # acks in the window, for the progress bar only
        self.playing = ctx.Value("q", 0)  # races playing (``Worker.race_playing``), under its lock
        self.pipes: list[Connection] = []
        self.procs = []
        for job in jobs:
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(
                target=worker_main, args=(job, theirs, self.counter, self.playing), daemon=True
            )
            proc.start()
            self.pipes.append(mine)
            self.procs.append(proc)

    def wait(self, what: str, timeout: float = 300) -> list[Any]:
        """Each worker's next message, which must be ``what``."""
        return [
            self._next(pipe, proc, what, timeout) for pipe, proc in zip(self.pipes, self.procs, strict=True)
        ]

    @staticmethod
    def _next(pipe: Connection, proc: Any, what: str, timeout: float) -> Any:
        """One worker's next message ``(what, value)``; its ``value``. A worker that failed says "done" instead."""
        if not pipe.poll(timeout):
            raise RuntimeError(f"client worker {proc.pid} did not report {what!r} in {timeout} s")
        try:
            kind, value = pipe.recv()
        except EOFError:  # it died without a word (killed, say)
            proc.join(10)
            raise RuntimeError(f"client worker {proc.pid} exited ({proc.exitcode}) before {what!r}") from None
        if kind == "done" and what != "done":
            raise RuntimeError(f"client worker {proc.pid} failed before {what!r}: {value.notes}")
        assert kind == what, (kind, what)
        return value

    def send(self, message: tuple[Any, ...]) -> None:
        """``message`` to every worker; one that is gone is reported with its last word, not a broken pipe."""
        for pipe, proc in zip(self.pipes, self.procs, strict=True):
            try:
                pipe.send(message)
            except BrokenPipeError:
                self._next(pipe, proc, message[0], timeout=10)
                raise

    def join(self) -> list[Tally]:
        tallies = self.wait("done")
        for proc in self.procs:
            proc.join(10)
        return tallies


def progress_bar(total: float, desc: str) -> Any:
    try:
        from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]

        # disable=None: none on a pipe, where its redrawn lines would bury a traceback
        return tqdm(total=round(total), desc=desc, unit="s", leave=False, file=sys.stderr, disable=None)
    except ImportError:
        return None


def wait_with_bar(until: float, bar: Any, counter: Any, base: float) -> None:
    while (left := until - now()) > 0:
        time.sleep(min(0.5, left))
        if bar is not None:
            bar.n = min(bar.total, round(now() - base))
            bar.set_postfix(moves=counter.value, refresh=True)


def split(items: list[int], n: int) -> list[list[int]]:
    return [items[i::n] for i in range(n)]


@dataclass
class Phase:
    label: str
    tally: Tally
    wall: float
    server_cpu: float  # fraction of one core, summed over the servers
    client_cpu: float  # fraction of one core, summed over the workers
    client_cores: int
    rss_kib: int
    apart_cpu: float = 0.0  # fraction of one core, summed over ``run_races``'s ``apart`` processes
    late_s: float = 0.0  # how long after the warm-up the window opened: races were not all playing

    @property
    def late(self) -> str:
        """Said after the window's length when it opened late (else nothing)."""
        return (
            f", from {self.late_s:.1f} s after the warm-up: not every race was playing"
            if self.late_s > 0
            else ""
        )

    def summary(self) -> str:
        """One line of what was measured, printed as soon as the phase ends."""
        t = self.tally
        return (f"{self.label}: {t.moves} moves in {self.wall:.1f} s{self.late}, server CPU {self.server_cpu * 100:.0f} %, "
                f"rejects {t.rejects}, errors {t.errors}{''.join(f'; {n}' for n in t.notes[:3])}")  # fmt: skip

    @property
    def moves_s(self) -> float:
        return self.tally.moves / self.wall

    @property
    def cpu_us_per_move(self) -> float:
        """Server CPU time per move: what a move costs, whatever else shares the core."""
        cpu = self.server_cpu * self.wall
        return cpu / self.tally.moves * 1e6 if self.tally.moves and cpu > 0 else float("nan")


def run_races(
    label: str,
    args: argparse.Namespace,
    servers: Sequence[Pid],
    urls: list[tuple[str, int]],
    rate: float,
    echo: bool = False,
    apart: Sequence[Pid] = (),
) -> Phase:
    """One measured phase of ``args.races`` races spread over the client workers.

    ``apart``: processes whose CPU is measured over the same window but kept
    out of the servers' (``Phase.apart_cpu``): the Redis servers, say.
    """
    cpus = cpu_list(args.client_cpus)
    n = max(1, min(args.clients, args.races))
    jobs = [
        Job(
            "echo" if echo else "races",
            urls,
            races=part,
            spectators=args.spectators,
            cpus=cpus,
            rate=rate / n,
            version=args.protocol,
        )
        for part in split(list(range(args.races)), n)
    ]
    pool = Pool(jobs)
    pool.wait("ready")
    pool.send(("go", None))
    base = now()
    warmup = min(args.warmup, 0.5) if echo else args.warmup  # the relay has no countdown
    bar = progress_bar(warmup + args.duration, label)
    window = open_window(pool, args.races, base + warmup, args.duration, bar, base)
    wait_with_bar(window.start, bar, pool.counter, base)
    cpu0 = sum(p.cpu_s() for p in servers)
    apart0 = sum(p.cpu_s() for p in apart)
    spy = None
    if args.profile and not echo and rate <= 0:
        spy = subprocess.Popen(
            [shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy"), "record", "-p", str(servers[0].pid), "-d", str(int(args.duration)), "-r", "200",
             "-f", "raw", "-o", args.profile],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    wait_with_bar(window.end, bar, pool.counter, base)
    cpu = sum(p.cpu_s() for p in servers) - cpu0
    apart_cpu = sum(p.cpu_s() for p in apart) - apart0
    if spy is not None:
        spy.wait(30)
    rss = sum(p.rss_kib() for p in servers)
    if bar is not None:
        bar.close()
    tally = merge(pool.join())
    wall = window.end - window.start
    phase = Phase(
        label, tally, wall, cpu / wall, tally.cpu_s / wall, len(cpus) or 1, rss, apart_cpu / wall,
        late_s=window.start - (base + warmup),
    )  # fmt: skip
    print(f"[{phase.summary()}]", file=sys.stderr, flush=True)  # known at once, should a later phase fail
    return phase


def open_window(pool: Pool, races: int, earliest: float, duration: float, bar: Any, base: float) -> Window:
    """The measured window, sent to the workers: from ``earliest`` (the warm-up's end), or once every race is playing.

    A race still counting down (late on a busy machine) would be measured
    as a server with nothing to do: a closed loop of no moves, then a half
    load of nothing. The window waits for them (``START_TIMEOUT_S`` at
    most, then errors tell the rest), and opens no sooner than
    ``WINDOW_LEAD_S`` after it is sent, so every worker has it before its
    first ack counts.
    """
    give_up = earliest + START_TIMEOUT_S
    while pool.playing.value < races and now() < give_up and all(w.is_alive() for w in pool.procs):
        wait_with_bar(now() + 0.05, bar, pool.counter, base)
    start = max(earliest, now() + WINDOW_LEAD_S)
    window = Window(start, start + duration)
    pool.send(("window", window.start, window.end))
    return window


def report(ph: Phase, conns: int, base_rss: int) -> None:
    t = ph.tally
    per_conn = (ph.rss_kib - base_rss) / conns if conns else float("nan")
    print(f"{ph.label}:")
    missed = f", {t.missed} paced sends found no idle player" if t.missed else ""
    print(
        f"  sustained moves/s     {ph.moves_s:10.0f}   ({t.moves} moves in {ph.wall:.1f} s{ph.late}{missed})"
    )
    print(f"  move -> ack           {summary(t.ack_ms)}")
    print(f"  move -> opp. progress {summary(t.progress_ms)}")
    if t.spectator_ms:
        print(f"  move -> spectators    {summary(t.spectator_ms)}")
    print(f"  server CPU            {ph.server_cpu * 100:9.0f} %   client CPU {ph.client_cpu * 100:.0f} % of "
          f"{ph.client_cores} core(s); RSS {ph.rss_kib / 1024:.1f} MiB, "
          f"{per_conn:.1f} KiB per connection over the idle process ({conns} connections)")  # fmt: skip
    print(f"  server CPU per move   {ph.cpu_us_per_move:10.0f} us   (capacity of one whole core: "
          f"{1e6 / ph.cpu_us_per_move if ph.cpu_us_per_move > 0 else float('nan'):.0f} moves/s)")  # fmt: skip
    print(f"  rejects {t.rejects}, errors {t.errors}")
    for note in t.notes[:3]:
        print(f"    {note}")


def limit_note(ph: Phase) -> str:
    if ph.server_cpu >= 0.9:
        return "the server was the limit"
    if ph.client_cpu >= 0.9 * ph.client_cores:
        return "the CLIENTS were the limit (server below 90% of its core)"
    return "neither side saturated its cores: latency or the machine was the limit"


#: The figures each round gives, and their targets (issue 18): ratios to the echo relay, and bytes.
TARGETS = (
    ("sustained moves/s     ", ">= 0.60"),
    ("p99 move->ack at half ", "<= 2"),
    ("server CPU per move   ", "< 2"),
    ("mean ack, bytes       ", "<= 80"),
)


def races_scenario(args: argparse.Namespace, data: Path) -> int:
    """``--repeat`` rounds of ours and echo, alternating, then the median figures.

    The machine's other load moves both servers' figures by 10-20% from one
    minute to the next, and the p99 ratio far more; rounds taken in turn and
    their medians say more than one run.
    """
    rounds = [races_round(args, data / f"round{n}") for n in range(args.repeat)]
    if args.repeat > 1:
        print(f"\nover {args.repeat} rounds (median, and the range), protocol v{args.protocol}:")
        for i, (name, target) in enumerate(TARGETS):
            xs = sorted(r[0][i] for r in rounds if not math.isnan(r[0][i]))
            if xs:
                print(f"  {name}{statistics.median(xs):7.2f}   ({xs[0]:.2f}-{xs[-1]:.2f}; target {target})")
    return max(r[1] for r in rounds)


def races_round(args: argparse.Namespace, data: Path) -> tuple[tuple[float, ...], int]:
    """One round: ours closed loop and at half load, then echo at both; the figures of ``TARGETS``, the exit code."""
    servers = start_servers(args, data)
    urls = [("127.0.0.1", proc.port) for proc in servers]
    base_rss = sum(proc.rss_kib() for proc in servers)
    conns = args.races * (2 + args.spectators)
    try:
        p1 = run_races("ours, closed loop", args, servers, urls, args.rate)
        half = args.offered or p1.moves_s / 2
        if half <= 0:  # a rate of 0 is the closed loop again, not a load
            raise RuntimeError(f"no half load to offer (--offered sets one): {p1.summary()}")
        p2 = run_races("ours, half load", args, servers, urls, half)
    finally:
        for server in servers:
            server.stop()
    t = p1.tally
    sizes = {k: round(t.size_sum[k] / t.size_n[k]) if t.size_n[k] else 100 for k in t.size_sum}
    echo = start_echo(args, sizes)
    echo_base = echo.rss_kib()
    eurls = [("127.0.0.1", echo.port)]
    try:
        p3 = run_races("echo, closed loop", args, [echo], eurls, args.rate, echo=True)
        p4 = run_races("echo, half load", args, [echo], eurls, half, echo=True)
    finally:
        echo.stop()
    active = t.playing_s / (t.players * p1.wall) if t.players else 1.0
    print(f"\n{args.races} races, {args.spectators} spectators each, {args.duration:.0f} s measured after "
          f"{args.warmup:.0f} s warm-up; clients speak protocol v{args.protocol}; {args.clients} client processes "
          f"on CPUs {args.client_cpus or 'any'}, server on CPUs {args.server_cpus or 'any'}; "
          f"load average before: {args.load_before}")  # fmt: skip
    print(f"mean frame sizes {sizes}; closed loop: players in a started game {active * 100:.0f}% of the time")
    report(p1, conns, base_rss)
    report(replace_label(p2, f"race server, half load (offered {half:.0f} moves/s)"), conns, base_rss)
    report(replace_label(p3, "bare echo relay, closed loop (maximum)"), conns, echo_base)
    report(replace_label(p4, f"bare echo relay, same half load ({half:.0f} moves/s)"), conns, echo_base)
    ratio_tp = p1.moves_s / p3.moves_s if p3.moves_s else float("nan")
    ratio_p99 = pct(p2.tally.ack_ms, 99) / pct(p4.tally.ack_ms, 99) if p4.tally.ack_ms else float("nan")
    ratio_p50 = pct(p2.tally.ack_ms, 50) / pct(p4.tally.ack_ms, 50) if p4.tally.ack_ms else float("nan")
    ratio_cpu = p1.cpu_us_per_move / p3.cpu_us_per_move
    print("who was the limit:")
    for ph in (p1, p3):
        print(f"  {ph.label:22s} {limit_note(ph)}")
    print("ratios to the bare echo relay:")
    print(f"  sustained moves/s     {ratio_tp:6.2f}x   (target >= 0.60)")
    print(f"  p99 move->ack at half {ratio_p99:6.2f}x   (target <= 2)")
    print(f"  p50 move->ack at half {ratio_p50:6.2f}x")
    print(f"  server CPU per move   {ratio_cpu:6.2f}x   (target < 2; "
          f"echo/ours capacity per core: {p3.cpu_us_per_move / p1.cpu_us_per_move:.2f})")  # fmt: skip
    print(f"  mean ack              {sizes['ack']:6d} bytes (target <= 80)")
    errors = sum(ph.tally.rejects + ph.tally.errors for ph in (p1, p2, p3, p4))
    print(f"load average after: {load_average()}")
    print(f"rejects+errors: {errors}")
    return (ratio_tp, ratio_p99, ratio_cpu, float(sizes["ack"])), 1 if errors else 0


def replace_label(ph: Phase, label: str) -> Phase:
    ph.label = label
    return ph


def players_scenario(args: argparse.Namespace, data: Path) -> int:
    """``--players`` connections seated in started matches, one move each: RSS per connection."""
    servers = start_servers(args, data)
    try:
        url = ("127.0.0.1", servers[0].port)
        time.sleep(0.5)
        base = servers[0].rss_kib()
        pairs = args.players // 2
        cpus = cpu_list(args.client_cpus)
        pool = Pool(
            [
                Job("players", [url], pairs=part, cpus=cpus, version=args.protocol)
                for part in split(list(range(pairs)), args.clients)
            ]
        )
        bar = progress_bar(2 * pairs, "connecting players")
        deadline = now() + 300
        while not all(p.poll(0) for p in pool.pipes) and now() < deadline:
            time.sleep(0.2)
            if bar is not None:
                bar.n = pool.counter.value
                bar.refresh()
        if bar is not None:
            bar.close()
        pool.wait("ready")
        time.sleep(1)
        rss = servers[0].rss_kib()
        pool.send(("close", None))
        tally = merge(pool.join())
    finally:
        for s in servers:
            s.stop()
    n = 2 * pairs
    print(f"{n} connected players in {pairs} started matches on one process (load average {load_average()}):")
    print(f"  RSS {rss / 1024:.1f} MiB (idle process {base / 1024:.1f} MiB): "
          f"{(rss - base) / n:.1f} KiB per connection (target < 64)")  # fmt: skip
    print(f"  rejects {tally.rejects}, errors {tally.errors}")
    for note in tally.notes[:3]:
        print(f"    {note}")
    return 1 if tally.rejects + tally.errors or (rss - base) / n >= 64 else 0


def watchers_scenario(args: argparse.Namespace, data: Path) -> int:
    """One match, ``--watchers`` spectators over the client workers, both players at ``--watch-rate``."""
    servers = start_servers(args, data)
    try:
        url = ("127.0.0.1", servers[0].port)
        cpus = cpu_list(args.client_cpus)
        players = Pool(
            [Job("fanout-players", [url], cpus=cpus, per_player_rate=args.watch_rate, version=args.protocol)]
        )
        (code,) = players.wait("ready")
        specs = Pool(
            [
                Job("watchers", [url], spectators=len(part), match=code, cpus=cpus, version=args.protocol)
                for part in split(list(range(args.watchers)), args.clients)
            ]
        )
        specs.wait("ready")
        base = now()
        window = Window(base + 3.5, base + 3.5 + args.duration)  # the countdown is 3 s
        players.send(("go", window.start, window.end))
        specs.send(("go", window.start, window.end + 1.0))  # the last boards arrive
        bar = progress_bar(3.5 + args.duration, f"{args.watchers} spectators")
        wait_with_bar(window.start, bar, players.counter, base)
        cpu0 = servers[0].cpu_s()
        wait_with_bar(window.end, bar, players.counter, base)
        cpu = (servers[0].cpu_s() - cpu0) / (window.end - window.start)
        if bar is not None:
            bar.close()
        played = merge(players.join())
        watched = merge(specs.join())
        rss = servers[0].rss_kib()
    finally:
        for s in servers:
            s.stop()
    lat = [
        (t - played.sent[(r, s, m)]) * 1000 for r, s, m, t in watched.deliveries if (r, s, m) in played.sent
    ]
    sent = len(played.sent)
    print(f"one match, {args.watchers} spectators over {args.clients} client processes, 2 players at "
          f"{args.watch_rate} moves/s each: {sent} moves in {args.duration:.0f} s, {len(lat)} board deliveries "
          f"(expected {sent * args.watchers}); load average {load_average()}")  # fmt: skip
    print(f"  move -> every spectator {summary(lat)}  (target p99 <= 100 ms)")
    print(f"  move -> ack             {summary(played.ack_ms)}")
    print(f"  server CPU {cpu * 100:.0f} %, client CPU {watched.cpu_s / args.duration * 100:.0f} % of "
          f"{len(cpus) or 1} core(s); RSS {rss / 1024:.1f} MiB; "
          f"rejects {played.rejects + watched.rejects}, errors {played.errors + watched.errors}")  # fmt: skip
    for note in (played.notes + watched.notes)[:3]:
        print(f"    {note}")
    missing = sent * args.watchers - len(lat)
    return 1 if played.rejects + played.errors + watched.errors or missing else 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--races", type=int, default=20, help="concurrent races of bot pairs (0: skip)")
    ap.add_argument("--protocol", type=int, choices=(1, 2), default=2, help="the protocol the clients speak")
    ap.add_argument("--spectators", type=int, default=0, help="spectators per race")
    ap.add_argument(
        "--rate", type=float, default=0.0, help="moves/s in all in the first phase (0: closed loop)"
    )
    ap.add_argument(
        "--offered", type=float, default=0.0, help="moves/s of the paced phase (0: half the first)"
    )
    ap.add_argument("--duration", type=float, default=10.0, help="seconds measured per phase")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of the races scenario, then medians")
    ap.add_argument(
        "--warmup",
        type=float,
        default=7.0,
        help="seconds before measuring (start offsets up to 3 s, then the 3 s countdown); "
        "longer while not every race is playing",
    )
    ap.add_argument("--players", type=int, default=0, help="connected players for the RSS check (0: skip)")
    ap.add_argument("--watchers", type=int, default=0, help="spectators of one match for the fan-out check")
    ap.add_argument("--watch-rate", type=float, default=2.0, help="moves/s per player in the fan-out check")
    ap.add_argument("--redis", metavar="URL", help="run --processes servers sharing this Redis")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--clients", type=int, default=2, help="client worker processes")
    ap.add_argument("--server-cpus", default="0", help="taskset CPU list for servers ('' for none)")
    ap.add_argument("--client-cpus", default="1-", help="CPUs of the client processes ('' for any)")
    ap.add_argument("--server-uvloop", action="store_true", help="run the server on uvloop")
    ap.add_argument(
        "--server-python",
        default=sys.executable,
        metavar="PATH",
        help="the interpreter of our server and the echo relay (a venv with the server's packages)",
    )
    ap.add_argument("--profile", metavar="FILE", help="py-spy record (raw) of the closed-loop phase")
    ap.add_argument("--server-env", action="append", default=[], metavar="K=V", help="server environment")
    ap.add_argument("--server-arg", action="append", default=[], metavar="ARG", help="more server options")
    args = ap.parse_args(argv)
    args.load_before = load_average()
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.client_cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpu_list(args.client_cpus) or cpu_list("0-"))
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    code = 0
    with tempfile.TemporaryDirectory() as tmp:
        if args.races:
            code |= races_scenario(args, Path(tmp) / "races")
        if args.players:
            code |= players_scenario(args, Path(tmp) / "players")
        if args.watchers:
            code |= watchers_scenario(args, Path(tmp) / "watchers")
    return code


if __name__ == "__main__":
    sys.exit(main())
