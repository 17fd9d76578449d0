"""A decided match unloaded from one process and read back there still hears the others (Redis)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from fakeclock import FakeClock
from race import client, drained, start_race
from wsclient import WsClient

from server.app import App
from server.hub import UNLOAD_DECIDED_AFTER_MS

StartApp = Callable[..., Awaitable[App]]


async def test_a_match_read_back_at_once_hears_the_other_processes(
    start_app: StartApp, redis_url: str
) -> None:
    clock = FakeClock()
    here = await start_app(clock=clock, store_url=redis_url, bus_url=redis_url)
    there = await start_app(clock=clock, store_url=redis_url, bus_url=redis_url)
    race = await start_race(here)
    await race.finish_both()
    await race.leave()
    clock.advance(UNLOAD_DECIDED_AFTER_MS + 1)
    here.hub.sweep()  # unloads it and leaves its channel
    assert race.code not in here.hub.live
    await here.hub.get(race.code)  # read back at once: subscribed again
    watcher = await client(here)
    await watcher.request({"type": "watch", "match": race.code}, "watching")
    await drained(here)
    # A racer comes back on the other process and asks for a rematch: the watcher hears of it.
    back = await WsClient.connect(f"ws://127.0.0.1:{there.port}")
    await back.request({"type": "resume", "match": race.code, "token": race.tokens[0]}, "resumed")
    await back.send({"type": "rematch"})
    async with asyncio.timeout(10):
        while True:  # lobbies for the racers' comings and goings, then the rematch
            lobby = await watcher.expect("lobby")
            if lobby["seats"][0]["rematch"]:
                break
    assert [(s["connected"], s["rematch"]) for s in lobby["seats"]] == [(True, True), (False, False)]
