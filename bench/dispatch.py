"""A move's server cost without sockets: ``App.dispatch`` driven by in-process peers.

The socket bench (``bench/load.py``) swings with whatever else the shared
machine runs; this one times only the server's own work per move (decide,
durable append to a real SQLite file, apply, render, frames) in process CPU
time, so two versions of the code compare within a few percent. Two peers
race each deal with greedy's moves (chosen beforehand, so the bots cost
nothing here); the clock is stepped past the countdown.

    python bench/dispatch.py --games 60                   # one move at a time
    python bench/dispatch.py --games 600 --together 600   # a busy server
    python bench/dispatch.py --games 60 --protocol 1      # peers speaking protocol v1
    python bench/dispatch.py --games 60 --spectators 2    # each race watched by two spectators
    python bench/dispatch.py ... --profile out.prof
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import itertools
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from server import protocol as p
from server.app import App, Settings
from server.bus.memory import MemoryBus
from server.dispatch import Client
from server.engine import Game
from server.engine.players import greedy_move
from server.match.state import COUNTDOWN_MS
from server.store.sqlite import SqliteStore


class Peer:
    """A ``Client`` that counts the bytes it is sent."""

    _ids = itertools.count(1)

    def __init__(self, version: int) -> None:
        self.id = f"bench-{next(self._ids)}"
        self.player = None
        self.version = version
        self.live: Any = None
        self.seat: int | None = None
        self.bytes = 0

    def send(self, message: p.Outgoing) -> None:
        self.bytes += len(p.encode(message))

    def send_many(self, frames: Sequence[bytes]) -> None:
        self.bytes += sum(len(f) for f in frames)

    def close(self, code: int, reason: str) -> None:
        pass


def greedy_line(seed: str) -> list[str]:
    game = Game.new(seed, "classic")
    line = []
    while (move := greedy_move(game)) is not None:
        line.append(str(move))
        game.play(move)
    return line


class Race:
    """Two peers racing one deal on ``line``, greedy's moves for it, watched by ``spectators`` peers."""

    def __init__(self, seed: str, line: list[str], version: int, spectators: int) -> None:
        self.seed, self.line = seed, line
        self.a, self.b = Peer(version), Peer(version)
        self.spectators = [Peer(version) for _ in range(spectators)]

    async def seat(self, app: App) -> None:
        """Create, join, watch, ready: the countdown runs."""
        a, b = cast(Client, self.a), cast(Client, self.b)
        await app.dispatch(a, p.Create(seed=self.seed, seats=2))
        await app.dispatch(b, p.Join(match=self.a.live.match.id))
        for spectator in self.spectators:
            await app.dispatch(cast(Client, spectator), p.Watch(match=self.a.live.match.id))
        await app.dispatch(a, p.Ready())
        await app.dispatch(b, p.Ready())

    async def start(self, app: App) -> None:
        """Once the clock is past the countdown."""
        await app.hub._tick(self.a.live)
        assert self.a.live.match.status == "playing", self.a.live.match.status

    async def move(self, app: App, seq: int) -> int:
        """Both players' move ``seq`` (1-based), if the line has one; the moves made."""
        if seq > len(self.line):
            return 0
        text = self.line[seq - 1]
        await app.dispatch(cast(Client, self.a), p.MoveMsg(seq=seq, move=text))
        await app.dispatch(cast(Client, self.b), p.MoveMsg(seq=seq, move=text))
        return 2

    def check(self) -> None:
        played = [s.last_seq for s in self.a.live.match.seats if s is not None]
        want = len(self.line)
        assert played == [want, want], f"deal {self.seed}: moves refused ({played} of {want})"
        assert all(s.bytes for s in self.spectators), f"deal {self.seed}: a spectator was sent nothing"


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=60, help="deals raced, seeds 1..N")
    ap.add_argument(
        "--together",
        type=int,
        default=1,
        help="races whose moves are in flight at once (1: one move at a time, like a light load; "
        "hundreds: a busy server, whose appends share commits and whose games share the caches)",
    )
    ap.add_argument("--profile", metavar="FILE", help="write a cProfile of the races to FILE")
    ap.add_argument("--protocol", type=int, choices=(1, 2), default=2, help="the protocol the peers speak")
    ap.add_argument("--spectators", type=int, default=0, help="spectators watching each race")
    args = ap.parse_args()
    races = [
        Race(str(s), greedy_line(str(s)), args.protocol, args.spectators) for s in range(1, args.games + 1)
    ]
    clock = [1_700_000_000_000]
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(str(Path(tmp) / "bench.db"))
        app = App(Settings(rate_per_s=1e9, burst=10**9), store, MemoryBus(), clock=lambda: clock[0])
        profiler = cProfile.Profile() if args.profile else None
        moves = 0
        cpu = wall = setup = 0.0
        for first in range(0, len(races), args.together):
            group = races[first : first + args.together]
            s0 = time.process_time()
            for race in group:
                await race.seat(app)
            clock[0] += COUNTDOWN_MS + 1
            for race in group:
                await race.start(app)
            setup += time.process_time() - s0
            longest = max(len(r.line) for r in group)
            t0, w0 = time.process_time(), time.perf_counter()
            if profiler:
                profiler.enable()
            for seq in range(1, longest + 1):
                moves += sum(await asyncio.gather(*(r.move(app, seq) for r in group)))
            if profiler:
                profiler.disable()
            cpu += time.process_time() - t0
            wall += time.perf_counter() - w0
            for race in group:
                race.check()
        if profiler:
            profiler.dump_stats(args.profile)
        await app.hub.close()
        await store.close()
    print(
        f"{moves} moves in {args.games} races, {args.together} at a time, protocol v{args.protocol}, "
        f"each watched by {args.spectators}: "
        f"{cpu / moves * 1e6:.1f} us CPU per move ({wall / moves * 1e6:.1f} us wall); "
        f"{setup / args.games * 1e6:.0f} us CPU a race to its start (create, join, ready, start)"
    )


if __name__ == "__main__":
    asyncio.run(main())
