"""Every client message has exactly one handler, and the server will not start otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest

from server import handlers
from server import protocol as p
from server.app import App, Settings
from server.bus import open_bus
from server.dispatch import Client, Context, Routes, Unhandled
from server.store import open_store


def test_every_client_message_has_a_handler() -> None:
    handlers.HANDLERS.check()
    assert {m.model_fields["type"].default for m in p.CLIENT_MESSAGES} == p.CLIENT_TYPES
    assert len(p.CLIENT_TYPES) == len(p.CLIENT_MESSAGES) == 25


def test_a_message_class_without_a_handler_fails_the_check() -> None:
    class Ping(p.Message):
        type: Literal["ping"] = "ping"

    with pytest.raises(Unhandled, match="no handler for Ping"):
        handlers.HANDLERS.check([*p.CLIENT_MESSAGES, Ping])


async def test_the_app_does_not_start_with_a_message_unhandled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_records = Routes(handlers.seat.routes, handlers.daily.routes)  # hello, stats, ... unhandled
    monkeypatch.setattr(handlers, "HANDLERS", without_records)
    store = await open_store(f"sqlite:///{tmp_path / 'grip.db'}")
    try:
        with pytest.raises(Unhandled, match="Hello"):
            App(Settings(port=0), store, await open_bus("memory://"))
    finally:
        await store.close()


def test_one_message_cannot_have_two_handlers() -> None:
    routes = Routes()

    @routes.handles(p.Ready)
    async def first(ctx: Context, client: Client, msg: p.Ready) -> None: ...

    with pytest.raises(ValueError, match="two handlers for Ready"):

        @routes.handles(p.Ready)
        async def second(ctx: Context, client: Client, msg: p.Ready) -> None: ...

    with pytest.raises(ValueError, match="two handlers for Ready"):
        Routes(routes, routes)
