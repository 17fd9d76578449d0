"""The bus on a single Redis: plain pub/sub, one channel per match.

One PubSub connection per process reads every subscribed channel. When the
connection drops, redis-py resubscribes on reconnect; messages published
meanwhile are lost, so every handler is then called with ``None``, meaning
"you may have missed events: catch up from the store".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from redis.asyncio import Redis
from redis.exceptions import RedisError

from . import Handler, deliver, reading

log = logging.getLogger(__name__)


class RedisBus:
    shared = True

    def __init__(self, client: Redis) -> None:
        self._redis = client
        self._pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        self._handlers: dict[str, Handler] = {}
        self._subscribed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._connected = True
        self.failures = 0

    @property
    def healthy(self) -> bool:
        return self._connected and (self._reader is None or not self._reader.done())

    async def publish(self, channel: str, data: str) -> None:
        await self._redis.publish(channel, data)

    async def subscribe(self, channel: str, handler: Handler) -> None:
        self._handlers[channel] = handler
        try:
            await self._pubsub.subscribe(channel)
        except RedisError:
            self._connected = False  # the reader resubscribes to every channel on reconnect
        self._subscribed.set()
        if self._reader is None:
            self._reader = reading(asyncio.create_task(self._read()))

    async def unsubscribe(self, channel: str) -> None:
        self._handlers.pop(channel, None)
        with contextlib.suppress(RedisError):  # gone with the connection anyway
            await self._pubsub.unsubscribe(channel)

    async def _read(self) -> None:
        delay = 0.05
        while True:
            if not self._pubsub.subscribed:
                self._subscribed.clear()
                await self._subscribed.wait()
            try:
                if not self._connected:
                    # A command on the pub/sub connection reconnects it, and redis-py
                    # resubscribes every channel on connect; it raises while Redis is down.
                    await self._pubsub.ping()
                    self._connected, delay = True, 0.05
                    log.warning("redis pub/sub reconnected; catching up")
                    for name, handler in list(self._handlers.items()):
                        if not deliver(handler, name, None):
                            self.failures += 1
                message = await self._pubsub.get_message(timeout=1.0)
            except (RedisError, OSError):
                if self._connected:
                    log.warning("redis pub/sub connection lost; reconnecting")
                self._connected = False
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                continue
            if message is not None and message["type"] == "message":
                name = message["channel"].decode()
                listener = self._handlers.get(name)
                if listener is not None and not deliver(listener, name, message["data"]):
                    self.failures += 1

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        await self._pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # typed from redis-py 8
        await self._redis.aclose()
