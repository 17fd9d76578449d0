"""What one pairing round of the quick-race queue costs with the queue long, on Redis and in memory.

    .venv/bin/python bench/queue_round.py --queued 1000 5000

For each queue length, ``--queued`` places (one pool, ratings 201 apart:
nobody pairs, so every round finds the same queue, the worst case) are put
in the store (a ``redis-server`` of its own; the embedded store's memory
queue), then a round is timed, the mean of ``--rounds``: the store's read
of the places, then ``matchmaking.pair`` on them.

- window: what a round does, ``Store.queue_entries(256)`` (the
  ``Settings.quick_window`` longest waiting);
- whole: the baseline, in the same run on the same store, a round reading
  every place (on Redis, main's ``HGETALL`` of the places hash).

Printed: each in ms (wall), and whole / window.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import redis.asyncio as aioredis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server import matchmaking  # noqa: E402
from server.settings import Settings  # noqa: E402
from server.store import QueueEntry, Store, open_store  # noqa: E402
from server.store.redis_ratings import quick_key  # noqa: E402
from tests.conftest import RedisServer  # noqa: E402

WINDOW = Settings().quick_window
SINCE = 1_700_000_000_000


def place(i: int) -> QueueEntry:
    return QueueEntry(
        player=f"p{i:06d}",
        name=f"Player {i}",
        conn=f"c{i}",
        variant="classic",
        time_limit_s=300,
        rating=201 * i,
        since=SINCE + i,
        token_hash="h" * 64,
    )


async def whole_hash(raw: aioredis.Redis) -> list[QueueEntry]:
    """Every place, as main read the queue (``HGETALL`` of the places hash)."""
    return [QueueEntry.load(v) for v in (await raw.hgetall(quick_key("places"))).values()]


async def mean_ms(round_: Callable[[], Awaitable[list[QueueEntry]]], rounds: int) -> float:
    now = SINCE + 1000
    started = time.perf_counter()
    for _ in range(rounds):
        pairs = matchmaking.pair(await round_(), now)
        assert not pairs
    return (time.perf_counter() - started) / rounds * 1000


async def measure(
    name: str, store: Store, whole: Callable[[], Awaitable[list[QueueEntry]]], n: int, rounds: int
) -> None:
    window_ms = await mean_ms(lambda: store.queue_entries(WINDOW), rounds)
    whole_ms = await mean_ms(whole, rounds)
    print(
        f"{name:7} {n:6,} queued: window ({WINDOW}) {window_ms:7.2f} ms, whole {whole_ms:7.2f} ms, "
        f"whole / window {whole_ms / window_ms:5.1f}"
    )


async def run(sizes: list[int], rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        try:
            for n in sizes:
                raw = aioredis.Redis.from_url(server.url)
                await raw.flushdb()
                store = await open_store(server.url)
                for i in range(n):
                    await store.queue_join(place(i))
                await measure("Redis", store, partial(whole_hash, raw), n, rounds)
                await store.close()
                await raw.aclose()
        finally:
            server.stop()
        for n in sizes:
            store = await open_store(f"sqlite:///{tmp}/grip-{n}.db")
            for i in range(n):
                await store.queue_join(place(i))
            await measure("memory", store, partial(store.queue_entries, n), n, rounds)
            await store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queued", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    asyncio.run(run(args.queued, args.rounds))


if __name__ == "__main__":
    main()
