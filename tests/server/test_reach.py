"""Share links a friend can open: the address the server prints, opens and hands the page."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from wsclient import WsClient

from server import reach
from server.app import App
from tests.processes import ServerProcess

NETWORK = "192.168.1.20"


def test_a_loopback_host_becomes_the_network_address_on_every_interface(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(reach, "lan_address", lambda: NETWORK)
    for host in ("127.0.0.1:8765", "localhost:8765", "0.0.0.0:8765", "[::1]:8765", "127.0.1.1:8765"):
        assert reach.share_host("0.0.0.0", 8765, host) == f"{NETWORK}:8765", host
        assert reach.share_host("::", 8765, host) == f"{NETWORK}:8765", host
    assert reach.page_host("0.0.0.0", 8765) == f"{NETWORK}:8765"


def test_a_host_others_can_reach_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reach, "lan_address", lambda: NETWORK)
    for host in (f"{NETWORK}:8765", "grip.example:8765", "grip.example", "10.0.0.7:8765"):
        assert reach.share_host("0.0.0.0", 8765, host) == host
    # a proxy in front (docker compose's nginx on :8080): the address the page used is the proxy's
    assert reach.share_host("0.0.0.0", 8765, "localhost:8080") == "localhost:8080"
    # listening on loopback only, no link could reach it from elsewhere: the page's own address
    assert reach.share_host("127.0.0.1", 8765, "127.0.0.1:8765") == "127.0.0.1:8765"
    assert reach.page_host("127.0.0.1", 8765) == "127.0.0.1:8765"
    assert reach.share_host("0.0.0.0", 8765, "127.0.0.1:notaport") == "127.0.0.1:notaport"
    assert reach.share_host("0.0.0.0", 8765, None) is None


def test_without_a_network_the_loopback_address_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reach, "lan_address", lambda: None)
    assert reach.share_host("0.0.0.0", 8765, "127.0.0.1:8765") == "127.0.0.1:8765"
    assert reach.page_host("0.0.0.0", 8765) == "127.0.0.1:8765"
    monkeypatch.setattr(reach, "lan_address", lambda: "fd00::2")
    assert reach.page_host("::", 8765) == "[fd00::2]:8765"


def network_address() -> str:
    address = reach.lan_address()
    if address is None:
        pytest.skip("this machine has no network address to hand out")
    assert not reach.this_machine_only(address)
    return address


async def share_host_seen_at(url: str) -> str | None:
    client = await WsClient.connect(url)
    try:
        await client.send({"type": "hello", "v": 1})
        welcome = await client.expect("welcome")
    finally:
        await client.close()
    share: str | None = welcome["share_host"]
    return share


async def test_welcome_names_the_network_address_to_a_page_opened_on_loopback(
    start_app: Callable[..., Awaitable[App]], tmp_path: Path
) -> None:
    lan = network_address()
    everywhere = await start_app(host="0.0.0.0")
    port = everywhere.port
    for url in (f"ws://127.0.0.1:{port}", f"ws://localhost:{port}", f"ws://{lan}:{port}"):
        assert await share_host_seen_at(url) == f"{lan}:{port}", url
    loopback = await start_app(store_url=f"sqlite:///{tmp_path / 'loopback.db'}")
    assert await share_host_seen_at(f"ws://127.0.0.1:{loopback.port}") == f"127.0.0.1:{loopback.port}"


def test_the_printout_shows_an_address_a_friend_can_open() -> None:
    lan = network_address()
    server = ServerProcess("--host", "0.0.0.0").start()
    try:
        first, second = server.log.read_text().splitlines()[:2]
    finally:
        server.terminate()
    assert f"listening on http://{lan}:{server.port}/" in first
    assert f"http://127.0.0.1:{server.port}/" in second  # and how to open it on this machine
    local = ServerProcess().start()
    try:
        first, second = local.log.read_text().splitlines()[:2]
    finally:
        local.terminate()
    assert f"listening on http://127.0.0.1:{local.port}/" in first
    assert "--host 0.0.0.0" in second  # how to let others in
