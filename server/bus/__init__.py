"""Pub/sub between server processes, behind one small interface.

Like encode/broadcaster, the backend is picked by URL scheme: ``memory://``
(one process, the embedded default) or ``redis://``: plain pub/sub on a
single Redis, sharded pub/sub on a Redis Cluster. A bus only moves text;
what the text means (a batch of match events) is the hub's business.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from ..settings import REDIS_SCHEMES

Handler = Callable[[str | None], None]  # None: messages may have been lost; catch up

log = logging.getLogger(__name__)


def deliver(handler: Handler, channel: str, data: bytes | None) -> bool:
    """Hand one message (None: "catch up") to its handler; False if that raised (logged, and told to catch up).

    A bus has one reading task per connection: an exception let out of it
    (a batch with an event kind this version does not know, during a rolling
    deploy) would end it, and with it every match's messages, silently. The
    message is skipped; the handler then reads what it missed from the store.
    """
    try:
        handler(None if data is None else data.decode())
    except Exception:
        log.exception("a message on %s could not be handled; catching up from the store", channel)
        if data is not None:
            deliver(handler, channel, None)
        return False
    return True


def reading(task: asyncio.Task[None]) -> asyncio.Task[None]:
    """``task``, a bus's reading task, logged should it ever end by an exception (``healthy`` then says false)."""

    def ended(done: asyncio.Task[None]) -> None:
        if not done.cancelled() and done.exception() is not None:
            log.error("a redis pub/sub reading task ended", exc_info=done.exception())

    task.add_done_callback(ended)
    return task


class Bus(Protocol):
    @property
    def healthy(self) -> bool:
        """Connected, and reading: false too when a reading task has ended."""

    @property
    def failures(self) -> int:
        """Messages whose handler raised (``deliver``), since the process started."""

    @property
    def shared(self) -> bool:
        """Whether other processes hear what this one publishes (if not, the hub publishes nothing)."""

    async def publish(self, channel: str, data: str) -> None:
        """Deliver ``data`` to every process subscribed to ``channel`` (at most once)."""

    async def subscribe(self, channel: str, handler: Handler) -> None: ...

    async def unsubscribe(self, channel: str) -> None: ...

    async def close(self) -> None: ...


async def open_bus(url: str) -> Bus:
    scheme = url.split("://", 1)[0]
    if scheme == "memory":
        from .memory import MemoryBus

        return MemoryBus()
    if scheme in REDIS_SCHEMES:
        from redis.asyncio import RedisCluster

        from ..redis_link import connect
        from .redis import RedisBus
        from .sharded import ShardedBus

        # health checks make an idle subscription notice a dead socket within a second
        client = await connect(url, health_check_interval=1)
        return ShardedBus(client) if isinstance(client, RedisCluster) else RedisBus(client)
    raise ValueError(f"no bus for {url!r}: use memory:// or redis://")
