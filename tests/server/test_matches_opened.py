"""Matches a client opens over time, per identity and per address (server/holdings.py, ``opening``).

A practice game created, readied and replaced left 2.8 KB in the SQLite file for good (6.5 KB of
Redis memory), and each create wrote ~48 KB of WAL: a client looping create and replace at its
frame rate did so without end, the quotas counting only the games open at once.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from race import MakeAppT, client, clock_advance, kick
from wsclient import WsClient

from server.app import App
from server.match.state import COUNTDOWN_MS

PROXIED = {"proxies": ("127.0.0.1/32",)}
ON_EACH = pytest.mark.parametrize("backend", ["embedded", "redis"], indirect=True)


async def from_address(app: App, address: str) -> WsClient:
    """A connection that counts for ``address`` (through the proxy), with an identity of its own."""
    c = await client(app, additional_headers={"X-Real-IP": address})
    await c.request({"type": "hello"}, "welcome")
    return c


async def practice(c: WsClient) -> dict[str, Any]:
    """Create a practice game and ready it (the one made before is replaced): the answer to the create."""
    await c.send({"type": "create", "seats": 1})
    async with asyncio.timeout(10):
        while (answer := await c.recv())["type"] not in ("created", "error"):
            pass
    if answer["type"] == "created":
        await c.request({"type": "ready"}, "start")
    return answer


@ON_EACH
async def test_opening_past_the_burst_is_refused_per_identity_and_per_address(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    app = await make_app(
        match_burst=3,
        matches_per_hour=60,
        address_match_burst=5,
        address_matches_per_hour=120,
        **PROXIED,
        **backend,
    )
    ann = await from_address(app, "203.0.113.5")
    for _ in range(3):
        assert (await practice(ann))["type"] == "created"
    refused = await practice(ann)
    assert refused["type"] == "error" and refused["code"] == "rate_limited"
    assert "next in 60 s" in refused["message"]
    lobby = await ann.request({"type": "create"}, "error")  # a lobby too
    assert lobby["code"] == "rate_limited"
    quick = await ann.request({"type": "quick"}, "error")  # a quick race too, which it would open
    assert quick["code"] == "rate_limited" and "next in 60 s" in quick["message"]
    # Another identity from another address is not concerned.
    bob = await from_address(app, "203.0.113.6")
    for _ in range(3):
        assert (await practice(bob))["type"] == "created"
    # A new identity from Ann's address has its own share, until the address has opened its own.
    again = await from_address(app, "203.0.113.5")
    for _ in range(2):
        assert (await practice(again))["type"] == "created"
    address = await practice(again)
    assert address["code"] == "rate_limited" and "your address" in address["message"]
    clock_advance(app, 60_000)  # one a minute for Ann, two for the address
    assert (await practice(ann))["type"] == "created"
    assert (await practice(ann))["code"] == "rate_limited"
    assert (await practice(again))["type"] == "created"


async def race_and_rematch(app: App, a: WsClient, b: WsClient, code: str, tokens: list[str]) -> str:
    """Ready, race (Ann finishes, Bob resigns), both ask for a rematch: the rematch's code."""
    await a.send({"type": "ready"})
    await b.send({"type": "ready"})
    await asyncio.gather(a.expect("countdown"), b.expect("countdown"))
    kick(app, code, COUNTDOWN_MS)
    await asyncio.gather(a.expect("start"), b.expect("start"))
    await a.send({"type": "finish"})
    await b.send({"type": "resign"})
    await asyncio.gather(a.expect("result"), b.expect("result"))
    await a.send({"type": "rematch"})
    await b.send({"type": "rematch"})
    rematched = await asyncio.gather(a.expect("rematched"), b.expect("rematched"))
    new = str(rematched[0]["match"])
    for seat, c in enumerate((a, b)):  # into the rematch's seat, as a client does
        await c.request({"type": "resume", "match": new, "token": tokens[seat]}, "resumed")
    return new


@ON_EACH
async def test_rematches_in_a_row_and_practice_between_are_not_refused(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """The defaults: two people racing again and again, from one address (a home), and practising."""
    app = await make_app(**PROXIED, **backend)
    a = await from_address(app, "203.0.113.5")
    b = await from_address(app, "203.0.113.5")
    created = await a.request({"type": "create", "seed": "12345"}, "created")
    joined = await b.request({"type": "join", "match": created["match"]}, "joined")
    code, tokens = created["match"], [created["token"], joined["token"]]
    for _ in range(6):
        code = await race_and_rematch(app, a, b, code, tokens)
    for _ in range(6):
        assert (await practice(a))["type"] == "created"
