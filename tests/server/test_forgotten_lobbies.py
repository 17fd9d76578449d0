"""Lobbies nobody started are deleted from the SQLite store a day after they opened.

Redis lets an undecided match's keys expire; without the same here, every
lobby ever opened (a "race a friend" link nobody followed) stayed in the data
file for good.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from fakeclock import FakeClock
from race import MakeAppT
from wsclient import WsClient

from server.app import FORGET_LOBBIES_AFTER_MS
from server.store import sqlite as sqlite_module
from server.store.sqlite import SqliteStore
from tests.store_events import moved, opening, reopened_without, started

OLD, NEW, RACE = "BCDEFGHJ", "CDEFGHJK", "ACDEFGHJ"


async def lobbies_and_a_race(store: SqliteStore) -> None:
    """OLD opened at 0, NEW a day later, RACE (opened at 0) started."""
    await store.append(OLD, 0, opening(OLD))
    await store.append(NEW, 0, [e.model_copy(update={"at": FORGET_LOBBIES_AFTER_MS}) for e in opening(NEW)])
    await started(store, RACE)


async def test_only_lobbies_opened_before_the_cutoff_and_never_started_go(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "grip.db"))
    await lobbies_and_a_race(store)
    assert await store.forget_lobbies(FORGET_LOBBIES_AFTER_MS) == 1
    assert await store.events(OLD) == []
    assert len(await store.events(NEW)) == 2
    assert len(await store.events(RACE)) > 2
    assert await store.forget_lobbies(FORGET_LOBBIES_AFTER_MS) == 0
    await store.close()


async def test_a_data_file_from_before_the_list_gets_its_lobbies_listed(tmp_path: Path) -> None:
    path = str(tmp_path / "grip.db")
    store = SqliteStore(path)
    await lobbies_and_a_race(store)
    await store.close()
    store = reopened_without(path, "lobbies")
    assert await store.forget_lobbies(FORGET_LOBBIES_AFTER_MS + 1) == 2  # OLD and NEW, not the race
    assert len(await store.events(RACE)) > 2
    await store.close()


async def test_the_server_forgets_a_lobby_a_day_old(make_app: MakeAppT) -> None:
    clock = FakeClock()
    app = await make_app(clock=clock, sweep_s=0.02)
    c = await WsClient.connect(f"ws://127.0.0.1:{app.port}")
    created = await c.request({"type": "create"}, "created")
    code = created["match"]
    assert await app.store.events(code)
    clock.advance(FORGET_LOBBIES_AFTER_MS + 1)  # the cutoff itself: the test above
    async with asyncio.timeout(5):
        while await app.store.events(code):
            await asyncio.sleep(0.02)
    joiner = await WsClient.connect(f"ws://127.0.0.1:{app.port}")
    refused = await joiner.request({"type": "join", "match": code}, "error")
    assert refused["code"] == "not_found"


async def test_the_lobbies_are_found_by_their_age_and_forgotten_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No scan of the whole table, and the moves of live races are not held up behind a backlog."""
    monkeypatch.setattr(sqlite_module, "FORGET_BATCH", 4)
    store = SqliteStore(str(tmp_path / "grip.db"))
    plan = store._db.execute(
        "EXPLAIN QUERY PLAN SELECT match FROM lobbies WHERE opened_at < ? ORDER BY opened_at LIMIT ?", (1, 4)
    ).fetchall()
    assert "lobbies_by_age" in " ".join(str(step[-1]) for step in plan), plan
    old = [f"X{c}MNPQRT" for c in "34679ACDEF"]  # ten lobbies: three batches
    for code in old:
        await store.append(code, 0, opening(code))
    race = await started(store, RACE)
    done: list[str] = []

    async def forget() -> None:
        assert await store.forget_lobbies(FORGET_LOBBIES_AFTER_MS) == len(old)
        done.append("forget")

    async def move() -> None:
        await store.append(RACE, race.ev, [moved(race.ev + 1, 0, 1)])
        done.append("move")

    await asyncio.gather(forget(), move())
    assert done == ["move", "forget"]  # the move's commit ran between two batches
    assert [await store.events(code) for code in old] == [[]] * len(old)
    await store.close()
