"""The bus on a Redis Cluster: sharded pub/sub, so a publish touches only its match's shard.

Plain ``PUBLISH`` in a cluster is copied to every node, so pub/sub work
would grow with the cluster instead of spreading over it. A match's channel
``grip:match:{ID}`` shares the match's slot; ``SPUBLISH`` goes to the master
holding that slot (redis-py's ``RedisCluster`` routes it like any keyed
command), and each process reads the channels it wants from the masters
that hold them: one connection and one reading task per master.

Why not redis-py's own ``ClusterPubSub``: it reads the masters' connections
in turns, waiting out a timeout on each, so a message on one waits behind
the others' silence; and it moves a subscription only when one of its own
commands finds the slot map changed, which a process that only listens
may never send.

When a master's connection fails (the master died, a failover) or a channel
is unsubscribed by the server (its slot moved), every subscription is placed
again from a fresh slot map, retried until the cluster answers; then every
handler is called with ``None``: "you may have missed events, catch up from
the store" (the hub reads its matches' logs), so nothing published meanwhile
is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from ..redis_link import TIMEOUTS
from . import Handler, deliver, reading

log = logging.getLogger(__name__)


class _Shard:
    """The subscriptions this process holds on one master, and the task reading them."""

    def __init__(self, host: str, port: int, bus: ShardedBus) -> None:
        # No retries of its own: a failure must reach the bus, which places every channel again.
        self.client = Redis(
            host=host, port=port, retry=Retry(NoBackoff(), 0), health_check_interval=1, **TIMEOUTS
        )
        self.pubsub = self.client.pubsub()
        self.bus = bus
        self.reader: asyncio.Task[None] | None = None

    async def add(self, channel: str) -> None:
        await self.pubsub.ssubscribe(channel)
        if self.reader is None:
            self.reader = reading(asyncio.create_task(self._read()))

    async def _read(self) -> None:
        while True:
            try:
                message = await self.pubsub.get_message(timeout=1.0)
            except (RedisError, OSError) as exc:
                self.bus.lost(f"a master's connection failed: {exc}")
                return
            kind = None if message is None else message["type"]
            if kind not in ("smessage", "sunsubscribe"):
                continue  # nothing yet, a subscription confirmed, a health check's pong
            assert message is not None
            channel = message["channel"].decode()
            if kind == "smessage":
                handler = self.bus.handlers.get(channel)
                if handler is not None and not deliver(handler, channel, message["data"]):
                    self.bus.failures += 1
            elif channel in self.bus.handlers:
                self.bus.lost(f"{channel} was unsubscribed by the server: its slot moved")

    async def close(self) -> None:
        if self.reader is not None and self.reader is not asyncio.current_task():
            self.reader.cancel()
        with contextlib.suppress(RedisError, OSError):
            await self.pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # typed from redis-py 8
        with contextlib.suppress(RedisError, OSError):
            await self.client.aclose()


class ShardedBus:
    shared = True

    def __init__(self, cluster: RedisCluster) -> None:
        self._cluster = cluster
        self.handlers: dict[str, Handler] = {}
        self._shards: dict[str, _Shard] = {}  # by master address
        self._placing = asyncio.Lock()
        self._repair: asyncio.Task[None] | None = None
        self._broken = False  # a failure the repair has not mended yet
        self._placed = True  # every channel wanted is subscribed
        self.failures = 0

    @property
    def healthy(self) -> bool:
        readers = [shard.reader for shard in self._shards.values()]
        return self._placed and not any(reader is not None and reader.done() for reader in readers)

    async def publish(self, channel: str, data: str) -> None:
        await self._cluster.spublish(channel, data)

    async def subscribe(self, channel: str, handler: Handler) -> None:
        self.handlers[channel] = handler
        if not self._placed:
            return  # the repair places every channel wanted by then
        try:
            async with self._placing:
                await self._place(channel)
        except (RedisError, OSError) as exc:
            self.lost(f"could not subscribe to {channel}: {exc}")

    async def _place(self, channel: str) -> None:
        node: Any = self._cluster.get_node_from_key(channel)
        shard = self._shards.get(node.name)
        if shard is None:
            shard = self._shards[node.name] = _Shard(node.host, node.port, self)
        await shard.add(channel)

    async def unsubscribe(self, channel: str) -> None:
        self.handlers.pop(channel, None)
        if not self._placed:
            return
        with contextlib.suppress(RedisError, OSError):  # gone with the connection anyway
            node: Any = self._cluster.get_node_from_key(channel)
            shard = self._shards.get(node.name)
            if shard is not None:
                await shard.pubsub.sunsubscribe(channel)

    def lost(self, why: str) -> None:
        """Some subscriptions may be gone: place them all again (once a repair is under way, again after it)."""
        if self._placed:
            log.warning("redis sharded pub/sub: %s; subscribing again", why)
        self._placed = False
        self._broken = True
        if self._repair is None or self._repair.done():
            self._repair = asyncio.create_task(self._mend())

    async def _mend(self) -> None:
        delay = 0.05
        while self._broken:
            self._broken = False
            try:
                async with self._placing:
                    for shard in list(self._shards.values()):
                        await shard.close()
                    self._shards.clear()
                    await self._cluster.nodes_manager.initialize()
                    for channel in list(self.handlers):
                        await self._place(channel)
            except (RedisError, OSError) as exc:
                log.debug("redis sharded pub/sub not back yet: %s", exc)
                self._broken = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
        self._placed = True
        log.warning("redis sharded pub/sub subscribed again; catching up")
        for channel, handler in list(self.handlers.items()):
            if not deliver(handler, channel, None):
                self.failures += 1

    async def close(self) -> None:
        if self._repair is not None:
            self._repair.cancel()
        for shard in list(self._shards.values()):
            await shard.close()
        await self._cluster.aclose()
