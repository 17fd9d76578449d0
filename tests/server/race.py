"""Helpers for end-to-end races over real websockets."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from wsclient import Msg, WsClient

from server.app import App
from server.match.state import COUNTDOWN_MS


def url(app: App) -> str:
    return f"ws://127.0.0.1:{app.port}/"


async def client(app: App, **kwargs: Any) -> WsClient:
    return await WsClient.connect(url(app), **kwargs)


def clock_advance(app: App, ms: int) -> None:
    app.clock.advance(ms)  # type: ignore[attr-defined]


def kick(app: App, code: str, ms: int = 0) -> None:
    """Move the server's clock on and run the match's timers now."""
    if ms:
        clock_advance(app, ms)
    app.hub.tick_soon(app.hub.live[code])


@dataclass
class Race:
    app: App
    code: str
    players: list[WsClient]
    tokens: list[str]
    seqs: list[int] = field(default_factory=lambda: [1, 1])
    views: list[Msg] = field(default_factory=lambda: [{}, {}])

    async def move(self, seat: int, text: str | None = None) -> Msg:
        """Send this seat's next move (default: a greedy one) and wait for its ack."""
        text = text or greedy(self.views[seat])
        seq = self.seqs[seat]
        await self.players[seat].send({"type": "move", "seq": seq, "move": text})
        ack = await self.players[seat].expect("ack", seq=seq)
        self.seqs[seat] += 1
        self.views[seat] = ack["view"]
        return ack

    async def finish_both(self) -> Msg:
        """Both racers finish; the result, once both have it."""
        a, b = self.players
        await a.send({"type": "finish"})
        await b.send({"type": "finish"})
        result = await a.expect("result")
        await b.expect("result")
        return result

    async def leave(self) -> None:
        """Both racers hang up; back once the server has let go of both seats."""
        lm = self.app.hub.live[self.code]
        for player in self.players:
            await player.close()
        async with asyncio.timeout(5):
            while lm.seats:
                await asyncio.sleep(0)  # a yield to the loop, not a wait for time


def greedy(view: Msg) -> str:
    legal: list[str] = view["legal"]
    for pick in (lambda t: t.startswith("W"), lambda t: ":0>" in t, lambda t: t in ("T", "R")):
        for text in legal:
            if pick(text):
                return text
    raise AssertionError(f"no progress move in {legal}")


async def lobby_pair(app: App, **create: Any) -> Race:
    a = await client(app)
    b = await client(app)
    created = await a.request({"type": "create", "name": "Ann", "seed": "12345", **create}, "created")
    code = created["match"]
    joined = await b.request({"type": "join", "match": code, "name": "Bob"}, "joined")
    assert (created["seat"], joined["seat"]) == (0, 1)
    return Race(app, code, [a, b], [created["token"], joined["token"]])


async def start_race(app: App, **create: Any) -> Race:
    """Two players seated, ready, through the countdown: both have their ``start``."""
    race = await lobby_pair(app, **create)
    a, b = race.players
    await a.send({"type": "ready"})
    await b.send({"type": "ready"})
    await asyncio.gather(a.expect("countdown"), b.expect("countdown"))
    kick(app, race.code, COUNTDOWN_MS)
    starts = await asyncio.gather(a.expect("start"), b.expect("start"))
    race.views = [s["view"] for s in starts]
    return race


async def drained(app: App) -> None:
    """Back once the hub's background tasks (unsubscribes, republishes) are done."""
    async with asyncio.timeout(5):
        while app.hub._tasks:
            await asyncio.sleep(0)  # a yield to the loop, not a wait for time


MakeAppT = Callable[..., Awaitable[App]]
