"""How long an embedded server takes to start on a data file that holds many matches.

    .venv/bin/python bench/startup.py --finished 10000 --live 1000

Writes a SQLite data file of its own: ``--finished`` decided races and
``--live`` races still being played (each 60 moves in, both racers gone with
the previous run), every log as the hub appends it. Then times, each in a
fresh process-like start: opening the store (schema, indexes), and
``App.start`` up to serving, which adopts every live race (reads and folds
its log, so that its timers run), the clock two minutes into the races: the
racers never came back, so each race is also decided (abandoned) as it is
adopted. Printed: wall and CPU time, then again with tracemalloc on, for the
memory the adopted races hold.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "server"))

from fakeclock import T0  # noqa: E402
from matchsim import Sim, greedy_moves  # noqa: E402

from bench.live_list import code  # noqa: E402
from server.app import App  # noqa: E402
from server.bus import open_bus  # noqa: E402
from server.match import Event  # noqa: E402
from server.match.events import Decided, Opened  # noqa: E402
from server.settings import Settings  # noqa: E402
from server.store.sqlite import SqliteStore  # noqa: E402

MOVES = 60


def template(finished: bool) -> list[Event]:
    """A race 60 moves in (greedy moves, the racers taking turns), then decided or not."""
    sim = Sim(seed="777", time_limit_s=600)
    sim.start()
    seqs = [0, 0]
    for i in range(MOVES):
        seat = i % 2
        game = sim.match.seat(seat).game
        assert game is not None
        text = greedy_moves(game)
        if text is None:
            break
        seqs[seat] += 1
        sim.move(seat, seqs[seat], text)
    if finished:
        sim.do("decide_finish", 0)
        sim.do("decide_finish", 1)
        assert sim.match.result is not None
    return sim.log


def renamed(log: list[Event], match: str) -> list[Event]:
    out: list[Event] = []
    for e in log:
        if isinstance(e, Opened):
            e = e.model_copy(update={"match": match})
        elif isinstance(e, Decided):
            e = e.model_copy(update={"result": e.result.model_copy(update={"match": match})})
        out.append(e)
    return out


async def fill(path: str, finished: int, live: int) -> None:
    store = SqliteStore(path)
    logs = {True: template(True), False: template(False)}
    for n in range(finished + live):
        done = n < finished
        match = code(n)
        await store.append(match, 0, renamed(logs[done], match))
    await store.close()


async def start(path: str, memory: bool) -> tuple[float, float, float, int, int]:
    if memory:
        tracemalloc.start()
    t0, cpu = time.perf_counter(), time.process_time()
    store = SqliteStore(path)
    t1 = time.perf_counter()
    settings = Settings(port=0, store_url=f"sqlite:///{path}", sweep_s=3600)
    # two minutes into the races: within their time, past the racers' grace (they never came back)
    app = App(settings, store, await open_bus(settings.bus_url), clock=lambda: T0 + 120_000)
    await app.start()
    t2, cpu = time.perf_counter(), time.process_time() - cpu
    held = 0
    if memory:
        held, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    loaded = len(app.hub.live)
    await app.shutdown()
    return t1 - t0, t2 - t1, cpu, loaded, held


async def run(finished: int, live: int) -> None:
    with tempfile.TemporaryDirectory(prefix="startup-") as tmp:
        path = f"{tmp}/grip.db"
        t = time.perf_counter()
        await fill(path, finished, live)
        size = sum(f.stat().st_size for f in Path(tmp).iterdir())
        print(
            f"{finished} finished, {live} live: data file {size / 2**20:.0f} MiB, written in {time.perf_counter() - t:.0f} s"
        )
        backup = f"{tmp}/copy.db"
        shutil.copyfile(path, backup)
        for memory in (False, True):
            shutil.copyfile(backup, path)  # the adopted races are decided: each start on the same file
            opened, started, cpu, loaded, held = await start(path, memory)
            print(
                f"  open the store {opened * 1000:7.1f} ms; App.start {started * 1000:7.1f} ms, {cpu * 1000:.0f} ms CPU",
                f"(tracemalloc on: {held / 2**20:.1f} MiB held, {held / max(loaded, 1) / 1024:.0f} KiB a race)"
                if memory
                else f"({loaded} races adopted and decided)",
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--finished", type=int, default=10_000)
    ap.add_argument("--live", type=int, default=1_000)
    args = ap.parse_args()
    asyncio.run(run(args.finished, args.live))


if __name__ == "__main__":
    main()
