"""A server started under a low open-files limit still takes more players than that limit."""

from __future__ import annotations

import asyncio
import json
import resource
import sys
from pathlib import Path

import pytest
from processes import ServerProcess
from websockets.asyncio.client import ClientConnection, connect

LOW_LIMIT = 128
PLAYERS = 200  # each one a file descriptor in the server: more than LOW_LIMIT

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 4 * PLAYERS,
    reason="needs Linux and a hard open-files limit above the players",
)


async def greeted(url: str) -> ClientConnection:
    ws = await connect(url, open_timeout=10)
    await ws.send(json.dumps({"type": "hello", "name": "many"}))
    reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert reply["type"] == "welcome", reply
    return ws


async def test_more_players_than_the_soft_limit_all_connect(tmp_path: Path) -> None:
    server = ServerProcess("--data", str(tmp_path), open_files=LOW_LIMIT).start()
    try:
        outcomes = await asyncio.gather(
            *(greeted(server.url) for _ in range(PLAYERS)), return_exceptions=True
        )
        players = [o for o in outcomes if isinstance(o, ClientConnection)]
        await asyncio.gather(*(ws.close() for ws in players))
        failures = [o for o in outcomes if not isinstance(o, ClientConnection)]
        assert not failures, f"{len(failures)} of {PLAYERS} players failed, e.g. {failures[0]!r}"
    finally:
        server.kill()
