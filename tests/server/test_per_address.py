"""What one client address may hold: WebSockets at once, new identities an hour (server/addresses.py).

Two ways of being another machine without a network: the tests' connections come through a
``--proxy`` (127.0.0.1 here) that names the client in ``X-Real-IP``, as nginx does; and, where
this machine has a network address, directly from it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from race import MakeAppT, client, clock_advance
from websockets.exceptions import InvalidStatus
from wsclient import Closed, WsClient

from server.app import App
from server.reach import lan_address

PROXIED = {"proxies": ("127.0.0.1/32",)}


async def from_address(app: App, address: str) -> WsClient:
    """A connection that counts for ``address`` (through the proxy)."""
    return await client(app, additional_headers={"X-Real-IP": address})


async def refused_status(connecting: Any) -> int:
    with pytest.raises(InvalidStatus) as exc:
        await connecting
    return exc.value.response.status_code


async def until(condition: Any) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0)  # a yield to the loop, not a wait for time


async def test_an_address_holds_at_most_its_share_of_connections(make_app: MakeAppT) -> None:
    app = await make_app(max_per_address=3, **PROXIED)
    held = [await from_address(app, "203.0.113.5") for _ in range(3)]
    for c in held:
        await c.request({"type": "hello"}, "welcome")
    assert await refused_status(from_address(app, "203.0.113.5")) == 429
    other = await from_address(app, "203.0.113.6")  # another address is not concerned
    await other.request({"type": "hello"}, "welcome")
    for _ in range(5):  # nor is this machine's own (no proxy between)
        await (await client(app)).request({"type": "hello"}, "welcome")
    await held.pop().ws.close()
    await until(lambda: app.addresses.open["203.0.113.5"] == 2)
    again = await from_address(app, "203.0.113.5")
    await again.request({"type": "hello"}, "welcome")


async def test_a_burst_of_connections_from_one_address_keeps_only_its_share(make_app: MakeAppT) -> None:
    """Handshakes in flight together all pass the first check: the ones past the cap are closed."""
    app = await make_app(max_per_address=3, **PROXIED)
    tries = await asyncio.gather(
        *(from_address(app, "203.0.113.5") for _ in range(12)), return_exceptions=True
    )
    welcomed = 0
    for c in tries:
        if isinstance(c, WsClient):
            with contextlib.suppress(Closed):
                await c.request({"type": "hello"}, "welcome")
                welcomed += 1
    assert welcomed == 3
    assert app.addresses.open["203.0.113.5"] == 3


async def test_an_address_makes_a_limited_number_of_identities(make_app: MakeAppT) -> None:
    app = await make_app(identity_burst=3, identities_per_hour=60, **PROXIED)
    c = await from_address(app, "203.0.113.5")
    made = [await c.request({"type": "hello"}, "welcome") for _ in range(3)]
    refused = await c.request({"type": "hello"}, "error")
    assert refused["code"] == "rate_limited"
    again = {"type": "hello", "player": made[0]["player"], "key": made[0]["key"]}
    assert (await c.request(again, "welcome"))["player"] == made[0]["player"]  # an identity it has
    await (await from_address(app, "203.0.113.6")).request({"type": "hello"}, "welcome")
    clock_advance(app, 60_000)  # one a minute
    await c.request({"type": "hello"}, "welcome")
    assert (await c.request({"type": "hello"}, "error"))["code"] == "rate_limited"


async def test_a_direct_client_is_counted_by_its_own_address_whatever_it_claims(make_app: MakeAppT) -> None:
    """``serve --host 0.0.0.0``: another machine on the network, no proxy to believe."""
    address = lan_address()
    if address is None:
        pytest.skip("this machine has no network address")
    app = await make_app(host="0.0.0.0", max_per_address=2)
    lan_url = f"ws://{address}:{app.port}/"
    claims = {"additional_headers": {"X-Real-IP": "203.0.113.7"}}
    held = [await WsClient.connect(lan_url, **claims) for _ in range(2)]
    for c in held:
        await c.request({"type": "hello"}, "welcome")
    assert await refused_status(WsClient.connect(lan_url, **claims)) == 429
