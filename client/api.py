"""An async client for the race server, over the server's own pydantic models.

    async with await connect("ws://127.0.0.1:8765", name="Ann") as c:
        seated = await c.create()            # or: await c.join(code)
        await c.ready()
        async for event in c.events():       # typed server messages
            if isinstance(event, p.Start):
                await c.move("T")            # seq numbered for you

One reader task parses every frame into a ``protocol`` model, keeps the
bookkeeping (the seat token, the last ``ev`` seen, moves sent but not yet
acknowledged) and queues it for ``events()``. Requests that have an answer
(``hello``, ``create``, ``join``, ``watch``, ``resume``) wait for it and
raise ``ServerError`` when the server answers with ``error`` instead.

When the connection drops while seated, the reader reconnects (if
``auto_reconnect``), says ``hello`` with the same identity, ``resume``s with
the seat token and the last ``ev``, and resends every unacknowledged move
with its original ``seq``: the server acknowledges a repeated ``seq`` again
and applies it only once, so no move is lost or doubled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from server import protocol as p

from . import identity

log = logging.getLogger(__name__)

DEFAULT_URL = "ws://127.0.0.1:8765"
REPLY_TIMEOUT_S = 10.0
RECONNECT_DELAYS_S = (0.05, 0.2, 0.5, 1.0, 2.0, 4.0)

M = TypeVar("M", bound=p.Message)


class ClientError(Exception):
    """Base of every error this library raises."""


class ServerError(ClientError):
    """The server answered a request with ``error``; ``code`` is its ErrorCode."""

    def __init__(self, code: p.ErrorCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message


class MoveRejected(ServerError):
    """A move was refused (``rejected``); ``view`` is the board as the server has it."""

    def __init__(self, rejected: p.Rejected) -> None:
        super().__init__(rejected.code, rejected.message)
        self.seq = rejected.seq
        self.view = rejected.view


class ConnectionLost(ClientError):
    """The connection is gone and could not be (or was not to be) resumed."""


class Closed:
    """The last item of ``events()`` before it stops: the connection ended."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


Event = p.ServerMessage


class Client:
    """One connection to the server; make it with ``await connect(url)``."""

    def __init__(self, url: str, *, name: str | None = None, auto_reconnect: bool = True) -> None:
        self.url = url
        self.name = name
        self.auto_reconnect = auto_reconnect
        self.player: str | None = None
        self.key: str | None = None
        # where we sit (or watch)
        self.match: str | None = None
        self.seat: int | None = None
        self.token: str | None = None
        self.watching = False
        self.last_ev = 0
        self.view: p.View | None = None
        # moves: seq -> text, in seq order, until acknowledged
        self.next_seq = 1
        self.unacked: dict[int, str] = {}
        self._ws: ClientConnection | None = None
        self._events: asyncio.Queue[Event | Closed] = asyncio.Queue()
        self._waiters: list[tuple[tuple[str, ...], asyncio.Future[p.Message]]] = []
        self._ack_waiters: dict[int, asyncio.Future[p.Ack]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._closing = False
        self.reconnects = 0

    # ------------------------------------------------------------ connection

    async def open(self) -> Client:
        self._ws = await self._dial()
        self._reader = asyncio.create_task(self._read_forever())
        return self

    async def _dial(self) -> ClientConnection:
        try:
            return await ws_connect(self.url, max_size=2**20, compression=None, open_timeout=REPLY_TIMEOUT_S)
        except (OSError, InvalidHandshake, InvalidURI, TimeoutError) as exc:
            raise ConnectionLost(f"cannot connect to {self.url}: {exc}") from exc

    async def close(self) -> None:
        self._closing = True
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(
        self, et: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def drop(self) -> None:
        """Cut the connection abruptly, as a network failure would (for tests and demos)."""
        if self._ws is not None:
            self._ws.transport.abort()

    async def send(self, message: p.Message) -> None:
        if self._ws is None:
            raise ConnectionLost("not connected")
        try:
            await self._ws.send(p.encode(message), text=True)
        except ConnectionClosed:
            if not self.auto_reconnect:
                raise ConnectionLost("the connection is closed") from None
            # the reader reconnects; resume then resends what needs it

    # -------------------------------------------------------------- requests

    async def _request(self, message: p.Message, *answers: str) -> p.Message:
        future: asyncio.Future[p.Message] = asyncio.get_running_loop().create_future()
        self._waiters.append((answers, future))
        try:
            await self.send(message)
            return await asyncio.wait_for(future, REPLY_TIMEOUT_S)
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove((answers, future))

    async def hello(self) -> p.Welcome:
        reply = await self._request(p.Hello(name=self.name, player=self.player, key=self.key), "welcome")
        assert isinstance(reply, p.Welcome)
        return reply

    async def create(
        self,
        *,
        variant: p.VariantName = "classic",
        seats: Literal[1, 2] = 2,
        seed: str | None = None,
        deal: int | None = None,
        time_limit_s: int = 600,
        bot: Literal["greedy", "lookahead"] | None = None,
    ) -> p.Seated:
        msg = p.Create(
            variant=variant,
            seats=seats,
            seed=seed,
            deal=deal,
            time_limit_s=time_limit_s,
            name=self.name,
            bot=bot,
        )
        reply = await self._request(msg, "created")
        assert isinstance(reply, p.Seated)
        return reply

    async def stats(self, player: str | None = None) -> p.Stats:
        """A player's figures: our own, or another player's by id."""
        reply = await self._request(p.StatsRequest(player=player), "stats")
        assert isinstance(reply, p.Stats)
        return reply

    async def history(
        self, before: str | None = None, limit: int = 20, player: str | None = None
    ) -> p.History:
        reply = await self._request(p.HistoryRequest(player=player, before=before, limit=limit), "history")
        assert isinstance(reply, p.History)
        return reply

    async def join(self, match: str) -> p.Seated:
        reply = await self._request(p.Join(match=match, name=self.name), "joined")
        assert isinstance(reply, p.Seated)
        return reply

    async def watch(self, match: str) -> p.Watching:
        reply = await self._request(p.Watch(match=match), "watching")
        assert isinstance(reply, p.Watching)
        return reply

    async def resume(self, match: str | None = None, token: str | None = None) -> p.Resumed:
        """Reclaim a seat (this client's own unless given) and resend unacknowledged moves."""
        match, token = match or self.match, token or self.token
        if match is None or token is None:
            raise ClientError("nothing to resume: no match and seat token")
        if (match, token) != (self.match, self.token):
            self.match, self.token, self.last_ev = match, token, 0
        reply = await self._request(p.Resume(match=match, token=token, last_ev=self.last_ev), "resumed")
        assert isinstance(reply, p.Resumed)
        for seq, text in list(self.unacked.items()):
            await self.send(p.MoveMsg(seq=seq, move=text))
        return reply

    async def ready(self) -> None:
        await self.send(p.Ready())

    async def move(self, text: str) -> int:
        """Send a move with the next ``seq``; its ``ack`` or ``rejected`` comes as an event."""
        seq = self.next_seq
        self.next_seq += 1
        self.unacked[seq] = text
        await self.send(p.MoveMsg(seq=seq, move=text))
        return seq

    async def play(self, text: str, timeout: float = REPLY_TIMEOUT_S) -> p.Ack:
        """Send a move and wait for its ``ack``; ``MoveRejected`` when refused."""
        future: asyncio.Future[p.Ack] = asyncio.get_running_loop().create_future()
        seq = self.next_seq
        self._ack_waiters[seq] = future
        try:
            await self.move(text)
            return await asyncio.wait_for(future, timeout)
        finally:
            self._ack_waiters.pop(seq, None)

    async def finish(self) -> None:
        await self.send(p.Finish())

    async def resign(self) -> None:
        await self.send(p.Resign())

    async def rematch(self) -> None:
        await self.send(p.Rematch())

    async def leave(self) -> None:
        await self.send(p.Leave())
        self.match = self.token = None
        self.seat = None

    # ---------------------------------------------------------------- events

    async def events(self) -> AsyncIterator[Event]:
        """Every server message, typed, in order; ends when the connection ends for good."""
        while True:
            item = await self._events.get()
            if isinstance(item, Closed):
                self._events.put_nowait(item)  # later calls end too
                return
            yield item

    async def next_event(self, *types: type[M], timeout: float = REPLY_TIMEOUT_S) -> M:
        """The next event of one of ``types`` (others are skipped); ConnectionLost if it ends first."""
        async with asyncio.timeout(timeout):
            while True:
                item = await self._events.get()
                if isinstance(item, Closed):
                    self._events.put_nowait(item)
                    raise ConnectionLost(item.reason)
                if isinstance(item, types):
                    return item

    # ---------------------------------------------------------------- reader

    async def _read_forever(self) -> None:
        reason = "closed"
        try:
            while True:
                ws = self._ws
                assert ws is not None
                try:
                    async for frame in ws:
                        self._receive(p.parse_server(frame))
                except ConnectionClosed as exc:
                    reason = f"connection closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})"
                if self._closing or not self._should_resume():
                    break
                if not await self._reconnect():
                    reason = "could not reconnect"
                    break
        finally:
            self._fail_waiters(ConnectionLost(reason))
            self._events.put_nowait(Closed(reason))

    def _should_resume(self) -> bool:
        return self.auto_reconnect and self.match is not None and (self.token is not None or self.watching)

    async def _reconnect(self) -> bool:
        for delay in RECONNECT_DELAYS_S:
            await asyncio.sleep(delay)
            try:
                self._ws = await self._dial()
            except ConnectionLost:
                continue
            self.reconnects += 1
            # The reader is this task: answers to our requests must be read by a helper meanwhile.
            helper = asyncio.create_task(self._read_once_until_resumed())
            try:
                if self.player:
                    await self.hello()
                if self.watching:
                    assert self.match is not None
                    await self.watch(self.match)
                else:
                    await self.resume()
                return True
            except (ClientError, TimeoutError, ConnectionClosed):
                log.info("resume failed; trying again", exc_info=True)
                continue
            finally:
                helper.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                    await helper
        return False

    async def _read_once_until_resumed(self) -> None:
        ws = self._ws
        assert ws is not None
        while True:
            self._receive(p.parse_server(await ws.recv()))

    def _receive(self, msg: p.ServerMessage) -> None:
        ev = getattr(msg, "ev", None)
        if isinstance(ev, int) and ev > self.last_ev and not isinstance(msg, p.Ack):
            self.last_ev = ev
        if isinstance(msg, p.Welcome):
            self.player, self.key = msg.player, msg.key
        elif isinstance(msg, p.Seated):
            self.match, self.seat, self.token, self.watching = msg.match, msg.seat, msg.token, False
            self.last_ev, self.next_seq, self.unacked, self.view = 0, 1, {}, None
        elif isinstance(msg, p.Watching):
            self.match, self.seat, self.token, self.watching = msg.match, None, None, True
            self.last_ev = msg.ev
        elif isinstance(msg, p.Resumed):
            self.last_ev = max(self.last_ev, msg.ev)
            self.view = msg.view or self.view
            for seq in [s for s in self.unacked if s <= msg.last_seq]:
                del self.unacked[seq]  # applied before the drop; its ack was lost
            self.next_seq = max(self.next_seq, msg.last_seq + 1)
        elif isinstance(msg, p.Rematched):
            self.match, self.last_ev, self.next_seq, self.unacked, self.view = msg.match, 0, 1, {}, None
        elif isinstance(msg, p.Start):
            self.view = msg.view or self.view
        elif isinstance(msg, p.Ack):
            if msg.ev > self.last_ev:
                self.last_ev = msg.ev
            for seq in [s for s in self.unacked if s <= msg.seq]:
                del self.unacked[seq]
            self.view = msg.view
            self._settle_ack(msg.seq, msg)
        elif isinstance(msg, p.Rejected):
            # The server keeps its seq; this and every later unacked move are void.
            for seq in [s for s in self.unacked if s >= msg.seq]:
                del self.unacked[seq]
                self._settle_ack(seq, MoveRejected(msg))
            self.next_seq = min(self.next_seq, msg.seq)
            self.view = msg.view or self.view
        self._answer(msg)
        self._events.put_nowait(msg)
        if isinstance(msg, p.Resumed):
            for missed in msg.missed:
                self._events.put_nowait(missed)

    def _settle_ack(self, seq: int, outcome: p.Ack | MoveRejected) -> None:
        future = self._ack_waiters.pop(seq, None)
        if future is None or future.done():
            return
        if isinstance(outcome, MoveRejected):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def _answer(self, msg: p.Message) -> None:
        kind: Any = getattr(msg, "type", None)
        for answers, future in self._waiters:
            if future.done():
                continue
            if kind in answers:
                future.set_result(msg)
                return
            if isinstance(msg, p.Error):
                future.set_exception(ServerError(msg.code, msg.message))
                return

    def _fail_waiters(self, exc: ClientError) -> None:
        for _, future in self._waiters:
            if not future.done():
                future.set_exception(exc)
        for ack in self._ack_waiters.values():
            if not ack.done():
                ack.set_exception(exc)


async def connect(
    url: str = DEFAULT_URL,
    *,
    name: str | None = None,
    hello: bool = True,
    auto_reconnect: bool = True,
    identity_file: Path | None = None,
) -> Client:
    """Open a client and say ``hello``: the identity in ``identity_file`` if any, kept there after."""
    client = await Client(url, name=name, auto_reconnect=auto_reconnect).open()
    if not hello:
        return client
    known = identity.load(identity_file) if identity_file else None
    if known:
        client.player, client.key = known
    try:
        await client.hello()
    except ServerError as exc:
        if exc.code != p.ErrorCode.BAD_KEY:
            raise
        client.player = client.key = None  # this server does not know us: start afresh
        await client.hello()
    if identity_file and client.player and client.key:
        identity.save(identity_file, client.player, client.key)
    return client
