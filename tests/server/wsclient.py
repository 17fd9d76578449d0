"""A thin test client: send dicts, receive parsed dicts, wait for a type.

Every frame received is recorded in ``received`` (in order), so a test can
assert exact sequences after waiting for the message it cares about.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

Msg = dict[str, Any]
#: How long a wait for a message may take before the test fails. Generous: nothing waits it out when
#: things work, and on a busy 2-core machine running the whole suite a round trip through a few
#: processes and Redis has taken seconds.
TIMEOUT = 15.0


class Closed(Exception):
    """The connection closed while a message was awaited."""

    def __init__(self, code: int | None, reason: str, seen: list[Msg]) -> None:
        super().__init__(f"closed with {code} {reason!r}; last received: {seen[-5:]}")
        self.code = code
        self.reason = reason


class WsClient:
    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.received: list[Msg] = []  # everything, in order
        self.cursor = 0  # received[:cursor] has been consumed by recv/expect

    @classmethod
    async def connect(cls, url: str, **kwargs: Any) -> WsClient:
        kwargs.setdefault("proxy", None)
        kwargs.setdefault("open_timeout", TIMEOUT)
        return cls(await connect(url, **kwargs))

    async def send(self, message: Msg | str | bytes) -> None:
        await self.ws.send(message if isinstance(message, str | bytes) else json.dumps(message))

    async def _pull(self, timeout: float) -> Msg:
        try:
            frame = await asyncio.wait_for(self.ws.recv(), timeout)
        except ConnectionClosed:
            raise Closed(self.ws.close_code, self.ws.close_reason or "", self.received) from None
        msg: Msg = json.loads(frame)
        self.received.append(msg)
        return msg

    async def recv(self, timeout: float = TIMEOUT) -> Msg:
        """The next message not yet consumed."""
        if self.cursor < len(self.received):
            msg = self.received[self.cursor]
        else:
            msg = await self._pull(timeout)
        self.cursor += 1
        return msg

    async def expect(self, kind: str, timeout: float = TIMEOUT, **fields: Any) -> Msg:
        """The next message of type ``kind`` (with ``fields`` equal), skipping others."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0 and self.cursor >= len(self.received):
                raise TimeoutError(f"no {kind} {fields} within {timeout}s; got {self.received[-8:]}")
            try:
                msg = await self.recv(max(remaining, 0.001))
            except TimeoutError:
                raise TimeoutError(
                    f"no {kind} {fields} within {timeout}s; got {self.received[-8:]}"
                ) from None
            if msg.get("type") == kind and all(msg.get(k) == v for k, v in fields.items()):
                return msg

    async def seen(self, kind: str, timeout: float = TIMEOUT, **fields: Any) -> Msg:
        """A message of ``kind`` received at any time, consumed or not; waits for one if none yet."""

        def match(m: Msg) -> bool:
            return m.get("type") == kind and all(m.get(k) == v for k, v in fields.items())

        for m in self.received:
            if match(m):
                return m
        async with asyncio.timeout(timeout):
            while True:
                m = await self._pull(timeout)
                if match(m):
                    return m

    async def request(self, message: Msg, kind: str, timeout: float = TIMEOUT, **fields: Any) -> Msg:
        await self.send(message)
        return await self.expect(kind, timeout, **fields)

    async def closed(self, timeout: float = TIMEOUT) -> int | None:
        """Read until the server closes; return the close code."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    await self._pull(timeout)
        except Closed as exc:
            return exc.code

    def since(self, start: int) -> list[Msg]:
        return self.received[start:]

    async def close(self) -> None:
        await self.ws.close()

    async def __aenter__(self) -> WsClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
