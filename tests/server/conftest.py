"""Fixtures for the server tests: in-process apps with a clock the test drives."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path

import pytest

from server.app import App, Settings
from server.bus import open_bus
from server.store import open_store

T0 = 1_700_000_000_000


class FakeClock:
    """Server time in ms that moves only when the test says so."""

    def __init__(self, start: int = T0) -> None:
        self.t = start

    def __call__(self) -> int:
        return self.t

    def advance(self, ms: int) -> None:
        self.t += ms


MakeApp = Callable[..., Awaitable[App]]


@pytest.fixture
async def make_app(tmp_path: Path) -> AsyncIterator[MakeApp]:
    """``app = await make_app(store_url=..., clock=..., **settings)``: a server on port 0.

    The clock defaults to a FakeClock (``app.clock.advance(ms)``); timers still
    run on real time, so tests move the match on with ``app.hub.tick_soon``.
    """
    apps: list[App] = []

    async def make(clock: Callable[[], int] | None = None, **overrides: object) -> App:
        settings = Settings(port=0, store_url=f"sqlite:///{tmp_path / 'grip.db'}", sweep_s=3600)
        settings = replace(settings, **overrides)  # type: ignore[arg-type]
        app = App(
            settings,
            open_store(settings.store_url),
            open_bus(settings.bus_url),
            clock=clock if clock is not None else FakeClock(),
        )
        await app.start()
        apps.append(app)
        return app

    yield make
    for app in apps:
        await app.shutdown()
