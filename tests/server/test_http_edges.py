"""The edges of the HTTP side: odd paths, the headers every answer carries, Host and Origin."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest
from counting import count_calls
from race import MakeAppT

from server.http import CSP, MAX_FILE_NAMES, MAX_PAGE_PATH
from server.reach import lan_address


async def raw_get(
    port: int, path: bytes, headers: dict[str, str] | None = None, address: str = "127.0.0.1"
) -> tuple[int, dict[str, str]]:
    """``GET path`` written byte for byte (no client library cleaning it): the status and headers."""
    reader, writer = await asyncio.open_connection(address, port)
    head = {"Host": f"{address}:{port}", **(headers or {})}
    lines = b"".join(f"{k}: {v}\r\n".encode() for k, v in head.items())
    writer.write(b"GET " + path + b" HTTP/1.1\r\n" + lines + b"\r\n")
    status = int((await asyncio.wait_for(reader.readline(), 5)).split()[1])
    got: dict[str, str] = {}
    while (line := await asyncio.wait_for(reader.readline(), 5)) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        got[name.strip().lower()] = value.strip()
    writer.close()
    return status, got


async def handshake(port: int, origin: str, host: str, address: str = "127.0.0.1") -> int:
    """A browser's WebSocket handshake with these Origin and Host headers: the answer's status."""
    upgrade = {
        "Host": host,
        "Origin": origin,
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version": "13",
    }
    return (await raw_get(port, b"/", upgrade, address))[0]


#: The rest of a WebSocket handshake's headers, to follow a Host (and whatever else a test sends).
UPGRADE = (
    b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)


def lan() -> str:
    address = lan_address()
    if address is None:
        pytest.skip("this machine has no network address")
    return address


@pytest.mark.parametrize("path", [b"/a\x00b", b"/" + b"x" * 300, b"/js/" + b"x" * 300 + b".js"])
async def test_an_impossible_path_is_not_found_without_a_traceback(
    make_app: MakeAppT, path: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    app = await make_app()
    with caplog.at_level(logging.ERROR):
        status, _ = await raw_get(app.port, path)
    assert status == 404
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    "path", [b"/a" * 120, b"/js/.." * 40 + b"/index.html", b"/a" * 3900, b"/js/.." * 1300 + b"/index.html"]
)
async def test_a_path_of_thousands_of_names_is_not_looked_up_name_by_name(
    make_app: MakeAppT, path: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each name of a path cost a system call (7.8 ms a request at 3,900 names): now a few at most."""
    app = await make_app()
    lstats, stats = count_calls(monkeypatch, os, "lstat"), count_calls(monkeypatch, os, "stat")
    status, _ = await raw_get(app.port, path)
    assert status == 404
    assert lstats[0] + stats[0] <= 2 * MAX_FILE_NAMES
    assert (await raw_get(app.port, b"/js/engine/game.js"))[0] == 200  # the deepest of the page's files


async def test_a_path_longer_than_any_of_the_pages_is_not_matched_against_its_routes(
    make_app: MakeAppT,
) -> None:
    """Matching an 8 KiB path against the page's routes cost 0.4 ms: past MAX_PAGE_PATH it is a plain 404."""
    app = await make_app()
    status, headers = await raw_get(app.port, b"/" + b"x" * 7900)
    assert (status, headers["content-type"]) == (404, "text/plain")
    status, headers = await raw_get(app.port, b"/stats/" + b"x" * (MAX_PAGE_PATH - 7))
    assert (status, headers["content-type"]) == (404, "text/html; charset=utf-8")  # the page says so


async def test_every_answer_says_what_the_page_may_do(make_app: MakeAppT) -> None:
    app = await make_app()
    for path in (b"/", b"/js/app.js", b"/style.css", b"/healthz", b"/api/variants", b"/nothing.txt"):
        _, headers = await raw_get(app.port, path)
        assert headers["content-security-policy"] == CSP, path
        assert headers["x-content-type-options"] == "nosniff", path
    assert "frame-ancestors 'none'" in CSP and "script-src 'self'" in CSP


async def test_metrics_answer_this_machine_only_by_default(make_app: MakeAppT) -> None:
    app = await make_app(host="0.0.0.0")
    status, _ = await raw_get(app.port, b"/metrics")
    assert status == 200
    status, headers = await raw_get(app.port, b"/metrics", address=lan())
    assert status == 404 and headers["content-type"].startswith("text/html")  # the page's "not found"


async def test_metrics_on_the_operator_address_only(make_app: MakeAppT) -> None:
    app = await make_app(metrics=("127.0.0.1", 0))
    assert app.operator is not None
    operator = app.operator.sockets[0].getsockname()[1]
    assert (await raw_get(app.port, b"/metrics"))[0] == 404
    status, headers = await raw_get(operator, b"/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    assert (await raw_get(operator, b"/healthz"))[0] == 200
    assert (await raw_get(operator, b"/"))[0] == 404
    assert await handshake(operator, f"http://127.0.0.1:{operator}", f"127.0.0.1:{operator}") == 404


async def test_a_foreign_host_name_is_refused_even_with_a_matching_origin(make_app: MakeAppT) -> None:
    """DNS rebinding: evil.example resolved to this server sends Origin and Host both as evil.example."""
    app = await make_app(host_names=("grip.test",))
    port = app.port
    assert await handshake(port, f"http://evil.example:{port}", f"evil.example:{port}") == 403
    assert await handshake(port, f"http://grip.test:{port}", f"grip.test:{port}") == 101
    assert await handshake(port, f"http://localhost:{port}", f"localhost:{port}") == 101
    assert await handshake(port, f"http://127.0.0.1:{port}", f"127.0.0.1:{port}") == 101


async def test_an_https_page_is_refused_on_plain_http_unless_configured(
    make_app: MakeAppT, tmp_path: Path
) -> None:
    app = await make_app()
    port = app.port
    assert await handshake(port, f"https://127.0.0.1:{port}", f"127.0.0.1:{port}") == 403
    configured = await make_app(origins=("https://grip.test",), store_url=f"sqlite:///{tmp_path}/other.db")
    assert await handshake(configured.port, "https://grip.test", "grip.test") == 101
    assert await handshake(configured.port, "https://grip.test", "evil.example") == 403


async def test_a_page_opened_at_the_lan_address_still_plays(make_app: MakeAppT) -> None:
    """``serve --host 0.0.0.0``: a friend opens the shared link, at this machine's network address."""
    app = await make_app(host="0.0.0.0")
    address = lan()
    host = f"{address}:{app.port}"
    assert await handshake(app.port, f"http://{host}", host, address=address) == 101


@pytest.mark.parametrize(
    "twice",
    [
        b"Host: 127.0.0.1\r\nHost: evil.example\r\n" + UPGRADE,
        b"Host: 127.0.0.1\r\nOrigin: http://a\r\nOrigin: http://b\r\n" + UPGRADE,
        b"Host: 127.0.0.1\r\nUpgrade: websocket\r\n" + UPGRADE,
        b"Host: 127.0.0.1\r\nAccept-Encoding: gzip\r\nAccept-Encoding: br\r\n",
    ],
    ids=["Host", "Origin", "Upgrade", "Accept-Encoding"],
)
async def test_a_header_given_twice_is_a_bad_request_without_a_traceback(
    make_app: MakeAppT, twice: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """websockets' ``headers.get`` raises on a header given twice: that was a 500 and a traceback a request."""
    app = await make_app()
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    with caplog.at_level(logging.ERROR):
        writer.write(b"GET /api/replay/ACDEFGHJ HTTP/1.1\r\n" + twice + b"\r\n")
        status = int((await asyncio.wait_for(reader.readline(), 5)).split()[1])
        writer.close()
    assert status == 400
    assert not caplog.records
