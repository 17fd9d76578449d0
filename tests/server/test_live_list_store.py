"""The store's indexes of the list of live races, on every backend: a refresh reads their top only.

Each order the list offers is kept in the store (SQLite: columns and indexes;
Redis: a sorted set an order, and one by the races' ends), so that a refresh
reads each order's first ``LIVE_LIMIT`` and the stale listings, not every
listing: read whole, 10,000 listings were 70 ms of the event loop every 2 s
(docs/benchmarks.md, "The live list read from the top"). What a follower is
shown must not change: each read here is held to the whole list ranked.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ratingkit import rated_result, store_result

from server import live_races
from server.live_races import STALE_AFTER_END_MS, Follower, LiveRaces, top
from server.protocol import CODE_ALPHABET, CODE_LENGTH, LIVE_LIMIT, LiveRace, LiveRacer, now_ms
from server.store import Store, open_store
from server.store.redis import RedisStore
from server.store.redis_ratings import LIVE_KEYS, live_key
from server.store.sqlite import SqliteStore

Backend = dict[str, str]
ORDERS = ("newest", "closest")


def code(n: int) -> str:
    return "".join(CODE_ALPHABET[(n >> (3 * i)) % len(CODE_ALPHABET)] for i in range(CODE_LENGTH))


def race(n: int, now: int, lefts: tuple[int, int] | None = None, ends_at: int | None = None) -> LiveRace:
    """The ``n``th listing: started ``n`` ms before ``now``, its racers ``n % 7`` cards apart unless given."""
    left = lefts or (40, 40 + n % 7)
    return LiveRace(
        match=code(n), variant="classic", time_limit_s=300, rated=False, started_at=now - n,
        ends_at=now + 300_000 if ends_at is None else ends_at,
        racers=[LiveRacer(seat=s, name="x", rating=None, leftover=left[s], moves=n, finished=False) for s in (0, 1)],
    )  # fmt: skip


async def the_top(store: Store, now: int) -> tuple[dict[str, list[str]], int]:
    """Each order's first ``LIVE_LIMIT`` (match codes) and the live count, as a refresh reads them;
    held to the whole list ranked, as every refresh did before."""
    read = await store.live_top(LIVE_LIMIT, now - STALE_AFTER_END_MS)
    races, stale = live_races.current(read.races, now)
    whole, whole_stale = live_races.current(await store.live_races(), now)
    assert sorted(stale) == sorted(whole_stale)
    assert len(read.races) <= 2 * LIVE_LIMIT + len(stale)  # the tops and the stale ones: not the list
    orders = {o: [r["match"] for r in top(races, o, LIVE_LIMIT)] for o in ORDERS}  # type: ignore[arg-type]
    assert orders == {o: [r["match"] for r in top(whole, o, LIVE_LIMIT)] for o in ORDERS}  # type: ignore[arg-type]
    assert read.total - len(stale) == len(whole)
    await indexes_hold_the_listings(store)
    return orders, len(whole)


async def indexes_hold_the_listings(store: Store) -> None:
    """Redis: each index holds exactly the listed matches (none left behind by a race gone)."""
    if isinstance(store, RedisStore):
        listed = set(await store.client.hkeys(live_key("races")))
        for key in LIVE_KEYS[1:]:
            assert set(await store.client.zrange(key, 0, -1)) == listed, key


async def test_a_race_moves_in_each_order_and_leaves_every_one_when_decided(backend: Backend) -> None:
    store = await open_store(backend["store_url"])
    now = now_ms()
    await store.list_races([race(n, now) for n in range(300)])
    orders, total = await the_top(store, now)
    assert total == 300 and orders["newest"][:3] == [code(0), code(1), code(2)]
    # the oldest race of those furthest apart catches up: first of the closest, its start unchanged
    last = 293
    assert code(last) not in orders["closest"]
    await store.list_races([race(last, now, lefts=(40, 40))])
    orders, total = await the_top(store, now)
    assert orders["closest"][:1] == [code(0)] and code(last) in orders["closest"]
    assert code(last) not in orders["newest"] and total == 300
    # it falls behind again: out of the top
    await store.list_races([race(last, now, lefts=(10, 50))])
    orders, _ = await the_top(store, now)
    assert code(last) not in orders["closest"]
    # decided: off every order, its place taken by the next; a late listing of it stays off
    first = code(0)
    await store_result(store, rated_result("Pa", "Pb", at=now, match=first))
    orders, total = await the_top(store, now)
    assert total == 299 and first not in orders["newest"] + orders["closest"]
    assert orders["newest"][:1] == [code(1)] and len(orders["newest"]) == LIVE_LIMIT
    await store.list_races([race(0, now)])
    assert (await the_top(store, now))[0] == orders
    await store.close()


async def test_another_process_and_a_restart_read_the_same_top(backend: Backend) -> None:
    now = now_ms()
    store = await open_store(backend["store_url"])
    await store.list_races([race(n, now) for n in range(150)])
    before = await the_top(store, now)
    if backend["store_url"].startswith("sqlite"):
        await store.close()  # one process at a time: a restart
        other = await open_store(backend["store_url"])
    else:
        other = await open_store(backend["store_url"])  # another process, the first one still there
    assert await the_top(other, now) == before
    await other.list_races([race(149, now, lefts=(30, 30))])
    orders, _ = await the_top(other, now)
    assert orders["closest"][:2] == [code(0), code(7)] and code(149) in orders["closest"]
    if not backend["store_url"].startswith("sqlite"):
        assert await the_top(store, now) == (orders, 150)
        await store.close()
    await other.close()


class Listener:
    """A connection following the list, as far as the list asks: an id, and what it is sent."""

    def __init__(self, id: str, sent: list[bytes]) -> None:
        self.id, self.send = id, sent.append


async def test_stale_listings_at_the_top_are_skipped_and_cleaned_from_every_index(backend: Backend) -> None:
    """A process that died under its races leaves their listings: the newest ones here, more of them
    than a page. Each order's top is read past them, and the next write takes them off."""
    store = await open_store(backend["store_url"])
    now = now_ms()
    dead = [race(n, now, ends_at=now - STALE_AFTER_END_MS - 1) for n in range(150)]  # the newest
    alive = [race(n, now) for n in range(150, 400)]
    await store.list_races(dead + alive)
    orders, total = await the_top(store, now)
    assert total == 250 and orders["newest"][:1] == [code(150)] and len(orders["closest"]) == LIVE_LIMIT
    live = LiveRaces(store, lambda: now, 2.0)
    sent: dict[str, list[bytes]] = {o: [] for o in ORDERS}
    for o in ORDERS:
        live.followers[o] = Follower(Listener(o, sent[o]), o, LIVE_LIMIT)  # type: ignore[arg-type]
    await live.refresh()
    for o in ORDERS:
        page = json.loads(sent[o][-1])
        assert page["total"] == 250 and [r["match"] for r in page["races"]] == orders[o]
    await live.write()  # the stale ones go with the first write after the read that found them
    assert len(await store.live_races()) == 250
    assert (await store.live_top(LIVE_LIMIT, now - STALE_AFTER_END_MS)).total == 250
    assert await the_top(store, now) == (orders, 250)
    await store.close()


async def test_listings_written_before_the_orders_were_kept_are_indexed(
    backend: Backend, tmp_path: Path
) -> None:
    """A data file or a Redis an earlier version wrote holds listings with no index: read, they are found."""
    now = now_ms()
    old = [race(n, now) for n in range(120)]
    url = backend["store_url"]
    if url.startswith("sqlite"):
        await (await open_store(url)).close()  # a data file, its list then as an earlier version kept it
        db = sqlite3.connect(url.removeprefix("sqlite:///"))
        db.execute("DROP TABLE live_races")
        db.execute("CREATE TABLE live_races (match TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID")
        db.executemany("INSERT INTO live_races VALUES (?, ?)", [(r.match, r.model_dump_json()) for r in old])
        db.commit()
        db.close()
        store = await open_store(url)
        assert isinstance(store, SqliteStore)
    else:
        store = await open_store(url)
        assert isinstance(store, RedisStore)
        await store.client.hset(live_key("races"), mapping={r.match: r.model_dump_json() for r in old})
        await store.list_races([race(n, now) for n in range(120, 130)])  # this version's, meanwhile
        await store.client.zadd(live_key("newest"), {code(999): now})  # an index's leftover of a race gone
    orders, total = await the_top(store, now)
    assert orders["newest"][:1] == [code(0)] and total == (120 if url.startswith("sqlite") else 130)
    await store.close()
