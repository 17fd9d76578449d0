"""The embedded bus: one process, so publishing is a call on the next loop turn."""

from __future__ import annotations

import asyncio

from . import Handler


class MemoryBus:
    healthy = True

    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = {}

    async def publish(self, channel: str, data: str) -> None:
        loop = asyncio.get_running_loop()
        for handler in self._handlers.get(channel, ()):
            loop.call_soon(handler, data)

    async def subscribe(self, channel: str, handler: Handler) -> None:
        self._handlers.setdefault(channel, []).append(handler)

    async def unsubscribe(self, channel: str) -> None:
        self._handlers.pop(channel, None)

    async def close(self) -> None:
        self._handlers.clear()
