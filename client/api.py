"""An async client for the race server, over the server's own pydantic models.

A whole program (``tests/client/test_api.py`` runs it as written), with a server running:

    import asyncio

    from client import connect
    from server import protocol as p


    async def main() -> None:
        async with await connect("ws://127.0.0.1:8765", name="Ann") as c:
            await c.create(seats=1)  # practice; a race: create(), then a friend's join(code); or bot="greedy"
            await c.ready()
            async for event in c.events():  # typed server messages
                if isinstance(event, p.Start):
                    while c.view.stock_count:  # c.view: your board, after your last play
                        await c.play("T")  # seq numbered for you; returns its ack
                    await c.finish()
                elif isinstance(event, p.Result):
                    print("cards left:", event.seats[0].score)
                    break


    asyncio.run(main())

The client speaks protocol v2 (``connect(..., version=1)`` for v1): it plays
each move on its own copy of the game at once (``c.game``, ``c.view``), and
an ``ack`` brings only what the move revealed. All the bookkeeping (move
numbers, the moves and seat commands to send again after a drop, the game,
the agreement check) is the sans-I/O ``Session`` (``client/session.py``);
this class only moves its frames over a WebSocket and lets callers wait.

One reader task feeds every frame to the session and hands out what came.
**The contract: what a caller waits for is that caller's alone; ``events()``
is everything else.**

- A request that has an answer (``hello``, ``create``, ``join``, ``watch``,
  ``resume``, ``hint``, ``undo``, ``stats``, ...) returns it, or raises
  ``ServerError`` (its ``code`` the server's ``ErrorCode``) when the server
  refuses it; ``play`` returns its move's ``ack`` or raises ``MoveRejected``
  (a ``ServerError``); ``race_anyone`` returns the pairing (its ``queued``
  callback hears each ``queued``). None of these is an event too.
- ``events()`` yields what the server pushes (lobby, countdown, start,
  progress, boards, finished, result, rematched, rated, ...) and the outcome
  of what nobody waits for: the ``ack`` or ``rejected`` of a ``move()``
  (which only sends), the refusal (``error``) of a seat command (``ready``,
  ``finish``, ``resign``, ``rematch``, ``leave``: they have no answer to wait
  for), an answer that came after its caller stopped waiting (``Timeout``),
  and what the client did by itself (the ``resumed`` of a reconnect or a
  rematch, and the session's ``error`` when it gives up retrying).
- ``ClientError`` is the family: ``ServerError`` (and ``MoveRejected``) for a
  refusal, ``Timeout`` for no answer in time, ``ConnectionLost`` for a
  connection gone for good.

When the connection drops while seated, the reader reconnects (if
``auto_reconnect``; the pauses between dials grow from 0.1 s to 5 s, half of
each drawn at random so that the clients of a restarted server do not come
back in step, for up to 60 s: ``Session.reconnect_delay``), says ``hello``
with the same identity, ``resume``s with
the seat token and the last ``ev``, and the session sends every
unacknowledged move again with its original ``seq``: the server acknowledges
a repeated ``seq`` again (with its original ``ack``) and applies it only once,
so no move is lost or doubled, and every ``play()`` gets its ``ack``. After
``rematched`` the session takes its seat in the new match with the same token
and numbers moves from 1 again. When the connection is gone for good,
``events()`` raises ``ConnectionLost`` and so does every later send.

A seat command (``leave`` too), a move, a hint, an undo or a resume the
server answers ``unavailable`` (its store did not answer) is sent again by
the session after a pause it asks for (``Session.retry_timer``; in v2 an
undo is numbered with the moves, so a repeat counts once; a v1 undo, which
has no seq, goes again only if the seat's snapshot shows it did not land),
which this class keeps with one timer; after
``RETRY_TRIES`` the session gives up: a request still waiting raises that
refusal, and otherwise ``events()`` yields an ``error`` saying what was not done.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import TracebackType
from typing import Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from server import protocol as p
from server.engine import ClientGame, IllegalMove, InvalidMove

from . import identity
from .session import RECONNECT_FOR_S, Ack, NotARaceServer, Rejected, Session
from .session import ClientError as ClientError
from .session import MoveRejected as MoveRejected
from .session import ServerError as ServerError

log = logging.getLogger(__name__)

DEFAULT_URL = "ws://127.0.0.1:8765"
REPLY_TIMEOUT_S = 10.0
#: Answers that mean resuming again cannot help.
FINAL_RESUME_ERRORS = (p.ErrorCode.NOT_FOUND, p.ErrorCode.BAD_TOKEN)

M = TypeVar("M", bound=p.Message)


class ConnectionLost(ClientError):
    """The connection is gone and could not be (or was not to be) resumed."""


class Timeout(ClientError, TimeoutError):
    """No answer in time. A ClientError (callers handle one family), still a TimeoutError."""


class Closed:
    """The last item of the event queue: the connection ended (``lost`` unless we closed it)."""

    def __init__(self, reason: str, lost: bool) -> None:
        self.reason = reason
        self.lost = lost


#: A server message of either version (``isinstance`` tells which).
Event = p.Message


def ws_url(url: str) -> str:
    """The WebSocket address of ``url``: the server prints its http(s) address, and serves both."""
    for web, ws in (("http://", "ws://"), ("https://", "wss://")):
        if url[: len(web)].lower() == web:
            return ws + url[len(web) :]
    return url


def page_url(url: str) -> str:
    """The web address of ``url`` (the pages are on the WebSocket's port), without a trailing slash."""
    for ws, web in (("ws://", "http://"), ("wss://", "https://")):
        if url[: len(ws)].lower() == ws:
            url = web + url[len(ws) :]
    return url.rstrip("/")


#: The web page's paths that end in a match code: a race, its spectators' page, its replay.
PAGE_PATHS = ("m", "w", "r")


def race_link(text: str) -> tuple[str, str] | None:
    """The WebSocket address and the match code of a web link to a race; None if ``text`` is no such link.

    A link as ``client live`` prints it and the web page shares it
    (``http://HOST/w/CODE``; ``/m/`` and ``/r/`` too): the page's socket is
    at ``/ws`` on the same host, as the page itself connects.
    """
    parts = urlsplit(text.strip())
    path = parts.path.strip("/").split("/")
    if (
        parts.scheme.lower() not in ("http", "https", "ws", "wss")
        or len(path) != 2
        or path[0] not in PAGE_PATHS
    ):
        return None
    return ws_url(f"{parts.scheme}://{parts.netloc}/ws"), match_code(path[1])


def match_code(text: str) -> str:
    """``text`` as a match code, upper-cased as people type them; ClientError if it cannot be one."""
    code = text.strip().upper()
    if len(code) != p.CODE_LENGTH or any(ch not in p.CODE_ALPHABET for ch in code):
        raise ClientError(f"{text!r} is not a match code ({p.CODE_LENGTH} characters from {p.CODE_ALPHABET})")
    return code


class Client:
    """One connection to the server; make it with ``await connect(url)``."""

    def __init__(
        self, url: str, *, name: str | None = None, auto_reconnect: bool = True, version: p.Version = 2
    ) -> None:
        self.url = ws_url(url)
        self.auto_reconnect = auto_reconnect
        self.session = Session(version=version, name=name)
        self.reconnects = 0
        #: Why the connection ended for good (None while it lives, or when we closed it).
        self.lost: str | None = None
        self._ws: ClientConnection | None = None
        self._events: asyncio.Queue[Event | Closed] = asyncio.Queue()
        self._answers: dict[int, asyncio.Future[p.Message]] = {}
        self._own: set[int] = set()  # requests the client makes itself (a reconnect's): not a caller's
        self._acks: dict[int, asyncio.Future[Ack]] = {}
        self._settled = asyncio.Event()  # set while no move waits for its ack on trust
        self._settled.set()
        self._reader: asyncio.Task[None] | None = None
        self._pairing: asyncio.Future[p.Seated] | None = None  # ``race_anyone``: waiting to be paired
        self._on_queued: Callable[[p.Queued], None] | None = None
        self._closing = False
        self._reconnecting = False
        self._ended = False
        self._retry: asyncio.TimerHandle | None = None  # the session's next retry (``_arm_retry``)
        self._retrying: set[asyncio.Task[None]] = set()  # its writes, kept from the collector

    # ------------------------------------------------------------ the session's state

    @property
    def name(self) -> str | None:
        return self.session.name

    @property
    def player(self) -> str | None:
        return self.session.player

    @player.setter
    def player(self, player: str | None) -> None:
        self.session.player = player

    @property
    def key(self) -> str | None:
        return self.session.key

    @key.setter
    def key(self, key: str | None) -> None:
        self.session.key = key

    @property
    def match(self) -> str | None:
        return self.session.match

    @property
    def seat(self) -> int | None:
        return self.session.seat

    @property
    def token(self) -> str | None:
        return self.session.token

    @property
    def watching(self) -> bool:
        return self.session.watching

    @property
    def last_ev(self) -> int:
        return self.session.last_ev

    @property
    def next_seq(self) -> int:
        return self.session.next_seq

    @property
    def unacked(self) -> dict[int, str]:
        """Moves sent (or to send) and not acknowledged yet, by seq."""
        return self.session.unacked

    @property
    def game(self) -> ClientGame | None:
        """v2: this racer's game, every move sent played on it (those not acknowledged yet on trust)."""
        return self.session.game

    @property
    def view(self) -> p.View | None:
        """This racer's board as it stands here."""
        return self.session.view

    def board(self, seat: int) -> p.View | None:
        """A spectator's board of ``seat``, as shown so far."""
        return self.session.board(seat)

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
        """Close for good: a reconnect in progress stops there and takes no seat back."""
        self._closing = True
        if self._reader is not None and self._reconnecting:
            self._reader.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            # asyncio.wait: the reader's own cancellation stays inside it, ours reaches us.
            await asyncio.wait([self._reader])

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
        """Send one message as it is, past the session's bookkeeping; ConnectionLost once the connection is gone."""
        self._check_open()
        assert self._ws is not None
        try:
            await self._ws.send(p.encode(message), text=True)
        except ConnectionClosed:
            raise ConnectionLost(self.lost or "the connection is closed") from None

    def _check_open(self) -> None:
        if self.lost is not None or self._ended or self._closing:
            raise ConnectionLost(self.lost or "the connection is closed")
        if self._ws is None:
            raise ConnectionLost("not connected")

    async def _write(self) -> None:
        """Send what the session has to send, in order. A line that dies under it is the reader's
        to mend: the session sends moves and seat commands again after the resume."""
        ws = self._ws
        for message in self.session.data_to_send():
            if ws is None:
                return
            try:
                await ws.send(p.encode(message), text=True)
            except ConnectionClosed:
                if self._closing or not self._should_resume():
                    raise ConnectionLost(self.lost or "the connection is closed") from None
                return

    # -------------------------------------------------------------- requests

    async def _answer(self, request: int) -> p.Message:
        """Send what waits to be sent, then the answer to ``request``; ServerError for an ``error``."""
        return (await self._answers_to([request]))[0]

    async def _answers_to(self, requests: list[int], *, own: bool = False) -> list[p.Message]:
        """The answers to ``requests``, each awaited from before anything is sent.

        ``own``: the client's own requests (the hello and resume of a reconnect), not a caller's:
        their answers are events too, as everything the application did not ask for.
        """
        loop = asyncio.get_running_loop()
        waits = [(request, self.session.asked(request), loop.create_future()) for request in requests]
        for request, _, future in waits:
            self._answers[request] = future
            if own:
                self._own.add(request)
        try:
            await self._write()
            answers = []
            for request, kind, future in waits:
                answers.append(await self._wait_answer(request, kind, future))
            return answers
        finally:
            for request, _, _ in waits:
                self._answers.pop(request, None)
                self._own.discard(request)

    async def _wait_answer(self, request: int, kind: str, future: asyncio.Future[p.Message]) -> p.Message:
        """The answer; Timeout after REPLY_TIMEOUT_S without one, but not while the session retries
        what the server's store did not take (it answers, at the latest when it gives up)."""
        while True:
            try:
                async with asyncio.timeout(REPLY_TIMEOUT_S):
                    return await asyncio.shield(future)
            except TimeoutError:
                if not self.session.retrying:
                    self.session.forget(request)
                    raise Timeout(f"no answer to {kind} within {REPLY_TIMEOUT_S:g} s") from None

    async def _request(self, message: p.ClientMessage) -> p.Message:
        self._check_open()
        if self._reconnecting:
            raise ConnectionLost("the connection is down; it is being taken back")
        return await self._answer(self.session.request(message))

    async def hello(self) -> p.Welcome:
        self._check_open()
        reply = await self._answer(self.session.hello())
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
        rated: bool = False,
    ) -> p.Seated:
        """Open a match (``rated``: a race between two people that changes their ratings)."""
        try:
            msg = p.Create(
                variant=variant,
                seats=seats,
                seed=seed,
                deal=deal,
                time_limit_s=time_limit_s,
                name=self.name,
                bot=bot,
                rated=rated,
            )
        except ValidationError as exc:  # what the server would refuse as bad_message
            raise ClientError(p.explain(exc)) from None
        reply = await self._request(msg)
        assert isinstance(reply, p.Seated)
        return reply

    async def race_anyone(
        self,
        *,
        variant: p.VariantName = "classic",
        time_limit_s: p.QuickClock = 300,
        queued: Callable[[p.Queued], None] | None = None,
    ) -> p.Seated:
        """Wait in the quick-race queue until paired with a stranger; the seat (``paired``).

        ``queued`` hears when the place is taken (and again if the opponent
        never readied and the place was given back). Cancelling the wait
        leaves the queue. ClientError if the place goes to another
        connection of this player.
        """
        self._pairing = asyncio.get_running_loop().create_future()
        self._on_queued = queued
        try:
            await self._request(p.QuickRace(variant=variant, time_limit_s=time_limit_s))
            return await self._pairing
        except asyncio.CancelledError:
            with contextlib.suppress(ClientError):
                await self.send(p.QuickCancel())
            raise
        finally:
            self._pairing, self._on_queued = None, None

    async def live_races(self, order: p.LiveOrder = "newest", limit: int = 20) -> p.Live:
        """The races being played that anyone may watch, once (the server's list stops after it)."""
        reply = await self._request(p.LiveRequest(order=order, limit=limit))
        await self.send(p.LiveStop())
        assert isinstance(reply, p.Live)
        return reply

    async def ratings(self, player: str | None = None) -> p.Ratings:
        """A player's ratings by variant, with their history: our own, or another player's by id."""
        reply = await self._request(p.RatingsRequest(player=player))
        assert isinstance(reply, p.Ratings)
        return reply

    async def rating_board(
        self, variant: p.VariantName, after: str | None = None, limit: int = 20
    ) -> p.RatingBoard:
        """A page of ``variant``'s board of the best: the first, or the one past ``after`` (a page's ``next``)."""
        reply = await self._request(p.RatingBoardRequest(variant=variant, after=after, limit=limit))
        assert isinstance(reply, p.RatingBoard)
        return reply

    async def stats(self, player: str | None = None) -> p.Stats:
        """A player's figures: our own, or another player's by id."""
        reply = await self._request(p.StatsRequest(player=player))
        assert isinstance(reply, p.Stats)
        return reply

    async def history(
        self, before: str | None = None, limit: int = 20, player: str | None = None
    ) -> p.History:
        reply = await self._request(p.HistoryRequest(player=player, before=before, limit=limit))
        assert isinstance(reply, p.History)
        return reply

    async def join(self, match: str) -> p.Seated:
        reply = await self._request(p.Join(match=match, name=self.name))
        assert isinstance(reply, p.Seated)
        return reply

    async def watch(self, match: str) -> p.Watching:
        self._check_open()
        reply = await self._answer(self.session.watch(match))
        assert isinstance(reply, p.Watching)
        return reply

    async def resume(self, match: str | None = None, token: str | None = None) -> p.Resumed:
        """Reclaim a seat (this client's own unless given); the moves and commands that waited follow."""
        self._check_open()
        reply = await self._answer(self.session.resume(match, token))
        assert isinstance(reply, p.Resumed)
        return reply

    async def ready(self) -> None:
        await self._command(p.Ready())

    async def _command(self, message: p.ClientMessage) -> None:
        self._check_open()
        self.session.command(message)
        await self._write()

    async def move(self, text: str) -> int:
        """Send a move with the next ``seq``, without waiting: its ``ack`` or ``rejected`` is an event.

        In v2 the move is played here at once (``view`` shows it): a move the
        rules refuse raises ``MoveRejected`` (``illegal``, the server's very
        words) and is not sent. One refused while an earlier move's revealed
        card is still to come is tried again once that card is in.
        """
        self._check_open()
        seq = await self._number(text)
        await self._write()
        return seq

    async def _number(self, text: str) -> int:
        """The move numbered (and, in v2, played here); MoveRejected if the rules refuse it."""
        for attempt in range(2):
            try:
                seq = self.session.move(text)
            except (IllegalMove, InvalidMove) as exc:
                if attempt == 0 and self.session.trusting:
                    await self._wait_settled()
                    continue
                raise MoveRejected(p.ErrorCode.ILLEGAL, str(exc), 0, self.view) from None
            if self.session.trusting:
                self._settled.clear()
            return seq
        raise AssertionError("unreachable")

    async def _wait_settled(self) -> None:
        try:
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                await self._settled.wait()
        except TimeoutError:
            raise Timeout(f"the moves sent got no ack within {REPLY_TIMEOUT_S:g} s") from None

    async def play(self, text: str, timeout: float | None = None) -> Ack:
        """Send a move and wait for its ``ack``; ``MoveRejected`` when refused, ``Timeout``."""
        limit = REPLY_TIMEOUT_S if timeout is None else timeout
        self._check_open()
        seq = await self._number(text)
        future: asyncio.Future[Ack] = asyncio.get_running_loop().create_future()
        self._acks[seq] = future
        try:
            await self._write()
            async with asyncio.timeout(limit):
                return await future
        except TimeoutError:
            raise Timeout(f"no answer to move {seq} ({text}) within {limit:g} s") from None
        finally:
            self._acks.pop(seq, None)

    async def finish(self) -> None:
        await self._command(p.Finish())

    async def resign(self) -> None:
        await self._command(p.Resign())

    async def rematch(self) -> None:
        await self._command(p.Rematch())

    async def hint(self) -> str | None:
        """Practice: the move the server's hint player suggests (None: it sees none worth making)."""
        reply = await self._request(p.HintRequest())
        assert isinstance(reply, p.Hint)
        return reply.move

    async def undo(self) -> p.Undone:
        """Practice: take back the last move, with the automatic moves it brought.

        Waits for the moves on their way to be acknowledged first. An undo the
        server's store did not take is retried by the session, never twice
        (``Session.undo``); while the seat is being resumed it is refused.
        """
        self._check_open()
        if self._reconnecting:
            raise ConnectionLost("the connection is down; it is being taken back")
        await self._wait_settled()
        reply = await self._answer(self.session.undo())
        assert isinstance(reply, p.Undone)
        return reply

    async def leave(self) -> None:
        self._check_open()
        self.session.leave()
        await self._write()

    # ---------------------------------------------------------------- events

    async def events(self) -> AsyncIterator[Event]:
        """Every server message, typed, in order; ends at ``close()``, ConnectionLost if lost."""
        while True:
            item = await self._events.get()
            if isinstance(item, Closed):
                self._events.put_nowait(item)  # later calls end too
                if item.lost:
                    raise ConnectionLost(item.reason)
                return
            yield item

    async def next_event(self, *types: type[M], timeout: float = REPLY_TIMEOUT_S) -> M:
        """The next event of one of ``types`` (others are skipped); ConnectionLost if it ends first."""
        try:
            async with asyncio.timeout(timeout):
                while True:
                    item = await self._events.get()
                    if isinstance(item, Closed):
                        self._events.put_nowait(item)
                        raise ConnectionLost(item.reason)
                    if isinstance(item, types):
                        return item
        except TimeoutError:
            names = ", ".join(t.__name__ for t in types)
            raise Timeout(f"no {names} within {timeout:g} s") from None

    # ---------------------------------------------------------------- reader

    async def _read_forever(self) -> None:
        reason = "closed"
        try:
            while True:
                reason = await self._read_connection()
                self._reconnecting = True
                # Answers to requests sent on the dropped connection will never come.
                self._fail(self.session.disconnected(), ConnectionLost(reason))
                if self._closing or self.session.fatal or not self._should_resume():
                    break
                gave_up = await self._reconnect()
                if gave_up is not None:
                    reason = gave_up
                    break
                self._reconnecting = False
        finally:
            self._end(self.session.fatal or reason)

    def _end(self, reason: str) -> None:
        """The connection is over for good: fail whoever waits, and tell ``events()``."""
        self._ended = True
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        lost = not self._closing
        if lost:
            self.lost = reason
        self._fail(list(self._answers), ConnectionLost(reason))
        for ack in self._acks.values():
            if not ack.done():
                ack.set_exception(ConnectionLost(reason))
        self._settled.set()
        self._events.put_nowait(Closed(reason, lost))

    def _fail(self, requests: list[int], exc: ClientError) -> None:
        for request in requests:
            future = self._answers.get(request)
            if future is not None and not future.done():
                future.set_exception(exc)

    async def _read_connection(self) -> str:
        """Read one connection's frames until it closes; the reason it ended."""
        ws = self._ws
        assert ws is not None
        try:
            async for frame in ws:
                self._receive_frame(frame)
                await self._write()
        except ConnectionClosed:
            pass
        except NotARaceServer as exc:
            self.session.fatal = f"{self.url} sent {exc}"  # no reconnect helps
            await ws.close()
            return self.session.fatal
        return f"connection closed ({ws.close_code or 'no close frame'})"

    def _receive_frame(self, frame: str | bytes) -> None:
        self._receive(self.session.parse(frame))

    def _receive(self, msg: p.Message) -> None:
        """Feed the session one message; hand out what came of it.

        What answers a caller who waits for it (a request's answer or refusal, a ``play``'s ack or
        rejection, ``race_anyone``'s pairing) goes to that caller alone; the rest is an event.
        """
        session = self.session
        session.receive_message(msg)
        given: list[p.Message] = []  # handed to a waiting caller: no event
        answered = False
        for answer in session.answers_received():
            answered = answered or answer.message is msg
            future = self._answers.get(answer.request)
            if future is not None and not future.done():
                reply = answer.message
                if isinstance(reply, p.Error):
                    future.set_exception(ServerError(reply.code, reply.message))
                else:
                    future.set_result(reply)
                if answer.request not in self._own:
                    given.append(reply)
        for seq, outcome in session.outcomes_received():
            ack = self._acks.pop(seq, None)
            if ack is not None and not ack.done():
                if isinstance(outcome, ClientError):
                    ack.set_exception(outcome)
                    if isinstance(msg, Rejected) and msg.seq == seq:
                        given.append(msg)
                else:
                    ack.set_result(outcome)
                    given.append(outcome)
        if not session.trusting:
            self._settled.set()
        if self._on_pairing(msg, answered):
            given.append(msg)
        for event in session.events_received():
            if not any(event is mine for mine in given):
                self._events.put_nowait(event)
        self._arm_retry()

    def _arm_retry(self) -> None:
        """Keep the pause the session asked for before it retries (one timer: the earliest asked)."""
        delay = self.session.retry_timer()
        if delay is not None and self._retry is None:
            self._retry = asyncio.get_running_loop().call_later(delay, self._retry_due)

    def _retry_due(self) -> None:
        """The session's pause is over: let it send again what the server's store did not take.

        Not while the line is being taken back: that resume sends every kept
        command and unacknowledged move again by itself.
        """
        self._retry = None
        if self._ended or self._closing or self._reconnecting:
            return
        self.session.retry()
        for event in self.session.events_received():
            self._events.put_nowait(event)
        self._arm_retry()
        task = asyncio.ensure_future(self._write_retried())
        self._retrying.add(task)
        task.add_done_callback(self._retrying.discard)

    async def _write_retried(self) -> None:
        with contextlib.suppress(ClientError):  # the line died: the reader resumes, and all goes again
            await self._write()

    def _on_pairing(self, msg: p.Message, answered: bool) -> bool:
        """While ``race_anyone`` waits: the pairing, the place given back, or the place lost.

        True when ``msg`` went to ``race_anyone``'s caller (its result, its exception, or its
        ``queued`` callback): it is no event.
        """
        waiting = self._pairing
        if waiting is None or waiting.done():
            return False
        if isinstance(msg, p.Seated) and msg.type == "paired":
            waiting.set_result(msg)
        elif isinstance(msg, p.Queued) and self._on_queued is not None:
            self._on_queued(msg)
        elif isinstance(msg, p.Unqueued):
            waiting.set_exception(ClientError(f"out of the queue: {msg.reason}"))
        elif isinstance(msg, p.Error) and not answered:
            waiting.set_exception(ServerError(msg.code, msg.message))  # the seat could not be given
        else:
            return False
        return True

    def _should_resume(self) -> bool:
        s = self.session
        return self.auto_reconnect and s.match is not None and (s.token is not None or s.watching)

    async def _reconnect(self) -> str | None:
        """Dial again and take the seat (or the watch) back: None when done, else why not.

        Paced by the session's ``reconnect_delay`` (jittered, growing), for
        up to ``RECONNECT_FOR_S``.
        """
        why = "could not reconnect"
        loop = asyncio.get_running_loop()
        until = loop.time() + RECONNECT_FOR_S
        for tries in itertools.count(1):
            delay = self.session.reconnect_delay(tries)
            if loop.time() + delay > until:
                break
            await asyncio.sleep(delay)
            if self._closing:
                return "closed"
            try:
                self._ws = await self._dial()
            except ConnectionLost as exc:
                why = f"could not reconnect: {exc}"
                continue
            self.reconnects += 1
            asked = self.session.match
            try:
                await self._rejoin()
                return None
            except ServerError as exc:
                why = f"could not resume: {exc}"
                # A rematch's new match not found yet is asked again, then left for the old one
                # (the session's count): going on helps there.
                rematch = self.session.rematched_from is not None or self.session.match != asked
                if exc.code in FINAL_RESUME_ERRORS and not rematch:
                    return why
            except ClientError as exc:
                why = f"could not resume: {exc}"
            log.info("resume failed; trying again: %s", why)
        return why

    async def _rejoin(self) -> None:
        """Identify again and take the seat (or the watch) back on the new connection."""
        # The reader is this task: answers to our requests must be read by a helper meanwhile.
        helper = asyncio.create_task(self._read_answers())
        try:
            await self._answers_to(self.session.connected(), own=True)
        finally:
            helper.cancel()
            await asyncio.wait([helper])

    async def _read_answers(self) -> None:
        ws = self._ws
        assert ws is not None
        try:
            while True:
                self._receive_frame(await ws.recv())
                await self._write()
        except (ConnectionClosed, NotARaceServer) as exc:
            lost = ConnectionLost(self.session.fatal or f"connection closed while resuming: {exc}")
            self._fail(list(self._answers), lost)


async def connect(
    url: str = DEFAULT_URL,
    *,
    name: str | None = None,
    hello: bool = True,
    auto_reconnect: bool = True,
    identity_file: Path | None = None,
    version: p.Version = 2,
) -> Client:
    """Open a client and say ``hello``: the identity in ``identity_file`` if any, kept there after.

    Without ``hello`` the client has no identity, and speaks protocol v1 (a
    ``hello`` is how a connection asks for v2).
    """
    client = await Client(
        url, name=name, auto_reconnect=auto_reconnect, version=version if hello else 1
    ).open()
    if not hello:
        return client
    try:
        await _greet(client, identity_file)
    except BaseException:
        await client.close()
        raise
    return client


async def _greet(client: Client, identity_file: Path | None) -> None:
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
