"""Events for store tests: a match's opening, a seat's move, a started race, a result, as the hub would append them."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator

import redis.asyncio

from server import protocol as p
from server.match import Event, Match
from server.match.events import Decided, Moved, Numbers
from server.ratings import PlayerRating
from server.store import Store
from server.store.sqlite import SCHEMA, SqliteStore

NUMBERS = Numbers(leftover=72, on_grid=24, complete=0, moves=1)


def opening(match: str) -> list[Event]:
    """ev 1 and 2: the match opened, its creator seated."""
    return Match.open(
        match,
        variant="classic",
        seed="1",
        seats=2,
        time_limit_s=600,
        name="A",
        token="t" * 24,
        player=None,
        now=0,
    )


def moved(ev: int, seat: int, seq: int) -> Moved:
    return Moved(ev=ev, at=ev, seat=seat, seq=seq, move="T", numbers=NUMBERS)


async def append(store: Store, m: Match, events: list[Event]) -> None:
    await store.append(m.id, m.ev, events)
    for e in events:
        m.apply(e)


async def started(store: Store, match: str) -> Match:
    """A two-seat race through its countdown, both racers connected."""
    events = opening(match)
    await store.append(match, 0, events)
    m = Match.from_events(events)
    await append(store, m, m.decide_join("B", "u" * 24, None, 0))
    for seat in (0, 1):
        await append(store, m, m.decide_connect(seat, f"inst{seat}-1", 0))
    await append(store, m, m.decide_ready(0, 0))
    await append(store, m, m.decide_ready(1, 0))  # and the countdown
    return m


def reopened_without(path: str, table: str) -> SqliteStore:
    """The SQLite store at ``path`` opened again after dropping ``table``: a data file from before it."""
    with sqlite3.connect(path) as db:
        db.execute(f"DROP TABLE {table}")
    return SqliteStore(path)


def result(match: str, players: list[str], scores: list[int], at: int) -> p.Result:
    """A decided race (or a solo game, one player) between ``players``."""
    return p.Result(
        ev=9,
        match=match,
        variant="classic",
        seed="1",
        started_at=0,
        decided_at=at,
        seats=[
            p.SeatResult(
                seat=n, player=pid, name=pid.title(), score=score, rating=None, on_grid=24 - score % 24,
                complete=0, reason="finish", finished_at=at, moves=[],
            )
            for n, (pid, score) in enumerate(zip(players, scores, strict=True))
        ],
        winner=None if len(players) < 2 else min(range(len(scores)), key=scores.__getitem__),
        draw=False,
    )  # fmt: skip


def decided(r: p.Result) -> Decided:
    return Decided(ev=r.ev, at=r.decided_at, result=r)


async def lose_latest_moves(redis_url: str, match: str, seat: int, n: int) -> None:
    """Redis back from a snapshot taken before ``seat``'s last ``n`` moves (the match's last ``n`` events).

    Each stream is written again without them, so that it never had them:
    its last id goes back too (after ``XDEL`` it would not, and the next
    event's number would be refused as if it were taken).
    """
    client = redis.asyncio.Redis.from_url(redis_url)
    try:
        for key in (f"grip:match:{{{match}}}:events", f"grip:match:{{{match}}}:seat:{seat}"):
            kept = (await client.xrange(key))[:-n]
            await client.delete(key)
            for entry_id, fields in kept:
                await client.xadd(key, fields, id=entry_id)
    finally:
        await client.aclose()


def filled_board(path: str, players: int) -> list[str]:
    """A data file at ``path`` whose classic board holds ``players`` named ``Racer pNN`` (in pairs of equal
    ratings), as one from before the board's counts were kept: the store makes them when it opens it.
    The ids, best first (equal ratings by id, the greater first)."""
    rows = [(f"p{i:02}", PlayerRating(mu=2000.0 - 10 * (i // 2), games=6)) for i in range(players)]
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA)
        db.executemany(
            "INSERT INTO ratings VALUES ('classic', ?, ?, ?, 1)",
            [(pl, r.model_dump_json(), r.mu) for pl, r in rows],
        )
        db.executemany("INSERT INTO players VALUES (?, 'h', ?, 0)", [(pl, f"Racer {pl}") for pl, _ in rows])
        db.execute("DROP TABLE board_sizes")
        db.execute("DROP TABLE rank_trees")
    return [pl for _, pl in sorted(((r.mu, pl) for pl, r in rows), reverse=True)]


@contextlib.contextmanager
def disk_full(store: Store) -> Iterator[None]:
    """As if the SQLite store's disk were full: the database refuses writes, and so does the file the
    journal writes to (``/dev/full`` in its place: ENOSPC, as a full disk answers)."""
    assert isinstance(store, SqliteStore)
    db, journal = store._db, store._journaled
    current = journal._files[-1] if journal._files else journal._open()
    assert current.fd is not None and current.path is not None
    db.execute("PRAGMA query_only = 1")
    full = os.open("/dev/full", os.O_WRONLY)
    os.dup2(full, current.fd)
    os.close(full)
    try:
        yield
    finally:
        again = os.open(current.path, os.O_WRONLY | os.O_APPEND)
        os.dup2(again, current.fd)
        os.close(again)
        db.execute("PRAGMA query_only = 0")
