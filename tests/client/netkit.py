"""Network tools for the client tests: a TCP proxy to cut, stall or take away the server, and waits.

The proxy sits between a client and the real server on 127.0.0.1, so a drop
is a real socket failure the client has to notice, not a flag in the client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

StreamPair = tuple[asyncio.StreamWriter, asyncio.StreamWriter]


async def wait_until(condition: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    """Poll ``condition`` until it holds; fail the test if it does not within ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what or condition}")
        await asyncio.sleep(0.01)


class Proxy:
    """Forwards 127.0.0.1:``port`` (port 0: a free one) to the server's port.

    ``cut()`` aborts every connection (the client sees a network failure and
    may reconnect through the proxy); ``stall()`` holds back what the server
    sends until ``flow()``; ``stop()`` also refuses new connections: the
    server is gone for good.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.pairs: set[StreamPair] = set()
        self.flowing = asyncio.Event()
        self.flowing.set()
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def start(self) -> Proxy:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def cut(self) -> None:
        for client_w, server_w in list(self.pairs):
            client_w.transport.abort()
            server_w.transport.abort()
        self.pairs.clear()

    def stall(self) -> None:
        self.flowing.clear()

    def flow(self) -> None:
        self.flowing.set()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self.cut()

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        pair = (client_w, server_w)
        self.pairs.add(pair)
        try:
            await asyncio.gather(self._pipe(client_r, server_w), self._pipe(server_r, client_w, self.flowing))
        finally:
            self.pairs.discard(pair)

    @staticmethod
    async def _pipe(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, gate: asyncio.Event | None = None
    ) -> None:
        try:
            while data := await reader.read(65536):
                if gate is not None:
                    await gate.wait()
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()


async def lines_from(queue: asyncio.Queue[str]) -> AsyncIterator[str]:
    """Typed lines for ``run_terminal``, given by the test one at a time."""
    while True:
        yield await queue.get()
