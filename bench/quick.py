"""Time from "race anyone" to the start of the race: 200 players over 10 s across two processes.

    .venv/bin/python bench/quick.py --players 200 --over 10

Starts its own ``redis-server`` and two ``python -m server --redis URL``
processes. Each player is a ``client.Client`` on one of the two processes
(alternately), with a rating drawn from N(1500, 200) written into the
store first (else every newcomer is 1500 and pairs with the first comer).
They join the queue evenly over ``--over`` seconds; each, once paired, is
ready at once (as the web page and the terminal are). Printed: from the
``quick`` to ``paired``, and to ``start`` (which includes the 3 s
countdown), p50 and p99; the rating gap of the pairs.

The baseline, in the same run on the same processes: the same number of
friendly races, created on one process and joined by code on the other at
once, both ready: from the ``create`` to ``start``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from client import Client, connect  # noqa: E402
from server import protocol as p  # noqa: E402
from server.match.state import COUNTDOWN_MS  # noqa: E402
from server.ratings import PlayerRating  # noqa: E402
from server.store.redis_ratings import rating_key  # noqa: E402
from tests.conftest import RedisServer  # noqa: E402
from tests.processes import ServerProcess  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def friendly_pair(url_a: str, url_b: str, out: list[float]) -> None:
    a, b = (
        await connect(url_a, name="a", auto_reconnect=False),
        await connect(url_b, name="b", auto_reconnect=False),
    )
    try:
        t0 = time.monotonic()
        created = await a.create(time_limit_s=300)
        await b.join(created.match)
        await asyncio.gather(a.ready(), b.ready())
        await a.next_event(p.Start, timeout=60)
        out.append(time.monotonic() - t0)
    finally:
        await a.close()
        await b.close()


async def seed_ratings(redis_url: str, urls: list[str], n: int, rng: random.Random) -> list[str]:
    """``n`` players (ids) with ratings from N(1500, 200) stored for classic: their identity is reused."""
    players = []
    r = redis.Redis.from_url(redis_url)
    for i in range(n):
        c = await connect(urls[i % 2], name=f"p{i}", auto_reconnect=False)
        assert c.player is not None and c.key is not None
        players.append(f"{c.player} {c.key}")
        mu = rng.gauss(1500, 200)
        r.hset(
            rating_key("classic", "players"),
            c.player,
            PlayerRating(mu=mu, sigma=200, games=10).model_dump_json(),
        )
        await c.close()
    r.close()
    return players


async def run(players: int, over: float) -> None:
    rng = random.Random(23)
    with tempfile.TemporaryDirectory() as tmp:
        store = RedisServer(Path(tmp))
        store.start()
        procs = [ServerProcess("--redis", store.url, "--rate", "1000").start() for _ in range(2)]
        urls = [proc.url for proc in procs]
        try:
            ids = await seed_ratings(store.url, urls, players, rng)
            out: dict[str, list[float]] = {"paired": [], "start": []}
            begin = time.monotonic() + 1.0

            async def player(i: int) -> None:
                pid, key = ids[i].split()
                c = Client(urls[i % 2], auto_reconnect=False)
                await c.open()
                c.player, c.key = pid, key
                await c.hello()
                await asyncio.sleep(max(0.0, begin + over * i / players - time.monotonic()))
                t0 = time.monotonic()
                try:
                    await asyncio.wait_for(c.race_anyone(), 120)
                    out["paired"].append(time.monotonic() - t0)
                    await c.ready()
                    await c.next_event(p.Start, timeout=60)
                    out["start"].append(time.monotonic() - t0)
                finally:
                    await c.close()

            await asyncio.gather(*(player(i) for i in range(players)))
            friendly: list[float] = []
            await asyncio.gather(*(friendly_pair(urls[0], urls[1], friendly) for _ in range(players // 2)))
        finally:
            for proc in procs:
                proc.kill()
            store.stop()
    countdown = COUNTDOWN_MS / 1000
    print(f"{players} players joining over {over:g} s, alternately on 2 server processes, one Redis")
    print(
        f"  quick -> paired:  p50 {pct(out['paired'], 0.5) * 1000:7.1f} ms   p99 {pct(out['paired'], 0.99) * 1000:7.1f} ms"
    )
    s50, s99 = pct(out["start"], 0.5), pct(out["start"], 0.99)
    print(
        f"  quick -> start:   p50 {s50 * 1000:7.1f} ms   p99 {s99 * 1000:7.1f} ms  (the countdown is {countdown:g} s of it)"
    )
    f50, f99 = pct(friendly, 0.5), pct(friendly, 0.99)
    print(
        f"  baseline, create -> join -> start of {len(friendly)} friendly races at once: p50 {f50 * 1000:7.1f} ms   p99 {f99 * 1000:7.1f} ms"
    )
    print(f"  ratio (quick -> start) / (friendly -> start): p50 {s50 / f50:.2f}   p99 {s99 / f99:.2f}")
    print(
        f"  mean time paired: {statistics.mean(out['paired']) * 1000:.1f} ms over {len(out['paired'])} players"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, default=200)
    ap.add_argument("--over", type=float, default=10.0, help="seconds over which the players join")
    args = ap.parse_args()
    asyncio.run(run(args.players, args.over))


if __name__ == "__main__":
    main()
