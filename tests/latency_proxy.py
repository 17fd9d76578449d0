"""A TCP proxy that puts a network between a browser and the server: a fixed delay each way, and a hold.

The page's instant moves are about what a player sees while the server's
answer is on its way, which on the loopback is too short to see. Between the
page and the server this proxy delays every chunk by ``one_way_s`` in each
direction (order kept, no throttling: it adds latency, not a slower link), and
``hold()`` keeps what the server says from the browser until ``release()``, so
a test can look at the page while an answer is certainly still to come. It
works below HTTP and WebSocket alike (the page, its scripts and its socket all
go through it). The asyncio loop runs in a thread of its own, as Playwright's
sync API wants the test's thread.

    with LatencyProxy("127.0.0.1", 8000, one_way_s=0.075) as proxy:
        page.goto(f"http://127.0.0.1:{proxy.port}/")
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from types import TracebackType

CHUNK = 65536


class LatencyProxy:
    def __init__(self, host: str, port: int, *, one_way_s: float = 0.075) -> None:
        self.target = (host, port)
        self.one_way_s = one_way_s
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._released: asyncio.Event | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    def __enter__(self) -> LatencyProxy:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def hold(self) -> None:
        """From now on, what the server sends waits here (in order) until ``release``."""
        asyncio.run_coroutine_threadsafe(self._let_through(False), self._loop).result(10)

    def release(self) -> None:
        asyncio.run_coroutine_threadsafe(self._let_through(True), self._loop).result(10)

    async def _let_through(self, on: bool) -> None:
        assert self._released is not None
        if on:
            self._released.set()
        else:
            self._released.clear()

    async def _start(self) -> None:
        self._released = asyncio.Event()
        self._released.set()
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        assert self._released is not None
        self._released.set()
        for writer in self._writers:
            writer.transport.abort()  # each pipe then ends as for a closed connection
        if self._connections:
            await asyncio.wait(self._connections, timeout=5)

    async def _connection(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            server_r, server_w = await asyncio.open_connection(*self.target)
        except OSError:
            client_w.close()
            self._connections.discard(task)
            return
        self._writers.update((client_w, server_w))
        await asyncio.gather(
            self._pipe(client_r, server_w, held=False),
            self._pipe(server_r, client_w, held=True),
            return_exceptions=True,
        )
        self._writers.difference_update((client_w, server_w))
        self._connections.discard(task)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, held: bool) -> None:
        """Copy one direction, each chunk ``one_way_s`` after it came (and, from the server, not while held)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            assert self._released is not None
            while True:
                due, data = await queue.get()
                if delay := due - loop.time():
                    await asyncio.sleep(max(0.0, delay))
                if held:
                    await self._released.wait()
                if not data:
                    break
                writer.write(data)
                await writer.drain()
            writer.close()

        sender = asyncio.create_task(deliver())
        try:
            while data := await reader.read(CHUNK):
                queue.put_nowait((loop.time() + self.one_way_s, data))
        except OSError:
            pass
        finally:
            queue.put_nowait((loop.time() + self.one_way_s, b""))  # the end, in its turn
            with contextlib.suppress(OSError):
                await sender
