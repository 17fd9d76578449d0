"""What the list of live races costs with 1,000 races running (or 10,000, 50,000), on Redis and on SQLite.

    .venv/bin/python bench/live_list.py --races 1000 10000 50000

For each store (a ``redis-server`` of its own; a SQLite file) and each count,
the races are listed, then timed, each the mean of ``--rounds``:

- a process's write: all its changed listings, 10,000 a ``list_races`` (the
  worst case, every race changed within the last 2 s: a move each);
- a follower refresh on one process (``LiveRaces.refresh``, with a follower
  of a page of 50 newest first and one closest first): reading the top of
  each order from the store and building both pages, what it does every 2 s
  while someone follows the list there;
- the same refresh as it was before the store kept the orders (the baseline,
  in the same run on the same store): the whole list read and decoded
  (``Store.live_races()``), each order ranked by a heap, both pages built;
- a follower's ask (``live``) between two refreshes, on ``LiveRaces`` itself:
  each asks for a page not built yet since the last read (limits 1 to 100,
  each in both orders, from the lowest: a client's worst case, one frame
  each), the read itself not counted (its period made long);
- one match's log of 100 events (what a spectator's ``watch`` or a reload reads).

Printed with the bytes of a page, and each cost as a share of one core at
the list's pace (every 2 s). CPU is this process's: the event loop's.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server import protocol as p  # noqa: E402
from server.errors import StoreUnavailable  # noqa: E402
from server.live_races import Follower, LiveRaces, current, frame, ranked  # noqa: E402
from server.match.events import Moved, Numbers, Opened  # noqa: E402
from server.store import Store, open_store  # noqa: E402
from tests.conftest import RedisServer  # noqa: E402

EVERY_S = 2.0
PAGE = 50
CALL = (
    10_000  # listings written in one ``list_races`` at most: a bigger script outlasts Redis's socket timeout
)


def code(n: int) -> str:
    digits = []
    for _ in range(p.CODE_LENGTH):
        n, r = divmod(n, len(p.CODE_ALPHABET))
        digits.append(p.CODE_ALPHABET[r])
    return "".join(digits)


def races(n: int, moves: int) -> list[p.LiveRace]:
    now = p.now_ms()
    return [
        p.LiveRace(
            match=code(i),
            variant="classic",
            time_limit_s=300,
            rated=True,
            started_at=now - i * 100,
            ends_at=now + 300_000,
            racers=[
                p.LiveRacer(
                    seat=s,
                    name=f"Player {i}-{s}",
                    rating=1400 + (i * 7 + s * 13) % 300,
                    leftover=72 - (i + s * 3 + moves) % 60,
                    moves=moves + s,
                    finished=False,
                )
                for s in (0, 1)
            ],
        )
        for i in range(n)
    ]


async def write_all(store: Store, listings: list[p.LiveRace]) -> None:
    for start in range(0, len(listings), CALL):
        await store.list_races(listings[start : start + CALL])


async def timed(rounds: int, work) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Mean wall and CPU seconds of ``work()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(rounds):
        await work()
    return (time.perf_counter() - wall) / rounds, (time.process_time() - cpu) / rounds


async def measure(name: str, store: Store, n: int, rounds: int) -> None:
    await write_all(store, races(n, 0))
    match = code(10**9)
    log = [Opened(ev=1, at=0, match=match, variant="classic", seed="1", seats=2, time_limit_s=300)]
    log += [
        Moved(
            ev=i,
            at=i,
            seat=0,
            seq=i - 1,
            move="T",
            numbers=Numbers(leftover=72, on_grid=24, complete=0, moves=i),
        )
        for i in range(2, 101)
    ]
    await store.append(match, 0, log)
    k = iter(range(1, 10**6))

    async def write() -> None:
        await write_all(store, races(n, next(k)))

    class Quiet:  # a follower here: its pages are built, not written anywhere
        version = 2

        def __init__(self, id: str) -> None:
            self.id = id

        def send(self, message: object) -> None:
            pass

    followed = LiveRaces(store, lambda: 0, EVERY_S)
    for order in ("newest", "closest"):
        followed.followers[order] = Follower(Quiet(order), order, PAGE)  # type: ignore[arg-type]

    async def refresh() -> None:  # a period's refresh, with a follower of each order: LiveRaces.refresh
        for f in followed.followers.values():
            f.last = b""
        await followed.refresh()

    async def whole() -> None:  # the refresh before the store kept the orders: read all, rank each
        races, _ = current(await store.live_races(), 0)
        for order in ("newest", "closest"):
            frame(ranked(races, order, p.LIVE_LIMIT), order, PAGE, len(races))  # type: ignore[arg-type]

    async def baseline() -> None:
        await store.events(match)

    live = LiveRaces(store, lambda: 0, every_s=3600.0)  # one read, then only asks
    await live.follow(Quiet("asker"), p.LiveRequest())  # type: ignore[arg-type]
    asks = iter([p.LiveRequest(order=o, limit=n) for n in range(1, 101) for o in ("newest", "closest")])

    async def ask() -> None:
        await live.follow(Quiet("asker"), next(asks))  # type: ignore[arg-type]

    w_wall, w_cpu = await timed(rounds, write)
    r_wall, r_cpu = await timed(rounds, refresh)
    try:
        o_wall, o_cpu = await timed(rounds, whole)
    except StoreUnavailable:  # Redis: the whole list's reply outlasted the socket timeout (2 s)
        o_wall = o_cpu = float("nan")
    b_wall, b_cpu = await timed(rounds * 5, baseline)
    a_wall, a_cpu = await timed(200, ask)
    print(f"{name}: {n} listed races")
    print(
        f"  write of all {n} changed listings: {w_wall * 1000:7.2f} ms wall, {w_cpu * 1000:7.2f} ms CPU here "
        f"= {w_cpu / EVERY_S * 100:.1f}% of a core at one write every {EVERY_S:g} s"
    )
    print(
        f"  refresh (the top of each order, two pages of {PAGE}): {r_wall * 1000:7.2f} ms wall, "
        f"{r_cpu * 1000:7.2f} ms CPU = {r_cpu / EVERY_S * 100:.1f}% of a core; "
        f"a page is {len(followed.followers['newest'].last):,} bytes"
    )
    print(
        f"  refresh before (read all, rank each order): {o_wall * 1000:7.2f} ms wall, {o_cpu * 1000:7.2f} ms CPU "
        f"= {o_cpu / EVERY_S * 100:.1f}% of a core"
    )
    print(
        f"  an ask for a page not built since the read (200 of them): {a_wall * 1000:7.3f} ms wall, "
        f"{a_cpu * 1000:7.3f} ms CPU; at a client's 30 frames a second, {a_cpu * 30 * 100:.1f}% of a core"
    )
    print(f"  one match's log of 100 events: {b_wall * 1000:7.2f} ms wall, {b_cpu * 1000:7.2f} ms CPU")


async def run(counts: list[int], rounds: int) -> None:
    for n in counts:
        with tempfile.TemporaryDirectory() as tmp:
            server = RedisServer(Path(tmp))
            server.start()
            try:
                store = await open_store(server.url)
                await measure("Redis", store, n, rounds)
                await store.close()
            finally:
                server.stop()
            store = await open_store(f"sqlite:///{tmp}/grip.db")
            await measure("SQLite", store, n, rounds)
            await store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--races", type=int, nargs="+", default=[1000])
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    asyncio.run(run(args.races, args.rounds))


if __name__ == "__main__":
    main()
