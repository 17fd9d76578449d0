"""Fixtures for the server tests: in-process apps with a clock the test drives."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from fakeclock import FakeClock

from server.app import App

MakeApp = Callable[..., Awaitable[App]]


@pytest.fixture
def make_app(start_app: Callable[..., Awaitable[App]]) -> MakeApp:
    """``app = await make_app(store_url=..., clock=..., **settings)``: a server on port 0.

    The clock defaults to a FakeClock (``app.clock.advance(ms)``); timers still
    run on real time, so tests move the match on with ``app.hub.tick_soon``.
    """

    async def make(clock: Callable[[], int] | None = None, **overrides: object) -> App:
        return await start_app(clock=clock if clock is not None else FakeClock(), **overrides)

    return make
