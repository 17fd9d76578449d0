"""Lobbies nobody started are deleted from the SQLite store a day after they opened.

Redis lets an undecided match's keys expire; without the same here, every
lobby ever opened (a "race a friend" link nobody followed) stayed in the data
file for good.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from fakeclock import FakeClock
from race import MakeAppT
from wsclient import WsClient

from server.app import FORGET_LOBBIES_AFTER_MS
from server.store.sqlite import SqliteStore
from tests.store_events import opening, reopened_without, started

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
