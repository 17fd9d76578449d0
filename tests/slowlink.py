"""A store that is slow to answer: a TCP proxy that holds back what the server sends for a while."""

from __future__ import annotations

import asyncio


class SlowLink:
    """Forwards 127.0.0.1:``port`` to ``target_port``; each chunk coming back waits ``delay_s`` first.

    Requests go through at once, answers come late: a Redis behind it
    answers every command ``delay_s`` later than it would (pipelined
    commands share the wait, as on a slow network).
    """

    def __init__(self, target_port: int, delay_s: float) -> None:
        self.target_port = target_port
        self.delay_s = delay_s
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> SlowLink:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        for task in (self._pipe(reader, up_writer, 0.0), self._pipe(up_reader, writer, self.delay_s)):
            t = asyncio.create_task(task)
            self._tasks.add(t)
            t.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay_s: float) -> None:
        try:
            while data := await reader.read(65536):
                if delay_s:
                    await asyncio.sleep(delay_s)  # the link's latency, not a test waiting for something
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
