"""Helpers for quick races and ratings: players who say hello, places in the queue, stored rated results."""

from __future__ import annotations

import itertools
from typing import Any

from race import client, kick
from wsclient import TIMEOUT, Msg, WsClient

from server import protocol as p
from server import ratings
from server.app import App
from server.match.events import Decided, Opened, SeatTaken
from server.match.state import COUNTDOWN_MS
from server.store import Store

_codes = itertools.count(1)


async def player(app: App, name: str) -> tuple[WsClient, Msg]:
    """A connection that said hello as a new player ``name``: it and its welcome."""
    c = await client(app)
    return c, await c.request({"type": "hello", "name": name}, "welcome")


async def again(app: App, welcome: Msg) -> WsClient:
    """Another connection of the same player (a second tab)."""
    c = await client(app)
    await c.request({"type": "hello", "player": welcome["player"], "key": welcome["key"]}, "welcome")
    return c


async def queue(c: WsClient, **fields: Any) -> Msg:
    return await c.request({"type": "quick", **fields}, "queued")


async def paired(*clients: WsClient, timeout: float = TIMEOUT) -> list[Msg]:
    return [await c.expect("paired", timeout) for c in clients]


async def start_quick(app: App, a: WsClient, b: WsClient) -> str:
    """Both paired racers ready; the race started. Its code."""
    sa, _ = await paired(a, b)
    for c in (a, b):
        await c.send({"type": "ready"})
    for c in (a, b):
        await c.expect("countdown")
    kick(app, sa["match"], COUNTDOWN_MS)
    for c in (a, b):
        await c.expect("start")
    return str(sa["match"])


async def start_friendly(app: App, a: WsClient, b: WsClient, **create: Any) -> str:
    """``a`` creates a race (with ``create``'s fields), ``b`` joins; both ready; it started. Its code."""
    created = await a.request({"type": "create", **create}, "created")
    await b.request({"type": "join", "match": created["match"]}, "joined")
    for c in (a, b):
        await c.send({"type": "ready"})
    await a.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    for c in (a, b):
        await c.expect("start")
    return str(created["match"])


def code() -> str:
    n = next(_codes)
    digits = []
    for _ in range(p.CODE_LENGTH):
        n, r = divmod(n, len(p.CODE_ALPHABET))
        digits.append(p.CODE_ALPHABET[r])
    return "".join(reversed(digits))


def rated_result(
    winner: str,
    loser: str,
    *,
    at: int,
    variant: str = "classic",
    draw: bool = False,
    match: str | None = None,
) -> p.Result:
    """A rated race's result: ``winner`` in seat 0 beat ``loser`` (or drew)."""
    seats = [
        p.SeatResult(
            seat=n, player=pl, name=pl, score=score, rating=None, on_grid=0, complete=0,
            reason="over", finished_at=at, moves=["T"],
        )
        for n, (pl, score) in enumerate(((winner, 10), (loser, 10 if draw else 20)))
    ]  # fmt: skip
    return p.Result(
        ev=4, match=match or code(), variant=variant, seed="s", started_at=at - 1000, decided_at=at,
        seats=seats, winner=None if draw else 0, draw=draw, rated=True,
    )  # fmt: skip


async def store_result(store: Store, result: p.Result) -> None:
    """Store a decided race's log the way a decision does, with its follow-ups (the rating among them)."""
    events = [
        Opened(ev=1, at=result.started_at, match=result.match, variant=result.variant, seed="s", seats=2,
               time_limit_s=300, rated=result.rated),
        *(SeatTaken(ev=2 + s.seat, at=result.started_at, seat=s.seat, name=s.name, token_hash="h",
                    player=s.player) for s in result.seats),
        Decided(ev=4, at=result.decided_at, result=result),
    ]  # fmt: skip
    await store.append(result.match, 0, events)


async def replayed(store: Store, variant: str) -> dict[str, ratings.PlayerRating]:
    """Every rating of ``variant`` recomputed from the stored results, in the store's order."""
    results = [await store.result(m) for m in await store.rating_log(variant)]
    return ratings.replay(r for r in results if r is not None).get(variant, {})
