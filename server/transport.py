"""The WebSocket side of a connection: its frames in, its outbox out, its rate limit.

Each connection reads frames in order and runs one command at a time, so a
player's moves are decided in the order sent. Writes go through a bounded
per-connection outbox drained by its own task: a slow reader can never stall
a broadcast to the others, and one that falls too far behind is closed (it
can resume and miss nothing): past ``OUTBOX_LIMIT`` frames queued or
``OUTBOX_BYTES`` bytes unsent, so what one connection holds of the server's
memory is bounded whatever it asks for.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

from websockets.asyncio.server import Server, ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import Event, State
from websockets.server import ServerProtocol

from . import protocol as p
from .addresses import Admission, Crowded, Gate, client_key
from .errors import ErrorCode, Refused
from .flood import FrameRate, Verdict
from .live import CLOSE_TRY_AGAIN, LiveMatch
from .liveness import connection_id
from .settings import Settings
from .store import PlayerRecord

OUTBOX_LIMIT = 2048  # queued frames before a reader counts as stalled
WRITE_BUFFER_LIMIT = 64 * 1024  # unsent bytes past which frames wait in the outbox instead
#: Unsent bytes (the socket's buffer and the outbox) past which a reader counts as stalled, whatever
#: the frames: a client that never read and asked at its frame rate for a 36 KB `watching` snapshot
#: (a 16 KB replay, a page of 100 live races...) had 2,048 of them held, 73 MB a socket, 4.7 GB for
#: one address's 64 sockets; one turn's answers (a burst of requests) were written whole too.
OUTBOX_BYTES = 1 << 20
CLOSE_POLICY = 1008
#: Seconds a flooder is given to answer the close (1008) before its socket is dropped: websockets waits
#: 10 s by default, reading (and answering every ping) all along, for a client that never answers.
FLOOD_CLOSE_S = 2.0
#: Frames counted against the frame rate as they come (``Socket.on_frame``), not as a message.
COUNTED_APART = frozenset((Opcode.PING, Opcode.CONT))


class Socket(ServerConnection):
    """A socket of the game port, counted by its ``Gate`` from its accept to its close.

    Counted at ``connection_made``, before a byte of its request is read:
    ``process_request`` sees a request only once it is whole, too late to
    bound the sockets that never finish one. A socket the gate refuses keeps
    its ``refusal`` for ``Http.process_request`` to answer with; one it drops
    is aborted at once.

    Two kinds of frame never reach ``read_frames`` as a message of their
    own: a ping, which websockets answers itself (the pong is written before
    the frame reaches ``process_event``), and a fragment past a message's
    first, which websockets joins to the others (thousands of one-byte
    fragments made one 4 KiB request cost 11 ms). ``on_frame``, which
    ``read_frames`` sets while it reads the connection, counts each against
    the connection's frame rate all the same (a message in n fragments
    counts n), so a flood of either is refused and closed as a flood of
    messages is. Pongs (answers to the server's own keepalive pings) are not
    counted.
    """

    def __init__(
        self,
        gate: Gate,
        proxies: Sequence[str],
        on_refused: Callable[[Crowded, str], None],
        protocol: ServerProtocol,
        server: Server,
        **kwargs: Any,
    ) -> None:
        super().__init__(protocol, server, **kwargs)
        self.gate = gate
        self._proxies = proxies
        self._on_refused = on_refused
        self.refusal: Crowded | None = None  # why the gate refused it
        self._key: str | None = None  # its address (None: not counted per address)
        self._opening = False
        self._counted = False
        self.on_frame: Callable[[], object] | None = None  # a ping or a later fragment (``read_frames``)

    def process_event(self, event: Event) -> None:
        super().process_event(event)
        if self.on_frame is not None and isinstance(event, Frame) and event.opcode in COUNTED_APART:
            self.on_frame()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        key = client_key(str(peer[0]), Headers(), self._proxies) if peer else None
        admission, why = self.gate.accepted(key)
        if why is not None:
            self._on_refused(why, admission.value)
        if admission is Admission.DROP:
            self.transport.abort()
            return
        self._counted = self._opening = True
        self._key = key
        self.refusal = why

    def opened(self) -> None:
        """Its handshake is done: it no longer counts as opening (its address's open ones count it)."""
        if self._opening:
            self._opening = False
            self.gate.opened(self._key)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.opened()
        if self._counted:
            self._counted = False
            self.gate.closed()


class _Framing:
    """The bytes of text frames that go to many connections, made once.

    A server's frames are not masked, and with no compression (``serve(...,
    compression=None)``) no extension rewrites them, so a frame's bytes are
    the same on every connection, and nothing in websockets' state depends on
    writing an unfragmented frame: ``Protocol.send_text`` only serializes it.
    The spectator feed hands the same tuple of frames to all its readers at
    one place: the first frames it, the others reuse the bytes (a fifth of a
    spectator's write).
    """

    def __init__(self) -> None:
        self._frames: Sequence[bytes] = ()
        self._wire = b""

    def wire(self, frames: Sequence[bytes]) -> bytes:
        if frames is not self._frames:
            self._frames = frames  # held, so no other sequence can take its identity
            self._wire = text_frame(frames[0]) if len(frames) == 1 else b"".join(map(text_frame, frames))
        return self._wire


def text_frame(payload: bytes) -> bytes:
    """The bytes of a final, unmasked text frame (RFC 6455, 5.2): ``Frame(TEXT, payload).serialize(mask=False)``.

    Written out because every frame the server sends is one, and building a
    websockets ``Frame`` to serialize it was half the cost of writing a move's
    frames (py-spy, docs/benchmarks.md).
    """
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 0x10000:
        return b"\x81\x7e" + size.to_bytes(2, "big") + payload
    return b"\x81\x7f" + size.to_bytes(8, "big") + payload


_FRAMING = _Framing()


class WriteBatch:
    """The connections sent frames during this turn of the event loop, written at its end.

    Moves are decided in batches (the store commits the appends of one turn
    together), and each racer then gets their own ack and the opponent's
    progress in the same turn: one write for both instead of one each, the
    system call being a large part of a move's server time
    (docs/benchmarks.md). A frame waits at most for the turn to end.
    """

    def __init__(self) -> None:
        self._waiting: list[Connection] = []

    def add(self, conn: Connection) -> None:
        if not self._waiting:
            asyncio.get_running_loop().call_soon(self._write)
        self._waiting.append(conn)

    def _write(self) -> None:
        waiting, self._waiting = self._waiting, []
        for conn in waiting:
            conn.flush()


class Connection:
    """One WebSocket client: identity, where it sits, and its outbox.

    Frames sent during a turn of the event loop are written at its end
    (``WriteBatch``), in one write when nothing waits before them and the
    socket keeps up (the common case: no task switch, no queue); otherwise
    they join the outbox, which the writer task drains as the client reads.
    """

    _ids = itertools.count(1)

    def __init__(self, ws: ServerConnection, instance: str, settings: Settings, batch: WriteBatch) -> None:
        self.ws = ws
        self.id = connection_id(instance, next(self._ids))
        self.player: PlayerRecord | None = None
        self.version = 1  # the protocol it speaks: v1 until a hello asks for another
        self.live: LiveMatch | None = None
        self.seat: int | None = None
        self.request_host = ws.request.headers.get("Host") if ws.request else None
        self.rate = FrameRate(
            settings.rate_per_s,
            settings.burst,
            settings.flood_limit,
            settings.flood_window_s,
            time.monotonic(),
        )
        self._batch = batch
        self._pending: list[Sequence[bytes]] = []  # frames sent during this turn, to write at its end
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue(OUTBOX_LIMIT)
        self._outbox_bytes = 0  # the bytes of the frames in _outbox
        self._sending = False  # the writer task is inside ws.send
        self._writer = asyncio.create_task(self._drain())
        self._closer: asyncio.Task[None] | None = None
        self.flood_close: asyncio.Task[None] | None = None  # its close for flooding (1008), once begun

    def too_fast(self, count_refusal: Callable[[ErrorCode], None]) -> bool:
        """Whether a frame (a message or a ping) received now is refused, per ``FrameRate`` (server/flood.py).

        A refused frame is counted (``count_refusal``), told ``rate_limited``
        at most once a second, and a flood closed with 1008; once that close
        has begun, every frame is refused, uncounted, and the socket is dropped
        if the client has not answered the close within ``FLOOD_CLOSE_S``.
        """
        if self.flood_close is not None:
            return True
        verdict = self.rate.frame(time.monotonic())
        if verdict is Verdict.RUN:
            return False
        count_refusal(ErrorCode.RATE_LIMITED)
        if verdict is Verdict.CLOSE:
            self.ws.close_timeout = FLOOD_CLOSE_S  # read when the close begins
            self.flood_close = asyncio.create_task(self.ws.close(CLOSE_POLICY, "flooding"))
        elif verdict is Verdict.TELL:
            self.send(p.Error(code=ErrorCode.RATE_LIMITED, message="too many messages; slow down"))
        return True

    def send(self, message: p.Outgoing) -> None:
        self.send_many((p.encode(message),))

    def send_many(self, frames: Sequence[bytes]) -> None:
        """Text frames in order, written at the end of this turn of the event loop (``flush``)."""
        if not self._pending:
            self._batch.add(self)
        self._pending.append(frames)

    def flush(self) -> None:
        """Write the frames sent this turn: in one write, when nothing is queued before them.

        A connection whose unsent bytes (the socket's buffer and the outbox)
        would pass ``OUTBOX_BYTES`` is closed instead (too far behind): its
        requests' answers count, not only what it is sent unasked.
        """
        pending, self._pending = self._pending, []
        ws = self.ws
        transport = ws.transport
        unsent = self._outbox_bytes + (transport.get_write_buffer_size() if transport is not None else 0)
        if (
            not self._sending
            and unsent < WRITE_BUFFER_LIMIT
            and self._outbox.empty()
            and transport is not None
            and ws.protocol.state is State.OPEN
        ):
            wire = _FRAMING.wire
            data = wire(pending[0]) if len(pending) == 1 else b"".join(map(wire, pending))
            if unsent + len(data) <= OUTBOX_BYTES:
                transport.write(data)
                return
        for frames in pending:
            for data in frames:
                unsent += len(data)
                if unsent > OUTBOX_BYTES or self._outbox.full():
                    self.close(CLOSE_TRY_AGAIN, "too far behind; resume to catch up")
                    return
                self._outbox.put_nowait(data)
                self._outbox_bytes += len(data)

    def close(self, code: int, reason: str) -> None:
        if self._closer is None:
            self._closer = asyncio.create_task(self._close_after_outbox(code, reason))

    async def _close_after_outbox(self, code: int, reason: str) -> None:
        if self._pending:
            self.flush()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._outbox.join(), 2)
        await self.ws.close(code, reason)

    async def _drain(self) -> None:
        try:
            while True:
                data = await self._outbox.get()
                self._outbox_bytes -= len(data)
                self._sending = True
                await self.ws.send(data, text=True)
                self._sending = False
                self._outbox.task_done()
        except (ConnectionClosed, asyncio.CancelledError):
            pass

    async def stop_writing(self) -> None:
        """The connection is over: stop its writer, and a close still waiting for the outbox."""
        tasks = [self._writer] if self._closer is None else [self._writer, self._closer]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def read_frames(
    conn: Connection,
    dispatch: Callable[[Connection, p.ClientMessage], Awaitable[None]],
    count_refusal: Callable[[ErrorCode], None],
) -> None:
    """Run the connection's messages in order until it closes; refuse what is malformed or too fast.

    Too fast is ``FrameRate``'s to say (server/flood.py), for its messages
    and its pings and fragments alike (``Socket.on_frame``): a flood is closed with 1008.
    """
    ws = conn.ws
    socket = ws if isinstance(ws, Socket) else None
    if socket is not None:
        socket.on_frame = partial(conn.too_fast, count_refusal)
    try:
        async for frame in ws:
            if conn.too_fast(count_refusal):
                continue  # keep reading while a flood closes, or a full receive queue stalls the handshake
            try:
                message = p.parse_client(frame)
            except Refused as exc:
                count_refusal(exc.code)
                conn.send(p.Error(code=exc.code, message=exc.message))
                continue
            await dispatch(conn, message)
    except ConnectionClosed:
        pass
    finally:
        if socket is not None:
            socket.on_frame = None
        if conn.flood_close is not None:
            await asyncio.gather(conn.flood_close, return_exceptions=True)
