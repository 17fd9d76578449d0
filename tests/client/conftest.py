"""Client tests run against a real in-process server on port 0, with a short countdown."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

import server.bots
import server.match.state
from tests.client.netkit import Proxy


@pytest.fixture(autouse=True)
def fast_races(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server.match.state, "COUNTDOWN_MS", 50)
    monkeypatch.setattr(server.bots, "PACE_S", (0.0, 0.002))


@pytest.fixture
async def url(start_app: Callable[..., Any]) -> str:
    app = await start_app(rate_per_s=1000.0, burst=2000)
    return f"ws://127.0.0.1:{app.port}"


@pytest.fixture
async def proxy(url: str) -> AsyncIterator[Proxy]:
    """A proxy in front of the server, to cut or take away the line under a client."""
    px = await Proxy(int(url.rsplit(":", 1)[1])).start()
    yield px
    await px.stop()
