"""A move's server cost without sockets: ``App.dispatch`` driven by in-process peers.

The socket bench (``bench/load.py``) swings with whatever else the shared
machine runs; this one times only the server's own work per move (decide,
durable append to a real SQLite file, apply, render, frames) in process CPU
time, so two versions of the code compare within a few percent. Two peers
race each deal with greedy's moves (chosen beforehand, so the bots cost
nothing here); the clock is stepped past the countdown.

    python bench/dispatch.py --games 60 [--profile out.prof]
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
from server.app import App, Connection, Settings
from server.bus.memory import MemoryBus
from server.engine import Game
from server.engine.players import greedy_move
from server.match import COUNTDOWN_MS
from server.store.sqlite import SqliteStore


class Peer:
    """What ``App`` reads of a connection; it counts the bytes it is sent."""

    _ids = itertools.count(1)

    def __init__(self) -> None:
        self.id = f"bench-{next(self._ids)}"
        self.player = None
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


async def race(app: App, clock: list[int], seed: str, line: list[str]) -> int:
    """Seat two peers on ``seed``, start the race, and play ``line`` for both; the moves made."""
    a, b = Peer(), Peer()
    conn_a, conn_b = cast(Connection, a), cast(Connection, b)
    await app.dispatch(conn_a, p.Create(seed=seed, seats=2))
    await app.dispatch(conn_b, p.Join(match=a.live.match.id))
    await app.dispatch(conn_a, p.Ready())
    await app.dispatch(conn_b, p.Ready())
    clock[0] += COUNTDOWN_MS + 1
    await app.hub._tick(a.live)
    assert a.live.match.status == "playing", a.live.match.status
    for seq, move in enumerate(line, 1):
        await app.dispatch(conn_a, p.MoveMsg(seq=seq, move=move))
        await app.dispatch(conn_b, p.MoveMsg(seq=seq, move=move))
    played = [s.last_seq for s in a.live.match.seats if s is not None]
    assert played == [len(line), len(line)], f"deal {seed}: moves refused ({played} of {len(line)})"
    return 2 * len(line)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=60, help="deals raced, seeds 1..N")
    ap.add_argument("--profile", metavar="FILE", help="write a cProfile of the races to FILE")
    args = ap.parse_args()
    lines = {str(s): greedy_line(str(s)) for s in range(1, args.games + 1)}
    clock = [1_700_000_000_000]
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(str(Path(tmp) / "bench.db"))
        app = App(Settings(rate_per_s=1e9, burst=10**9), store, MemoryBus(), clock=lambda: clock[0])
        profiler = cProfile.Profile() if args.profile else None
        moves = 0
        cpu, wall = time.process_time(), time.perf_counter()
        if profiler:
            profiler.enable()
        for seed, line in lines.items():
            moves += await race(app, clock, seed, line)
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        await app.hub.close()
        await store.close()
    print(
        f"{moves} moves in {args.games} races: {cpu / moves * 1e6:.1f} us CPU per move ({wall / moves * 1e6:.1f} us wall)"
    )


if __name__ == "__main__":
    asyncio.run(main())
