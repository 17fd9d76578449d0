"""The WebSocket server: connections, message routing, HTTP on the same port.

Each connection reads frames in order and runs one command at a time, so a
player's moves are decided in the order sent. Writes go through a bounded
per-connection outbox drained by its own task: a slow reader can never stall
a broadcast to the others, and one that falls too far behind is closed (it
can resume and miss nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import json
import logging
import mimetypes
import os
import re
import secrets
import time
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State

from . import daily, reach, stats
from . import protocol as p
from .bus import Bus, open_bus
from .engine import Game
from .errors import Conflict, ErrorCode, Refused, StoreUnavailable
from .hub import CLOSE_TRY_AGAIN, Hub, LiveMatch, connection_id, new_code, new_token
from .match import DEFAULT_GRACE_MS, Duplicate, Match
from .match.events import SeatTaken
from .match.render import missed_events, resumed, watching
from .match.state import hash_token
from .protocol import now_ms
from .replay import replay_json, verified_result
from .solving import Solving
from .store import BoardRow, PlayerRecord, Store, open_store

log = logging.getLogger(__name__)
HEARTBEAT_S = 2.0  # how often a process says it is alive ...
INSTANCE_TTL_MS = 6_000  # ... and how long the others wait, without news, to count it dead
#: A lobby never started is deleted from the store this long after it opened (as Redis lets
#: an undecided match's keys expire: ``UNDECIDED_TTL_S``).
FORGET_LOBBIES_AFTER_MS = 24 * 3600 * 1000
ORPHAN_BEATS = 3  # every how many beats a process looks for races nobody alive looks after
#: The web page's own paths (``route()`` in client/web/js/app.js): each is served index.html.
_PAGE_ROUTE = re.compile(
    rf"/(practice|rules|daily(/\d{{4}}-\d{{2}}-\d{{2}})?|stats(/[A-Za-z0-9_-]{{1,64}})?"
    rf"|[mwr]/[{p.CODE_ALPHABET}{p.CODE_ALPHABET.lower()}]{{{p.CODE_LENGTH}}})?/*"
)

WEB_ROOT = Path(__file__).resolve().parent.parent / "client" / "web"
OUTBOX_LIMIT = 2048  # queued frames before a reader counts as stalled
WRITE_BUFFER_LIMIT = 64 * 1024  # unsent bytes past which frames wait in the outbox instead
CLOSE_GOING_AWAY = 1001
CLOSE_POLICY = 1008


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8765
    store_url: str = "sqlite:///./data/grip.db"
    bus_url: str = "memory://"
    origins: tuple[str, ...] = ()  # empty: same-origin pages and non-browser clients only
    grace_ms: int = DEFAULT_GRACE_MS
    rate_per_s: float = 30.0
    burst: int = 60
    flood_limit: int = 200  # frames refused in a row before the connection is closed
    sweep_s: float = 30.0
    par_budget_s: float = 10.0  # the solver's time for a past daily deal's par
    par_nodes: int = 10**9
    web_root: Path = WEB_ROOT


def clean_name(raw: str | None, fallback: str = "Player") -> str:
    """A display name with no markup and no invisible characters, at most 24 characters.

    Unicode's "other" categories go along with the controls: bidi overrides
    would let a name read backwards across a leaderboard line, zero-width
    and soft-hyphen characters make a name that shows as nothing or as
    someone else's (emoji joined by a zero-width joiner fall apart: a small
    price).
    """
    text = unicodedata.normalize("NFC", raw or "")
    text = "".join(ch for ch in text if ch not in "<>&\"'`" and unicodedata.category(ch)[0] != "C")
    text = " ".join(text.split())[:24]
    return text or fallback


class RateLimiter:
    """Token bucket: ``rate`` frames a second on average, bursts up to ``burst``."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self.tokens = float(burst)
        self.stamp = time.monotonic()
        self.refused_in_a_row = 0

    def allow(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            self.refused_in_a_row = 0
            return True
        self.refused_in_a_row += 1
        return False


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
            self._wire = b"".join(Frame(Opcode.TEXT, f).serialize(mask=False) for f in frames)
        return self._wire


_FRAMING = _Framing()


class Connection:
    """One WebSocket client: identity, where it sits, and its outbox.

    A frame is written at once when nothing waits before it and the socket
    keeps up (the common case: no task switch, no queue); otherwise it joins
    the outbox, which the writer task drains as the client reads.
    """

    _ids = itertools.count(1)

    def __init__(self, ws: ServerConnection, instance: str, settings: Settings) -> None:
        self.ws = ws
        self.id = connection_id(instance, next(self._ids))
        self.player: PlayerRecord | None = None
        self.live: LiveMatch | None = None
        self.seat: int | None = None
        self.limiter = RateLimiter(settings.rate_per_s, settings.burst)
        self._outbox: asyncio.Queue[bytes] = asyncio.Queue(OUTBOX_LIMIT)
        self._sending = False  # the writer task is inside ws.send
        self._writer = asyncio.create_task(self._drain())
        self._closer: asyncio.Task[None] | None = None

    def send(self, message: p.Outgoing) -> None:
        self.send_many((p.encode(message),))

    def send_many(self, frames: Sequence[bytes]) -> None:
        """Text frames in order: written now, in one write, when nothing is queued before them."""
        ws = self.ws
        if (
            not self._sending
            and self._outbox.empty()
            and self._keeps_up()
            and ws.protocol.state is State.OPEN
        ):
            ws.transport.write(_FRAMING.wire(frames))
            return
        for data in frames:
            try:
                self._outbox.put_nowait(data)
            except asyncio.QueueFull:
                self.close(CLOSE_TRY_AGAIN, "too far behind; resume to catch up")
                return

    def _keeps_up(self) -> bool:
        transport = self.ws.transport
        return transport is not None and transport.get_write_buffer_size() < WRITE_BUFFER_LIMIT

    def close(self, code: int, reason: str) -> None:
        if self._closer is None:
            self._closer = asyncio.create_task(self._close_after_outbox(code, reason))

    async def _close_after_outbox(self, code: int, reason: str) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._outbox.join(), 2)
        await self.ws.close(code, reason)

    async def _drain(self) -> None:
        try:
            while True:
                data = await self._outbox.get()
                self._sending = True
                await self.ws.send(data, text=True)
                self._sending = False
                self._outbox.task_done()
        except (ConnectionClosed, asyncio.CancelledError):
            pass

    async def flush_and_stop(self) -> None:
        """The connection is over: stop its writer, and a close still waiting for the outbox."""
        tasks = [self._writer] if self._closer is None else [self._writer, self._closer]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class Metrics:
    def __init__(self, app: App) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        Gauge("grip_connections", "open WebSocket connections", registry=r).set_function(
            lambda: len(app.connections)
        )
        self.matches = Gauge("grip_matches", "matches held by this process", ["status"], registry=r)
        self.moves = Counter("grip_moves", "moves accepted", registry=r)
        self.rejects = Counter("grip_rejects", "commands refused, by code", ["code"], registry=r)
        self.ack_latency = Histogram(
            "grip_ack_latency_seconds",
            "move received to ack queued",
            registry=r,
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
        )
        self._app = app

    def render(self) -> bytes:
        counts: dict[str, int] = {"lobby": 0, "countdown": 0, "playing": 0, "finished": 0}
        for lm in self._app.hub.live.values():
            counts[lm.match.status] += 1
        for status, n in counts.items():
            self.matches.labels(status).set(n)
        return generate_latest(self.registry)


Handler = Callable[[Connection, Any], Awaitable[None]]


class App:
    def __init__(self, settings: Settings, store: Store, bus: Bus, clock: Callable[[], int] = now_ms) -> None:
        self.settings = settings
        self.store = store
        self.bus = bus
        self.clock = clock
        self.instance = secrets.token_hex(4)
        self.daily_secret = ""  # loaded in start()
        self.solving = Solving(store, settings.par_budget_s, settings.par_nodes)
        self.hub = Hub(store, bus, clock=clock, grace_ms=settings.grace_ms)
        self.connections: set[Connection] = set()
        self.metrics = Metrics(self)
        self.server: Server | None = None
        self._upkeep: list[asyncio.Task[None]] = []
        self._handlers: dict[str, Handler] = {
            "hello": self.on_hello,
            "create": self.on_create,
            "join": self.on_join,
            "watch": self.on_watch,
            "resume": self.on_resume,
            "ready": self.on_ready,
            "move": self.on_move,
            "finish": self.on_finish,
            "resign": self.on_resign,
            "rematch": self.on_rematch,
            "leave": self.on_leave,
            "hint": self.on_hint,
            "undo": self.on_undo,
            "daily": self.on_daily,
            "leaderboard": self.on_leaderboard,
            "days": self.on_days,
            "replay": self.on_replay,
            "stats": self.on_stats,
            "history": self.on_history,
        }

    # ------------------------------------------------------------ serving

    async def start(self) -> Server:
        self.daily_secret = await self._load_daily_secret()
        self.server = await serve(
            self.handle,
            self.settings.host,
            self.settings.port,
            process_request=self.process_request,
            max_size=p.MAX_FRAME_BYTES,
            compression=None,  # deflate costs ~100 KiB a connection for frames this small
            server_header=None,
        )
        await self.store.heartbeat(self.instance, INSTANCE_TTL_MS)  # before the others could wonder
        await self.hub.take_in_orphans()  # embedded: every race its previous run left, timers and all
        self._upkeep = [
            asyncio.create_task(self._sweep_forever()),
            asyncio.create_task(self._heartbeat_forever()),
        ]
        return self.server

    async def _load_daily_secret(self) -> str:
        """From the environment (shared by every replica), else stored on first start."""
        secret = os.environ.get("DAILY_SECRET") or await self.store.setting(
            "daily_secret", secrets.token_hex(32)
        )
        assert secret is not None
        return secret

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = self.server.sockets[0].getsockname()[1]
        return port

    async def shutdown(self) -> None:
        """Tell every client, close them with 1001, then close the backends."""
        for task in self._upkeep:
            task.cancel()
        for conn in list(self.connections):
            conn.send(
                p.Error(code=p.ErrorCode.UNAVAILABLE, message="the server is shutting down; reconnect soon")
            )
            conn.close(CLOSE_GOING_AWAY, "server shutting down")
        if self.server is not None:
            self.server.close(close_connections=False)
            try:
                await asyncio.wait_for(self.server.wait_closed(), 5)
            except TimeoutError:  # a client that never answers the close: drop it
                log.warning("%d connections did not close in time; aborting them", len(self.connections))
                for conn in list(self.connections):
                    conn.ws.transport.abort()
                await asyncio.wait_for(self.server.wait_closed(), 5)
        await self.hub.close()
        await self.solving.close()
        await self.bus.close()
        await self.store.close()

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_s)
            self.hub.sweep()
            with contextlib.suppress(StoreUnavailable):  # the next sweep tries again
                await self.store.forget_lobbies(self.clock() - FORGET_LOBBIES_AFTER_MS)

    async def _heartbeat_forever(self) -> None:
        """Renew this process's heartbeat; take in orphaned races, let go of the dead's seats.

        Only once this process's own heartbeat has been renewed without a break
        for a whole ``INSTANCE_TTL_MS``: after the store was away, every
        heartbeat may have run out, and the others need one round to renew theirs.
        Orphans are looked for every ``ORPHAN_BEATS`` beats only (it reads
        every running match's seat leases): a dead process's heartbeat takes
        about that long to run out anyway.
        """
        steady_since: float | None = time.monotonic()
        beats = 0
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                await self.store.heartbeat(self.instance, INSTANCE_TTL_MS)
                steady_since = steady_since or time.monotonic()
                if time.monotonic() - steady_since >= INSTANCE_TTL_MS / 1000:
                    beats += 1
                    if beats % ORPHAN_BEATS == 0:
                        await self.hub.take_in_orphans()
                    await self.hub.let_go_of_the_dead(self.instance)
            except StoreUnavailable:
                steady_since = None

    # ------------------------------------------------------------ HTTP

    async def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            if not self._origin_ok(request):
                return connection.respond(403, "origin not allowed\n")
            return None
        path = urlsplit(request.path).path
        if path == "/healthz":
            return await self._healthz()
        if path == "/metrics":
            return _response(200, self.metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
        if path.startswith("/api/replay/"):
            status, body = await replay_json(self.store, path, self.clock())
            return _response(status, body, "application/json")
        return self._static(path)

    def _origin_ok(self, request: Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:
            return True  # not a browser: no cross-site hijacking to guard against
        if self.settings.origins:
            return origin in self.settings.origins
        return urlsplit(origin).netloc == request.headers.get("Host")

    async def _healthz(self) -> Response:
        status = {"bus": bool(self.bus.healthy), "store": await self.store.ping()}
        ok = all(status.values())
        body = json.dumps({"status": "ok" if ok else "degraded", **status}).encode()
        return _response(200 if ok else 503, body, "application/json")

    def _static(self, path: str) -> Response:
        root = self.settings.web_root.resolve()
        rel = path.lstrip("/") or "index.html"
        target = (root / rel).resolve()
        if not target.is_relative_to(root):
            return _response(404, b"not found\n", "text/plain")
        if not target.is_file() and _PAGE_ROUTE.fullmatch(path):
            target = root / "index.html"  # the page routes these itself (route() in client/web/js/app.js)
        if not target.is_file():
            return _response(404, b"not found\n", "text/plain")
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind == "application/javascript":
            kind += "; charset=utf-8"
        return _response(200, target.read_bytes(), kind)

    # ---------------------------------------------------------- websocket

    async def handle(self, ws: ServerConnection) -> None:
        conn = Connection(ws, self.instance, self.settings)
        self.connections.add(conn)
        closing: asyncio.Task[None] | None = None
        try:
            async for frame in ws:
                if closing is not None:
                    continue  # keep reading, or a full receive queue stalls the close handshake
                if not conn.limiter.allow():
                    self.metrics.rejects.labels("rate_limited").inc()
                    if conn.limiter.refused_in_a_row >= self.settings.flood_limit:
                        closing = asyncio.create_task(ws.close(CLOSE_POLICY, "flooding"))
                        continue
                    conn.send(p.Error(code=p.ErrorCode.RATE_LIMITED, message="too many messages; slow down"))
                    continue
                try:
                    message = p.parse_client(frame)
                except Refused as exc:
                    self.metrics.rejects.labels(exc.code.value).inc()
                    conn.send(p.Error(code=exc.code, message=exc.message))
                    continue
                await self.dispatch(conn, message)
        except ConnectionClosed:
            pass
        finally:
            if closing is not None:
                await asyncio.gather(closing, return_exceptions=True)
            self.connections.discard(conn)
            await self._unbind(conn)
            await conn.flush_and_stop()

    async def dispatch(self, conn: Connection, message: Any) -> None:
        """Run one command; whatever goes wrong becomes a typed answer, never a dropped connection."""
        try:
            await self._handlers[message.type](conn, message)
        except Refused as exc:
            self._refuse(conn, message, exc.code, exc.message)
        except Exception:
            log.exception("%s failed for connection %s", message.type, conn.id)
            self._refuse(
                conn, message, p.ErrorCode.UNAVAILABLE, "something went wrong on our side; try again"
            )

    def _refuse(self, conn: Connection, message: Any, code: p.ErrorCode, text: str) -> None:
        self.metrics.rejects.labels(code.value).inc()
        if isinstance(message, p.MoveMsg):
            view = conn.live.match.view(conn.seat) if conn.live and conn.seat is not None else None
            conn.send(p.Rejected(seq=message.seq, code=code, message=text, view=view))
        else:
            conn.send(p.Error(code=code, message=text))

    # ------------------------------------------------------- binding

    async def _unbind(self, conn: Connection) -> None:
        lm, conn.live = conn.live, None
        conn.seat = None
        if lm is None:
            return
        seat = self.hub.detach(lm, conn)
        if seat is not None:
            await self.hub.record_connection(lm, seat, conn.id, connected=False)

    async def _take_seat(self, conn: Connection, lm: LiveMatch, seat: int) -> None:
        if conn.live is not lm or conn.seat != seat:
            await self._unbind(conn)
        conn.live, conn.seat = lm, seat
        self.hub.attach_seat(lm, seat, conn)
        await self.hub.execute(lm, lambda m: m.decide_connect(seat, conn.id, self.clock()))

    def _seated(self, conn: Connection) -> tuple[LiveMatch, int]:
        if conn.live is None or conn.seat is None:
            raise Refused(ErrorCode.WRONG_PHASE, "create or join a match first")
        if conn.live.seats.get(conn.seat) is not conn:
            raise Refused(ErrorCode.TAKEN_OVER, "this seat was taken over by a newer connection")
        return conn.live, conn.seat

    def _welcome(self, conn: Connection, record: PlayerRecord, key: str) -> None:
        """The connection is ``record`` now; tell it, with where others reach this server for the
        links it shares (server/reach.py)."""
        conn.player = record
        request = conn.ws.request
        share = reach.share_host(
            self.settings.host, self.port, request.headers.get("Host") if request else None
        )
        conn.send(p.Welcome(player=record.id, key=key, name=record.name, share_host=share))

    def _name(self, conn: Connection, given: str | None) -> str:
        return clean_name(given or (conn.player.name if conn.player else None))

    # ------------------------------------------------------- handlers

    async def on_hello(self, conn: Connection, msg: p.Hello) -> None:
        """A new identity, or the one ``player``/``key`` prove; a wrong key changes nothing."""
        if msg.player is None:
            key = new_token()
            record = PlayerRecord(
                secrets.token_urlsafe(12), hash_token(key), clean_name(msg.name), self.clock()
            )
            await self.store.save_player(record)
            self._welcome(conn, record, key)
            return
        found = await self.store.player(msg.player)
        key = msg.key or ""
        if found is None or not hmac.compare_digest(found.key_hash, hash_token(key)):
            raise Refused(
                p.ErrorCode.BAD_KEY,
                "that player id and key do not match; send hello without them for a new identity",
            )
        record = found
        if msg.name is not None and clean_name(msg.name) != record.name:
            record = PlayerRecord(record.id, record.key_hash, clean_name(msg.name), record.created_at)
            await self.store.save_player(record)
        self._welcome(conn, record, key)

    async def on_create(self, conn: Connection, msg: p.Create) -> None:
        seed = msg.seed or (str(msg.deal) if msg.deal is not None else secrets.token_hex(8))
        token = new_token()
        code, day, ranked = new_code(), None, False
        if msg.daily:
            day = daily.day_of(self.clock())
            seed, ranked = daily.seed(self.daily_secret, day), await self._daily_entry(conn, msg, day, code)
        events = Match.open(
            code,
            variant=msg.variant,
            seed=seed,
            seats=msg.seats,
            time_limit_s=msg.time_limit_s,
            name=self._name(conn, msg.name),
            token=token,
            player=conn.player.id if conn.player else None,
            now=self.clock(),
            practice=msg.seats == 1 and not ranked,
            daily=day,
            ranked=ranked,
            chosen=day is None and (msg.seed is not None or msg.deal is not None),
        )
        try:
            lm = await self.hub.open(events)
        except Conflict:  # one code in 25^8 is taken: ask again
            raise Refused(ErrorCode.UNAVAILABLE, "that match code was taken; try again") from None
        conn.send(p.Seated(type="created", match=lm.match.id, seat=0, token=token))
        await self._take_seat(conn, lm, 0)
        if msg.bot is not None:  # the protocol allows a bot only with a second seat
            from .bots import seat_bot  # "race a bot": it takes seat 1 through dispatch, like a person

            await seat_bot(self, lm, msg.bot)

    async def _daily_entry(self, conn: Connection, msg: p.Create, day: str, code: str) -> bool:
        """Whether this daily game is ranked: one ranked attempt a day, practice only after it."""
        if conn.player is None:
            raise Refused(ErrorCode.BAD_KEY, "say hello first: the daily challenge needs your player id")
        if msg.variant != "classic" or msg.bot is not None:
            raise Refused(
                p.ErrorCode.NOT_ALLOWED, "the daily challenge is classic, against a person or alone"
            )
        used = await self.store.daily_attempt(day, conn.player.id)
        if used is None and msg.ranked is not False:
            await self._claim_daily(day, conn.player.id, code)
            return True
        if used is not None and msg.ranked:
            raise Refused(
                p.ErrorCode.ALREADY_PLAYED, f"you have played the {day} daily; replays open tomorrow"
            )
        await self._check_attempt_behind(day, conn.player.id)
        return False

    async def _daily_join(self, conn: Connection, m: Match) -> None:
        """A seat in a daily race: ranked, it takes the joiner's attempt; unranked, it comes after it.

        Otherwise an unranked race would show the day's deal to someone whose
        ranked attempt is still to come.
        """
        if m.daily is None or (not m.ranked and daily.is_over(m.daily, self.clock())):
            return
        if conn.player is None:
            raise Refused(ErrorCode.BAD_KEY, "say hello first: the daily challenge needs your player id")
        if not m.ranked:
            await self._check_attempt_behind(m.daily, conn.player.id)
        elif m.status == "lobby" and any(s is None for s in m.seats):
            await self._claim_daily(m.daily, conn.player.id, m.id)

    async def _check_attempt_behind(self, day: str, player: str) -> None:
        """Refuse unranked play of the day's deal until the player's ranked attempt is over.

        Claiming the attempt is not enough: its lobby may wait half an hour
        and its game run for the time limit, and a practice game (hints,
        undo) beside it would rehearse the very deal it is played on.
        """
        code = await self.store.daily_attempt(day, player)
        if code is None:
            raise Refused(ErrorCode.NOT_ALLOWED, "play your ranked attempt first; practice comes after")
        try:
            over = (await self.hub.get(code)).match.done_for(player)
        except Refused as exc:
            if exc.code is not p.ErrorCode.NOT_FOUND:
                raise
            over = True  # expired: a lobby nobody started, or a result long decided
        if not over:
            raise Refused(
                p.ErrorCode.NOT_ALLOWED,
                f"finish your ranked attempt (match {code}) first; practice comes after",
            )

    async def _claim_daily(self, day: str, player: str, code: str) -> None:
        if await self.store.claim_daily(day, player, code) != code:
            raise Refused(
                p.ErrorCode.ALREADY_PLAYED, f"you have played the {day} daily; replays open tomorrow"
            )

    async def on_join(self, conn: Connection, msg: p.Join) -> None:
        lm = await self.hub.get(msg.match)
        await self._daily_join(conn, lm.match)
        token = new_token()
        player = conn.player.id if conn.player else None
        name = self._name(conn, msg.name)
        events = await self.hub.execute(lm, lambda m: m.decide_join(name, token, player, self.clock()))
        assert isinstance(events, list) and isinstance(events[0], SeatTaken)
        seat = events[0].seat
        conn.send(p.Seated(type="joined", match=lm.match.id, seat=seat, token=token))
        await self._take_seat(conn, lm, seat)

    async def on_watch(self, conn: Connection, msg: p.Watch) -> None:
        lm = await self.hub.get(msg.match)
        if lm.match.daily and not daily.is_over(lm.match.daily, self.clock()):
            raise Refused(
                p.ErrorCode.NOT_ALLOWED,
                "daily games cannot be watched while their day runs; replays open when it is over",
            )
        lm.match.check_watcher(
            conn.player.id if conn.player else None, conn.seat if conn.live is lm else None
        )
        await self._unbind(conn)
        conn.live = lm
        # No await between the snapshot and joining the audience: nothing can slip between.
        conn.send(watching(lm.match, self.clock()))
        lm.spectators.add(conn)

    async def on_resume(self, conn: Connection, msg: p.Resume) -> None:
        lm = await self.hub.get(msg.match)
        seat = lm.match.seat_of_token(msg.token)
        await self._unbind(conn)
        m = lm.match
        log_events = await self.store.events(msg.match)
        while log_events and log_events[-1].ev < m.ev:  # applied meanwhile: read the log again
            log_events = await self.store.events(msg.match)
        missed = missed_events(
            [e for e in log_events if e.ev <= m.ev], seat, msg.last_ev, self.settings.grace_ms
        )
        conn.live, conn.seat = lm, seat
        self.hub.attach_seat(lm, seat, conn)
        conn.send(resumed(m, seat, missed, self.clock()))
        await self.hub.execute(lm, lambda m: m.decide_connect(seat, conn.id, self.clock()))

    async def on_ready(self, conn: Connection, msg: p.Ready) -> None:
        lm, seat = self._seated(conn)
        await self.hub.execute(lm, lambda m: m.decide_ready(seat, self.clock()))

    async def on_move(self, conn: Connection, msg: p.MoveMsg) -> None:
        lm, seat = self._seated(conn)
        started = time.perf_counter()
        decision = await self.hub.execute(lm, lambda m: m.decide_move(seat, msg.seq, msg.move, self.clock()))
        if isinstance(decision, Duplicate):
            conn.send(decision.ack)
            return
        self.metrics.moves.inc()
        self.metrics.ack_latency.observe(time.perf_counter() - started)

    async def on_finish(self, conn: Connection, msg: p.Finish) -> None:
        lm, seat = self._seated(conn)
        await self.hub.execute(lm, lambda m: m.decide_finish(seat, self.clock()))

    async def on_resign(self, conn: Connection, msg: p.Resign) -> None:
        lm, seat = self._seated(conn)
        await self.hub.execute(lm, lambda m: m.decide_finish(seat, self.clock(), "resign"))

    async def on_rematch(self, conn: Connection, msg: p.Rematch) -> None:
        lm, seat = self._seated(conn)
        await self.hub.execute(lm, lambda m: m.decide_rematch(seat, new_code(), self.clock()))

    async def on_leave(self, conn: Connection, msg: p.Leave) -> None:
        lm, seat = self._seated(conn)
        await self.hub.execute(lm, lambda m: m.decide_leave(seat, self.clock()))
        self.hub.detach(lm, conn)
        conn.live, conn.seat = None, None

    async def on_hint(self, conn: Connection, msg: p.HintRequest) -> None:
        lm, seat = self._seated(conn)
        conn.send(p.Hint(move=await self.solving.hint(_practice_game(lm.match, seat))))

    async def _day_info(self, day: str, players: int) -> p.DayInfo:
        """A day's public facts: the seed and its par only once the day is over."""
        seed = daily.seed(self.daily_secret, day)
        revealed = daily.is_over(day, self.clock())
        return p.DayInfo(
            day=day,
            commitment=daily.commitment(seed),
            seed=seed if revealed else None,
            players=players,
            par=await self.solving.par(day, seed) if revealed else None,
        )

    async def on_daily(self, conn: Connection, msg: p.DailyRequest) -> None:
        today = daily.day_of(self.clock())
        yesterday = daily.previous_day(today)
        counts = [
            sum((await self.store.leaderboard(d, None, limit=1)).distribution.values())
            for d in (today, yesterday)
        ]
        attempt = await self.store.daily_attempt(today, conn.player.id) if conn.player else None
        conn.send(
            p.DailyInfo(
                today=await self._day_info(today, counts[0]),
                variant="classic",
                attempt=attempt,
                previous=await self._day_info(yesterday, counts[1]),
            )
        )

    async def on_leaderboard(self, conn: Connection, msg: p.LeaderboardRequest) -> None:
        try:
            daily.parse_day(msg.day)
        except ValueError:
            raise Refused(ErrorCode.BAD_MESSAGE, f"{msg.day!r} is not a calendar day") from None
        if msg.day > daily.day_of(self.clock()):
            raise Refused(ErrorCode.NOT_YET, f"the {msg.day} daily has not begun")
        board = await self.store.leaderboard(msg.day, conn.player.id if conn.player else None)
        conn.send(
            p.Leaderboard(
                day=await self._day_info(msg.day, sum(board.distribution.values())),
                top=[_entry(rank, row) for rank, row in board.ranked_top()],
                you=_entry(*board.you) if board.you else None,
                distribution=[
                    p.ScoreCount(score=s, players=n) for s, n in sorted(board.distribution.items())
                ],
            )
        )

    async def on_days(self, conn: Connection, msg: p.DaysRequest) -> None:
        before = msg.before or daily.day_of(self.clock())
        days = await self.store.daily_days(before, msg.limit)
        conn.send(p.Days(days=[await self._day_info(day, n) for day, n in days]))

    async def on_replay(self, conn: Connection, msg: p.ReplayRequest) -> None:
        result = await verified_result(self.store, msg.match, self.clock())
        assert result.seed is not None
        conn.send(
            p.Replay(
                match=result.match,
                variant=result.variant,
                seed=result.seed,
                daily=result.daily,
                seats=[
                    p.ReplaySeat(seat=s.seat, name=s.name, score=s.score, moves=s.moves) for s in result.seats
                ],
            )
        )

    async def _subject(self, conn: Connection, player: str | None) -> PlayerRecord:
        """Whose figures: the asker's own (after hello), or a named player's."""
        if player is None:
            if conn.player is None:
                raise Refused(ErrorCode.BAD_KEY, "say hello first, or name a player")
            return conn.player
        record = await self.store.player(player)
        if record is None:
            raise Refused(ErrorCode.NOT_FOUND, f"no player {player}")
        return record

    async def on_stats(self, conn: Connection, msg: p.StatsRequest) -> None:
        who = await self._subject(conn, msg.player)
        results = await self.store.player_results(who.id)
        conn.send(stats.compute(who.id, who.name, results, daily.day_of(self.clock())))

    async def on_history(self, conn: Connection, msg: p.HistoryRequest) -> None:
        who = await self._subject(conn, msg.player)
        before = stats.parse_cursor(msg.before) if msg.before else None
        results = await self.store.player_results(who.id, before, msg.limit + 1)
        page = results[: msg.limit]
        conn.send(
            p.History(
                player=who.id,
                games=[stats.history_entry(r, who.id) for r in page],
                next=stats.cursor(page[-1]) if len(results) > msg.limit else None,
            )
        )

    async def on_undo(self, conn: Connection, msg: p.UndoRequest) -> None:
        lm, seat = self._seated(conn)
        await self.hub.execute(lm, lambda m: m.decide_undo(seat, self.clock()))


def _practice_game(match: Match, seat: int) -> Game:
    if not match.practice:
        raise Refused(ErrorCode.NOT_ALLOWED, "hints are for practice games only")
    game = match.seat(seat).game
    if game is None or match.status != "playing" or match.seat(seat).ended is not None:
        raise Refused(ErrorCode.WRONG_PHASE, "your game is not being played")
    return game


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _entry(rank: int, row: BoardRow) -> p.BoardEntry:
    return p.BoardEntry(
        rank=rank, player=row.player, name=row.name, score=row.score, time_ms=row.time_ms, match=row.match
    )


def _response(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    headers["Cache-Control"] = "no-cache"
    return Response(status, HTTPStatus(status).phrase, headers, body)


async def run(settings: Settings, ready: Callable[[App], None] | None = None) -> None:
    """Serve until SIGTERM/SIGINT, then shut down cleanly."""
    import signal

    app = App(settings, open_store(settings.store_url), open_bus(settings.bus_url))
    await app.start()
    stop = asyncio.get_running_loop().create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, _resolve, stop)
    if ready:
        ready(app)
    try:
        await stop
    finally:
        await app.shutdown()
