"""Sockets that never finish their handshake (or their HTTP request) are bounded (server/addresses.py, ``Gate``).

A client that opens sockets and sends nothing (slowloris) holds a descriptor
each until ``open_timeout``: counted per address from the accept, the ones
past the cap are answered 429 with the reason once their request comes, and
past twice the cap closed at once. The process's own cap (``max_sockets``,
from its open-files limit) answers 503. Another machine is this one's network
address, as in test_per_address.py; this machine's own (loopback) sockets are
not counted per address.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from race import MakeAppT, client
from websockets.exceptions import InvalidStatus
from wsclient import WsClient

from server.addresses import Admission, Crowded, Gate
from server.app import App
from server.reach import lan_address

WAIT_S = 5


def _lan() -> str:
    address = lan_address()
    if address is None:
        pytest.skip("this machine has no network address")
    return address


async def idle_socket(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A socket that sends half a request line and nothing more."""
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"GET / HT")
    await writer.drain()
    return reader, writer


async def until(condition: Any) -> None:
    async with asyncio.timeout(WAIT_S):
        while not condition():
            await asyncio.sleep(0.01)


async def status_of(url: str, **kwargs: Any) -> tuple[int, bytes]:
    with pytest.raises(InvalidStatus) as exc:
        await WsClient.connect(url, **kwargs)
    response = exc.value.response
    return response.status_code, response.body


def refused(app: App, why: Crowded, how: str) -> float:
    value: float = app.metrics.turned_away.labels(why.value, how)._value.get()
    return value


async def test_sockets_not_open_yet_are_capped_per_address_refused_then_dropped(make_app: MakeAppT) -> None:
    lan = _lan()
    app = await make_app(host="0.0.0.0", opening_per_address=3, open_timeout_s=60)
    idle = [await idle_socket(lan, app.port) for _ in range(3)]
    await until(lambda: app.gate.opening[lan] == 3)

    status, body = await status_of(f"ws://{lan}:{app.port}/")
    assert (status, body) == (429, b"too many connections opening from your address\n")
    reader, writer = await asyncio.open_connection(lan, app.port)  # a plain HTTP request: the same
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (await asyncio.wait_for(reader.readline(), WAIT_S)).startswith(b"HTTP/1.1 429")
    writer.close()
    assert refused(app, Crowded.OPENING, "refuse") == 2

    idle += [await idle_socket(lan, app.port) for _ in range(3)]  # refused ones, held until answered
    await until(lambda: app.gate.opening[lan] == 6)
    dropped_reader, _ = await idle_socket(lan, app.port)  # past twice the cap: closed at once
    assert await asyncio.wait_for(dropped_reader.read(), WAIT_S) == b""
    assert refused(app, Crowded.OPENING, "drop") == 1

    await (await client(app)).request({"type": "hello"}, "welcome")  # this machine is not concerned
    for _, w in idle:
        w.close()
    await until(lambda: lan not in app.gate.opening)
    lan_client = await WsClient.connect(f"ws://{lan}:{app.port}/")
    await lan_client.request({"type": "hello"}, "welcome")
    assert lan not in app.gate.opening  # open now: counted by addresses.open instead
    assert app.addresses.open[lan] == 1


async def test_a_socket_that_never_finishes_its_request_is_closed_at_open_timeout(make_app: MakeAppT) -> None:
    app = await make_app(open_timeout_s=0.3)
    reader, _ = await idle_socket("127.0.0.1", app.port)
    await until(lambda: app.gate.sockets == 1)
    assert await asyncio.wait_for(reader.read(), WAIT_S) == b""
    await until(lambda: app.gate.sockets == 0)


async def test_a_process_out_of_sockets_answers_503_with_the_reason(make_app: MakeAppT) -> None:
    app = await make_app(max_sockets=2, open_timeout_s=60)
    idle = [await idle_socket("127.0.0.1", app.port) for _ in range(2)]
    await until(lambda: app.gate.sockets == 2)
    status, body = await status_of(f"ws://127.0.0.1:{app.port}/")
    assert (status, body) == (503, b"the server has no room for more connections; try again soon\n")
    assert refused(app, Crowded.SERVER, "refuse") == 1
    for _, w in idle:
        w.close()
    await until(lambda: app.gate.sockets == 0)
    await (await client(app)).request({"type": "hello"}, "welcome")


def test_the_gate_refuses_past_its_caps_and_drops_past_twice() -> None:
    gate = Gate(max_opening=2, max_sockets=4, reserve=4)
    assert [gate.accepted("a")[0] for _ in range(5)] == [
        Admission.GO_ON,
        Admission.GO_ON,
        Admission.REFUSE,
        Admission.REFUSE,
        Admission.DROP,
    ]
    for _ in range(2):  # the fifth and sixth sockets of four: half the reserve more
        assert gate.accepted(None) == (Admission.REFUSE, Crowded.SERVER)
    assert gate.accepted(None) == (Admission.DROP, Crowded.SERVER)
    gate.opened("a")
    assert gate.opening["a"] == 3
    for _ in range(6):
        gate.closed()
    assert gate.sockets == 0
