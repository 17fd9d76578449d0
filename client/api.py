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
(with its original ``ack``) and applies it only once, so no move is lost or
doubled, and every ``play()`` gets its ``ack``. Until the seat is held again,
moves and seat commands (``ready``, ``finish``, ...) wait in order: sent on a
connection without the seat they would only be refused. ``ready``, ``finish``,
``resign`` and ``rematch`` are kept until the server is seen to apply them (a
``lobby``, a ``finished``) or refuses them: one written into a line that had
already died is sent again after the resume unless the ``resumed`` snapshot
shows it took effect, and the refusal of such a repeat (the game ended
meanwhile) is not news and not passed on.

A refusal answers the oldest move still on the wire (the server answers a
connection's frames in order): after one, the moves sent behind it are void
and their own ``out_of_order`` refusals, still to come, are dropped, so they
cannot void the moves that take their seqs next.

After ``rematched`` the client takes its seat in the new match with the same
token (as the protocol says) and numbers moves from 1 again. When the
connection is gone for good, ``events()`` raises ``ConnectionLost`` and so
does every later send.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

from pydantic import ValidationError
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from server import protocol as p

from . import identity

log = logging.getLogger(__name__)

DEFAULT_URL = "ws://127.0.0.1:8765"
REPLY_TIMEOUT_S = 10.0
RECONNECT_DELAYS_S = (0.05, 0.2, 0.5, 1.0, 2.0, 4.0)
#: Answers that mean resuming again cannot help.
FINAL_RESUME_ERRORS = (p.ErrorCode.NOT_FOUND, p.ErrorCode.BAD_TOKEN)

M = TypeVar("M", bound=p.Message)
#: Seat commands kept until they are seen to take effect; a repeat of one is harmless.
Kept = p.Ready | p.Finish | p.Resign | p.Rematch


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


class Timeout(ClientError, TimeoutError):
    """No answer in time. A ClientError (callers handle one family), still a TimeoutError."""


class Closed:
    """The last item of the event queue: the connection ended (``lost`` unless we closed it)."""

    def __init__(self, reason: str, lost: bool) -> None:
        self.reason = reason
        self.lost = lost


Event = p.ServerMessage


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


def match_code(text: str) -> str:
    """``text`` as a match code, upper-cased as people type them; ClientError if it cannot be one."""
    code = text.strip().upper()
    if len(code) != p.CODE_LENGTH or any(ch not in p.CODE_ALPHABET for ch in code):
        raise ClientError(f"{text!r} is not a match code ({p.CODE_LENGTH} characters from {p.CODE_ALPHABET})")
    return code


class Client:
    """One connection to the server; make it with ``await connect(url)``."""

    def __init__(self, url: str, *, name: str | None = None, auto_reconnect: bool = True) -> None:
        self.url = ws_url(url)
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
        self.reconnects = 0
        #: Why the connection ended for good (None while it lives, or when we closed it).
        self.lost: str | None = None
        self._ws: ClientConnection | None = None
        self._events: asyncio.Queue[Event | Closed] = asyncio.Queue()
        self._waiters: list[tuple[tuple[str, ...], asyncio.Future[p.Message]]] = []
        self._ack_waiters: dict[int, asyncio.Future[p.Ack]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._pairing: asyncio.Future[p.Seated] | None = None  # ``race_anyone``: waiting to be paired
        self._on_queued: Callable[[p.Queued], None] | None = None
        self._follow: asyncio.Task[None] | None = None
        self._closing = False
        self._reconnecting = False
        self._ended = False
        self._fatal: str | None = None  # a reason no reconnect can help with
        # The seat: does this connection hold it? Until it does, seat commands wait.
        self._holding = False
        self._sent_seq = 0  # the highest seq sent on this connection
        self._held: list[p.Message] = []  # other seat commands waiting for the seat (``leave``)
        # Kept commands by type until seen to take effect or refused: a resume sends them again.
        self._unconfirmed: dict[str, Kept] = {}
        self._settled: set[str] = set()  # took effect in this match: a repeat is not kept
        # Kept commands sent on this connection and not yet answered, in order: (type, a resend?).
        self._awaiting: list[tuple[str, bool]] = []
        # Seqs of voided moves still on the wire whose refusals are yet to come, in order.
        self._stale: list[int] = []

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
        for task in (self._follow, self._reader if self._reconnecting else None):
            if task is not None:
                task.cancel()
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
        """Send one message; ConnectionLost once the connection is gone for good."""
        await self._send_frame(message)

    def _check_open(self) -> None:
        if self.lost is not None or self._ended or self._closing:
            raise ConnectionLost(self.lost or "the connection is closed")

    async def _send_frame(self, message: p.Message) -> bool:
        """Send; False when the line is down and the reader will resume the seat."""
        self._check_open()
        if self._ws is None:
            raise ConnectionLost("not connected")
        try:
            await self._ws.send(p.encode(message), text=True)
        except ConnectionClosed:
            if self._closing or not self.auto_reconnect or not self._should_resume():
                raise ConnectionLost(self.lost or "the connection is closed") from None
            self._holding = False
            return False
        return True

    async def _seat_send(self, message: p.Message) -> None:
        """Send a seat's command now, or keep it until the seat is held again (reconnect, rematch).

        A kept command stays in ``_unconfirmed`` even once written: a socket that
        is already dead takes the write without complaint, and only the server's
        answer shows the command arrived.
        """
        self._check_open()
        kept: Kept | None = None
        if isinstance(message, Kept) and self.token is not None and message.type not in self._settled:
            kept = message
            self._unconfirmed[kept.type] = kept
        if self.token is None or self._holding:
            if kept is not None:
                self._awaiting.append((kept.type, False))
            if await self._send_frame(message):
                return
        if kept is None and not isinstance(message, p.MoveMsg):  # moves wait in ``unacked``, resent by seq
            self._held.append(message)

    async def _flush(self) -> None:
        """The seat is ours again: send unacked moves by seq, then kept commands, then held ones."""
        while True:
            later = [seq for seq in sorted(self.unacked) if seq > self._sent_seq]
            sent = {kind for kind, _ in self._awaiting}
            again = [command for kind, command in self._unconfirmed.items() if kind not in sent]
            held = False
            if later:
                self._sent_seq = later[0]
                message: p.Message = p.MoveMsg(seq=later[0], move=self.unacked[later[0]])
            elif again:
                message = again[0]
                self._awaiting.append((again[0].type, True))
            elif self._held:
                message, held = self._held.pop(0), True
            else:
                self._holding = True
                return
            if not await self._send_frame(message):
                if held:
                    self._held.insert(0, message)
                return

    # -------------------------------------------------------------- requests

    async def _request(self, message: p.Message, *answers: str) -> p.Message:
        future: asyncio.Future[p.Message] = asyncio.get_running_loop().create_future()
        self._waiters.append((answers, future))
        try:
            await self.send(message)
            return await asyncio.wait_for(future, REPLY_TIMEOUT_S)
        except TimeoutError:
            kind = getattr(message, "type", "request")
            raise Timeout(f"no answer to {kind} within {REPLY_TIMEOUT_S:g} s") from None
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
        try:
            msg = p.Create(
                variant=variant,
                seats=seats,
                seed=seed,
                deal=deal,
                time_limit_s=time_limit_s,
                name=self.name,
                bot=bot,
            )
        except ValidationError as exc:  # what the server would refuse as bad_message
            raise ClientError(p.explain(exc)) from None
        reply = await self._request(msg, "created")
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
            await self._request(p.QuickRace(variant=variant, time_limit_s=time_limit_s), "queued")
            return await self._pairing
        except asyncio.CancelledError:
            with contextlib.suppress(ClientError):
                await self.send(p.QuickCancel())
            raise
        finally:
            self._pairing, self._on_queued = None, None

    async def live_races(self, order: p.LiveOrder = "newest", limit: int = 20) -> p.Live:
        """The races being played that anyone may watch, once (the server's list stops after it)."""
        reply = await self._request(p.LiveRequest(order=order, limit=limit), "live")
        await self.send(p.LiveStop())
        assert isinstance(reply, p.Live)
        return reply

    async def ratings(self, player: str | None = None) -> p.Ratings:
        """A player's ratings by variant, with their history: our own, or another player's by id."""
        reply = await self._request(p.RatingsRequest(player=player), "ratings")
        assert isinstance(reply, p.Ratings)
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
        """Reclaim a seat (this client's own unless given), then send the moves and commands that waited."""
        match, token = match or self.match, token or self.token
        if match is None or token is None:
            raise ClientError("nothing to resume: no match and seat token")
        if (match, token) != (self.match, self.token):
            self.match, self.token = match, token
            self._new_match()
        # Until the answer, seat commands wait; then every unacked move goes again (an
        # applied one is answered with its original ack), in seq order, before newer ones.
        self._new_connection()
        reply = await self._request(p.Resume(match=match, token=token, last_ev=self.last_ev), "resumed")
        assert isinstance(reply, p.Resumed)
        if self.match == match:  # else a rematch in ``missed`` moved us on: its resume flushes
            await self._flush()
        return reply

    async def ready(self) -> None:
        await self._seat_send(p.Ready())

    async def move(self, text: str) -> int:
        """Send a move with the next ``seq``; its ``ack`` or ``rejected`` comes as an event."""
        seq = self.next_seq
        self.next_seq += 1
        self.unacked[seq] = text
        if self.token is None or self._holding:
            self._sent_seq = max(self._sent_seq, seq)
        await self._seat_send(p.MoveMsg(seq=seq, move=text))
        return seq

    async def play(self, text: str, timeout: float | None = None) -> p.Ack:
        """Send a move and wait for its ``ack``; ``MoveRejected`` when refused, ``Timeout``."""
        limit = REPLY_TIMEOUT_S if timeout is None else timeout
        future: asyncio.Future[p.Ack] = asyncio.get_running_loop().create_future()
        seq = self.next_seq
        self._ack_waiters[seq] = future
        try:
            await self.move(text)
            return await asyncio.wait_for(future, limit)
        except TimeoutError:
            raise Timeout(f"no answer to move {seq} ({text}) within {limit:g} s") from None
        finally:
            self._ack_waiters.pop(seq, None)

    async def finish(self) -> None:
        await self._seat_send(p.Finish())

    async def resign(self) -> None:
        await self._seat_send(p.Resign())

    async def rematch(self) -> None:
        await self._seat_send(p.Rematch())

    async def hint(self) -> str | None:
        """Practice: the move the server's hint player suggests (None: it sees none worth making)."""
        reply = await self._request(p.HintRequest(), "hint")
        assert isinstance(reply, p.Hint)
        return reply.move

    async def undo(self) -> p.Undone:
        """Practice: take back the last move, with the automatic moves it brought.

        Not kept for a resume like moves are: an undo sent twice takes back two
        moves, so while the seat is being resumed it is refused instead.
        """
        if self.token is not None and not self._holding:
            raise ClientError("the seat is being resumed; undo again once it is back")
        reply = await self._request(p.UndoRequest(), "undone")
        assert isinstance(reply, p.Undone)
        return reply

    async def leave(self) -> None:
        await self._seat_send(p.Leave())
        self.match = self.token = None
        self.seat = None

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
                self._holding = False
                if self._closing or self._fatal or not self._should_resume():
                    break
                # Answers to requests sent on the dropped connection will never come.
                self._fail_requests(ConnectionLost(reason))
                gave_up = await self._reconnect()
                if gave_up is not None:
                    reason = gave_up
                    break
        finally:
            self._end(self._fatal or reason)

    def _end(self, reason: str) -> None:
        """The connection is over for good: fail whoever waits, and tell ``events()``."""
        self._ended, self._holding = True, False
        lost = not self._closing
        if lost:
            self.lost = reason
        self._fail_requests(ConnectionLost(reason))
        for ack in self._ack_waiters.values():
            if not ack.done():
                ack.set_exception(ConnectionLost(reason))
        self._events.put_nowait(Closed(reason, lost))

    async def _read_connection(self) -> str:
        """Read one connection's frames until it closes; the reason it ended."""
        ws = self._ws
        assert ws is not None
        try:
            async for frame in ws:
                self._receive(self._parse(frame))
        except ConnectionClosed:
            pass
        except ConnectionLost as exc:  # an unreadable frame: not a race server
            await ws.close()
            return str(exc)
        return f"connection closed ({ws.close_code or 'no close frame'})"

    def _parse(self, frame: str | bytes) -> p.ServerMessage:
        """The frame as a server message; a frame that is none ends the connection for good."""
        try:
            return p.parse_server(frame)
        except ValidationError:
            text = frame if isinstance(frame, str) else repr(frame)
            self._fatal = f"{self.url} sent a message that is no race server's: {text[:60]!r}"
            raise ConnectionLost(self._fatal) from None

    def _should_resume(self) -> bool:
        return self.auto_reconnect and self.match is not None and (self.token is not None or self.watching)

    async def _reconnect(self) -> str | None:
        """Dial again and take the seat (or the watch) back: None when done, else why not."""
        why = "could not reconnect"
        self._reconnecting = True
        try:
            for delay in RECONNECT_DELAYS_S:
                await asyncio.sleep(delay)
                if self._closing:
                    return "closed"
                try:
                    self._ws = await self._dial()
                except ConnectionLost as exc:
                    why = f"could not reconnect: {exc}"
                    continue
                self.reconnects += 1
                try:
                    await self._rejoin()
                    return None
                except ServerError as exc:
                    why = f"could not resume: {exc}"
                    if exc.code in FINAL_RESUME_ERRORS:
                        return why
                except ClientError as exc:
                    why = f"could not resume: {exc}"
                log.info("resume failed; trying again: %s", why)
            return why
        finally:
            self._reconnecting = False

    async def _rejoin(self) -> None:
        """Identify again and take the seat (or the watch) back on the new connection."""
        # The reader is this task: answers to our requests must be read by a helper meanwhile.
        helper = asyncio.create_task(self._read_answers())
        try:
            if self.player:
                await self.hello()
            if self.watching:
                assert self.match is not None
                await self.watch(self.match)
            else:
                await self.resume()
        finally:
            helper.cancel()
            await asyncio.wait([helper])

    async def _read_answers(self) -> None:
        ws = self._ws
        assert ws is not None
        try:
            while True:
                self._receive(self._parse(await ws.recv()))
        except (ConnectionClosed, ConnectionLost) as exc:
            self._fail_requests(ConnectionLost(self._fatal or f"connection closed while resuming: {exc}"))

    async def _follow_rematch(self) -> None:
        """Take our seat in the rematch: ``resume`` the new match with the same token."""
        try:
            await self.resume()
        except ClientError as exc:
            log.warning("could not take the seat in the rematch: %s", exc)

    def _receive(self, msg: p.ServerMessage) -> None:
        ev = getattr(msg, "ev", None)
        if isinstance(ev, int) and ev > self.last_ev and not isinstance(msg, p.Ack):
            self.last_ev = ev
        if isinstance(msg, p.Welcome):
            self.player, self.key = msg.player, msg.key
        elif isinstance(msg, p.Seated):
            self.match, self.seat, self.token, self.watching = msg.match, msg.seat, msg.token, False
            self._new_match()
            self._holding, self._held = True, []
        elif isinstance(msg, p.Watching):
            self.match, self.seat, self.token, self.watching = msg.match, None, None, True
            self.last_ev = msg.ev
        elif isinstance(msg, p.Resumed):
            self._on_resumed(msg)
        elif isinstance(msg, p.Rematched):
            self._on_rematched(msg)
        elif isinstance(msg, p.Start):
            self.view = msg.view or self.view
        elif isinstance(msg, p.Ack):
            self._on_ack(msg)
        elif isinstance(msg, p.Undone):
            self.view = msg.view
        elif isinstance(msg, p.Rejected) and not self._on_rejected(msg):
            return
        elif isinstance(msg, p.Error) and msg.code == p.ErrorCode.TAKEN_OVER:
            self._fatal = "the seat was taken over by another connection"
        self._on_pairing(msg)
        self._observe(msg)
        if not self._answer(msg) and isinstance(msg, p.Error) and not self._on_refused(msg):
            return
        self._events.put_nowait(msg)
        if isinstance(msg, p.Resumed):
            for missed in msg.missed:
                self._events.put_nowait(missed)
                self._observe(missed)
                if isinstance(missed, p.Rematched):  # it happened while we were away
                    self._on_rematched(missed)

    def _on_pairing(self, msg: p.ServerMessage) -> None:
        """While ``race_anyone`` waits: the pairing, the place given back, or the place lost."""
        waiting = self._pairing
        if waiting is None or waiting.done():
            return
        if isinstance(msg, p.Seated) and msg.type == "paired":
            waiting.set_result(msg)
        elif isinstance(msg, p.Queued) and self._on_queued is not None:
            self._on_queued(msg)
        elif isinstance(msg, p.Unqueued):
            waiting.set_exception(ClientError(f"out of the queue: {msg.reason}"))
        elif isinstance(msg, p.Error) and not any(not f.done() for _, f in self._waiters):
            waiting.set_exception(ServerError(msg.code, msg.message))  # the seat could not be given

    def _new_match(self) -> None:
        """A match (first seat, other seat, rematch) starts from nothing: no event, move or command."""
        self.last_ev, self.next_seq, self.unacked, self.view = 0, 1, {}, None
        self._unconfirmed, self._settled = {}, set()
        self._new_connection()

    def _new_connection(self) -> None:
        """The seat is not held (yet) here: nothing is sent or awaited on this connection."""
        self._holding, self._sent_seq, self._awaiting, self._stale = False, 0, [], []

    def _observe(self, msg: p.ServerMessage) -> None:
        """Settle the kept commands this event (or the ``resumed`` snapshot) shows to have taken effect."""
        if isinstance(msg, p.Resumed):
            self._observe(msg.lobby)
        elif isinstance(msg, p.Lobby) and msg.match == self.match:
            mine = next((s for s in msg.seats if s.seat == self.seat), None)
            if msg.status != "lobby" or (mine is not None and mine.ready):
                self._settle("ready")
            if mine is not None and mine.rematch:
                self._settle("rematch")
            if msg.status == "finished":
                self._settle("finish", "resign")
        elif isinstance(msg, p.Finished) and msg.seat == self.seat:
            self._settle("finish", "resign")

    def _settle(self, *kinds: str) -> None:
        self._settled.update(kinds)
        for kind in kinds:
            self._unconfirmed.pop(kind, None)
        self._awaiting = [(kind, again) for kind, again in self._awaiting if kind not in kinds]

    def _on_refused(self, msg: p.Error) -> bool:
        """An error no request waits for refuses the oldest kept command sent here; False to drop it.

        Kept commands are refused with ``wrong_phase`` only. The refusal of a resend is
        dropped: the command was repeated because the line died under it, and what it
        asked for either happened meanwhile or no longer can (the game ended, the race started).
        """
        if msg.code != p.ErrorCode.WRONG_PHASE or not self._awaiting:
            return True
        kind, again = self._awaiting.pop(0)
        self._unconfirmed.pop(kind, None)
        return not again

    def _on_resumed(self, msg: p.Resumed) -> None:
        # Unacked moves up to last_seq were applied; resume() resends them for their acks.
        self.match, self.seat, self.watching = msg.match, msg.seat, False
        # The snapshot's ev, even below ours: the store may have lost events (a rolled-back Redis),
        # and a later resume asking after ours would skip the new events numbered up to it.
        self.last_ev = msg.ev
        self.view = msg.view or self.view
        acked = min(self.unacked, default=self.next_seq) - 1
        if msg.last_seq < acked:
            self._lost_moves(msg, acked)
        else:
            self.next_seq = max(self.next_seq, msg.last_seq + 1)

    def _lost_moves(self, msg: p.Resumed, acked: int) -> None:
        """The server lost moves it had acknowledged (its store was rolled back): go on from its board.

        The moves sent after them were chosen on a board that no longer is:
        they are voided, not resent, and numbering starts again after the
        server's last seq.
        """
        lost = ClientError(f"the server lost moves {msg.last_seq + 1}..{acked}; play on from its board")
        for seq in sorted(self.unacked):
            self._settle_ack(seq, lost)
        self.unacked.clear()
        self.next_seq, self._sent_seq = msg.last_seq + 1, msg.last_seq

    def _on_rematched(self, msg: p.Rematched) -> None:
        if self.token is None:  # a spectator: the old match stays what it watches
            return
        self.match = msg.match
        self._new_match()
        self._follow = asyncio.get_running_loop().create_task(self._follow_rematch())

    def _on_ack(self, msg: p.Ack) -> None:
        if msg.ev > self.last_ev:
            self.last_ev = msg.ev
        for seq in [s for s in self.unacked if s <= msg.seq]:
            del self.unacked[seq]
        self.view = msg.view
        self._settle_ack(msg.seq, msg)

    def _on_rejected(self, msg: p.Rejected) -> bool:
        """Void the refused move and every later one; False for a refusal about a move void already.

        The refusal answers the oldest move on the wire. The moves sent behind it are
        refused too (out of order), each before any move sent from now on is answered:
        those refusals are about these voided moves, not about the next moves that
        reuse their seqs (voiding those would number a move with a seq already applied).
        """
        if self._stale and msg.seq == self._stale[0]:
            self._stale.pop(0)
            return False
        if msg.seq not in self.unacked:  # acknowledged (applied) or voided already
            return False
        voided = sorted(s for s in self.unacked if s >= msg.seq)
        self._stale = [s for s in voided if msg.seq < s <= self._sent_seq]
        for seq in voided:
            del self.unacked[seq]
            self._settle_ack(seq, MoveRejected(msg))
        self.next_seq = min(self.next_seq, msg.seq)
        self._sent_seq = min(self._sent_seq, msg.seq - 1)
        self.view = msg.view or self.view
        return True

    def _settle_ack(self, seq: int, outcome: p.Ack | ClientError) -> None:
        future = self._ack_waiters.pop(seq, None)
        if future is None or future.done():
            return
        if isinstance(outcome, ClientError):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def _answer(self, msg: p.Message) -> bool:
        """Give ``msg`` to the first request it answers; False if it answers none."""
        kind: Any = getattr(msg, "type", None)
        for answers, future in self._waiters:
            if future.done():
                continue
            if kind in answers:
                future.set_result(msg)
                return True
            if isinstance(msg, p.Error):
                future.set_exception(ServerError(msg.code, msg.message))
                return True
        return False

    def _fail_requests(self, exc: ClientError) -> None:
        for _, future in self._waiters:
            if not future.done():
                future.set_exception(exc)


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
