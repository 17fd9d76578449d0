"""The edges of the HTTP side: odd paths, the headers every answer carries, Host and Origin."""

from __future__ import annotations

import asyncio
import logging

import pytest
from race import MakeAppT

from server.app import App


async def raw_get(app: App, path: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    """``GET path`` written byte for byte (no client library cleaning it): the status and headers."""
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    head = {"Host": f"127.0.0.1:{app.port}", **(headers or {})}
    lines = b"".join(f"{k}: {v}\r\n".encode() for k, v in head.items())
    writer.write(b"GET " + path + b" HTTP/1.1\r\n" + lines + b"\r\n")
    status = int((await asyncio.wait_for(reader.readline(), 5)).split()[1])
    got: dict[str, str] = {}
    while (line := await asyncio.wait_for(reader.readline(), 5)) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        got[name.strip().lower()] = value.strip()
    writer.close()
    return status, got


@pytest.mark.parametrize("path", [b"/a\x00b", b"/" + b"x" * 300, b"/js/" + b"x" * 300 + b".js"])
async def test_an_impossible_path_is_not_found_without_a_traceback(
    make_app: MakeAppT, path: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    app = await make_app()
    with caplog.at_level(logging.ERROR):
        status, _ = await raw_get(app, path)
    assert status == 404
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
