"""The boards at 100,000 players: pages of the best ratings by offset and by cursor, ranks, a daily rank.

    .venv/bin/python bench/board_pages.py --players 100000 --repeat 50

Both stores, in process, through the ``Store`` calls the ``rating_board`` and
``ratings`` handlers make: the embedded SQLite store (a data file in a
temporary directory) and Redis (our own throwaway ``redis-server`` on a free
port, no persistence; nothing touches 127.0.0.1:6379). The board is filled
directly (ratings of ``--players`` players past their provisional races,
normally spread around 1,500; and as many ranked daily games, every one
left with the same score, so that a rank there is by time alone), then
each request runs ``--repeat`` times; printed: its median and worst time
in ms.

A store from before cursors (an older checkout: ``PYTHONPATH=that/checkout``)
is measured too, without the cursor's line: docs/benchmarks.md has both.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from redis_fanout import start_redis  # bench/redis_fanout.py: our own redis-server on a free port

from server.ratings import PlayerRating
from server.store import BoardRow, Store
from server.store.redis import BOARD_SCALE, RedisStore, daily_key
from server.store.redis_ratings import rating_key
from server.store.sqlite import SqliteStore

VARIANT = "classic"
PAGE = 20
DAY = "2026-12-01"


def boards(players: int) -> list[tuple[str, PlayerRating]]:
    rnd = random.Random(players)
    return [(f"p{i:06}", PlayerRating(mu=rnd.gauss(1500, 200), sigma=90.0, games=20)) for i in range(players)]


def finishes(players: int) -> list[BoardRow]:
    rnd = random.Random(-players)
    return [
        BoardRow(f"p{i:06}", f"Player {i}", 0, rnd.randint(60_000, 600_000), f"M{i:07}")
        for i in range(players)
    ]


def fill_sqlite(path: str, rows: list[tuple[str, PlayerRating]], day: list[BoardRow]) -> None:
    """The boards' rows, and the store's kept counts dropped: the store makes them from the rows at open."""
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO daily_scores VALUES (?, ?, ?, ?, ?, ?)",
            [(DAY, r.player, r.name, r.score, r.time_ms, r.match) for r in day],
        )
        db.execute("DROP TABLE IF EXISTS daily_counts")
        db.executemany(
            "INSERT INTO ratings VALUES (?, ?, ?, ?, 1)",
            [(VARIANT, pl, r.model_dump_json(), r.mu) for pl, r in rows],
        )
        db.executemany("INSERT INTO players VALUES (?, 'h', ?, 0)", [(pl, f"Player {pl}") for pl, _ in rows])
        db.execute("DROP TABLE IF EXISTS board_sizes")
        db.execute("DROP TABLE IF EXISTS rank_trees")


async def fill_redis(store: RedisStore, rows: list[tuple[str, PlayerRating]], day: list[BoardRow]) -> None:
    """The keys as the store writes them (``SharedData.rate``, ``RedisStore._follow_up``)."""
    client, key = store.client, daily_key(DAY)
    for chunk in range(0, len(rows), 5000):
        async with client.pipeline(transaction=False) as pipe:
            for (pl, r), line in zip(rows[chunk : chunk + 5000], day[chunk : chunk + 5000], strict=True):
                pipe.hset(rating_key(VARIANT, "players"), pl, r.model_dump_json())
                pipe.zadd(rating_key(VARIANT, "board"), {pl: repr(r.mu)})
                pipe.hset(f"grip:player:{pl}", "name", f"Player {pl}")
                pipe.zadd(f"{key}:board", {line.player: line.score * BOARD_SCALE + line.time_ms})
                pipe.hset(f"{key}:entries", line.player, json.dumps(asdict(line)))
            await pipe.execute()


def places_of(page: Any) -> list[Any]:
    """A page's lines: a ``BoardPage`` now, ``(places, total)`` before cursors."""
    return list(page.places if hasattr(page, "places") else page[0])


async def timed(ask: Callable[[], Awaitable[object]], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await ask()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


async def measure(name: str, store: Store, players: int, repeat: int) -> None:
    deep = players - PAGE
    last = places_of(await store.rating_board(VARIANT, deep - 1, 1))[0]
    middle = places_of(await store.rating_board(VARIANT, players // 2, 1))[0]
    asks: dict[str, Callable[[], Awaitable[object]]] = {
        "page from rank 1": lambda: store.rating_board(VARIANT, 0, PAGE),
        f"page from rank {players // 10 + 1:,}": lambda: store.rating_board(VARIANT, players // 10, PAGE),
        f"page from rank {deep + 1:,} (offset)": lambda: store.rating_board(VARIANT, deep, PAGE),
    }
    if "after" in inspect.signature(store.rating_board).parameters:
        key = (last.rating.mu, last.player)
        asks[f"page from rank {deep + 1:,} (cursor)"] = lambda: store.rating_board(VARIANT, 0, PAGE, key)
    asks[f"rank {middle.rank:,}"] = lambda: store.rating_rank(VARIANT, middle.player)
    asks[f"rank {last.rank:,}"] = lambda: store.rating_rank(VARIANT, last.player)
    slowest = f"p{players - 1:06}"  # anyone: every one of the day's players left the same score
    asks["daily leaderboard with my rank (all on one score)"] = lambda: store.leaderboard(DAY, slowest)
    for label, ask in asks.items():
        median, worst = await timed(ask, repeat)
        print(f"| {name} | {label} | {median:.2f} | {worst:.2f} |", flush=True)


async def run(players: int, repeat: int) -> None:
    rows, day = boards(players), finishes(players)
    print(f"{players:,} players on the board, {repeat} requests each; ms\n")
    print("| store | request | median | worst |\n|---|---|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="board-bench-") as tmp:
        path = str(Path(tmp) / "grip.db")
        await SqliteStore(path).close()
        fill_sqlite(path, rows, day)
        t0 = time.perf_counter()
        sqlite = SqliteStore(path)
        opened = (time.perf_counter() - t0) * 1000
        try:
            await measure("SQLite", sqlite, players, repeat)
        finally:
            await sqlite.close()
        proc, port = start_redis("", Path(tmp))  # on no CPU in particular
        try:
            redis = await RedisStore.connect(f"redis://127.0.0.1:{port}/0")
            await fill_redis(redis, rows, day)
            await measure("Redis", redis, players, repeat)
            await redis.close()
        finally:
            proc.terminate()
            proc.wait()
    print(f"\n(opening the SQLite file, its kept counts made from {players:,} ratings: {opened:.0f} ms)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args(argv)
    asyncio.run(run(args.players, args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
