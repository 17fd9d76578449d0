"""A server process: its parts put together, one port for WebSocket and HTTP.

``App`` builds the parts (store, bus, hub, handlers, solver workers) and
serves them: each WebSocket connection is read by ``server/transport.py``,
each message run by its handler (``server/handlers/``), plain HTTP answered
by ``server/http.py``. A handler's refusal becomes the client's ``error``
here, whatever raised it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import sys
from collections.abc import Callable
from functools import partial
from typing import Any, cast

from websockets.asyncio.server import Server, ServerConnection, serve

from . import handlers
from . import protocol as p
from .addresses import Crowded, Gate, PerAddress
from .bots import BotRaces
from .bus import Bus, open_bus
from .errors import ErrorCode, Refused, StoreUnavailable
from .handlers.ratings import RatingNews
from .holdings import Holdings
from .http import Http
from .hub import Hub
from .limits import open_limits
from .live_races import LiveRaces
from .liveness import Liveness
from .metrics import Metrics
from .protocol import now_ms
from .quick import QuickRaces
from .replay import Replays
from .seating import Client, unbind
from .settings import Settings as Settings
from .solving import Solving
from .store import Store, open_store
from .transport import CLOSE_POLICY, Connection, Socket, WriteBatch, read_frames

log = logging.getLogger(__name__)
#: A lobby never started is deleted from the store this long after it opened (as Redis lets
#: an undecided match's keys expire: ``UNDECIDED_TTL_S``).
FORGET_LOBBIES_AFTER_MS = 24 * 3600 * 1000
CLOSE_GOING_AWAY = 1001
#: Descriptors of the open-files limit kept from the game port's sockets (``Settings.max_sockets``):
#: the store, the bus's connections, the solver's workers, the log, the operator's port.
FD_RESERVE = 256


class App:
    def __init__(self, settings: Settings, store: Store, bus: Bus, clock: Callable[[], int] = now_ms) -> None:
        self.handlers = handlers.HANDLERS
        self.handlers.check()  # a client message without a handler: no server at all
        self.settings = settings
        self.store = store
        self.bus = bus
        self.clock = clock
        self.instance = secrets.token_hex(4)
        self.daily_secret = ""  # loaded in start()
        limits = open_limits(settings.store_url, store, clock)  # shared by the processes on one Redis

        def seconds() -> float:  # the matches opened and identities made count on the server's clock
            return clock() / 1000

        hints = limits("hints", settings.hints_per_min / 60, settings.hint_burst)  # by player
        self.solving = Solving(store, settings.par_budget_s, settings.par_nodes, hints)
        self.hub = Hub(store, bus, clock=clock, grace_ms=settings.grace_ms)
        self.liveness = Liveness(self.hub, store, self.instance)
        self.quick = QuickRaces(self)
        self.bots = BotRaces(self)
        self.resumes = limits("resumes", settings.resumes_per_min / 60, settings.resume_burst)  # by seat
        self.address_snapshots = limits(
            "snapshots", settings.address_snapshots_per_min / 60, settings.address_snapshot_burst
        )
        self.live_races = LiveRaces(store, clock, settings.live_every_s)
        self.hub.followers += [self.quick, self.live_races, RatingNews(self), Replays(store)]
        # Each open connection, with the task running its commands (shutdown may have to cancel one).
        self.connections: dict[Connection, asyncio.Task[None]] = {}
        self.writes = WriteBatch()  # the frames of one turn of the loop, one write per connection
        self.metrics = Metrics(self.connections, self.hub)
        self.addresses = PerAddress(
            settings.max_per_address,
            limits("identities", settings.identities_per_hour / 3600, settings.identity_burst, seconds),
        )
        self.holdings = Holdings(
            self.hub.holds,
            per_player=settings.games_per_player,
            per_address=settings.games_per_address,
            lobbies_per_address=settings.lobbies_per_address,
            opens=limits("opens", settings.matches_per_hour / 3600, settings.match_burst, seconds),
            address_opens=limits(
                "address_opens",
                settings.address_matches_per_hour / 3600,
                settings.address_match_burst,
                seconds,
            ),
        )
        self.lobbies: dict[str, tuple[str, str]] = {}  # the lobby each creator made last (handlers/seat.py)
        max_sockets, reserve = socket_budget(settings.max_sockets)
        self.gate = Gate(settings.opening_per_address, max_sockets, reserve)
        api = limits("api", settings.api_rate_per_s, settings.api_burst)  # by client address
        self.http = Http(settings, store, bus, self.metrics, clock, self.addresses, api)
        self.server: Server | None = None
        self.operator: Server | None = None  # the --metrics address's listener
        self._upkeep: list[asyncio.Task[None]] = []

    # ------------------------------------------------------------ serving

    async def start(self) -> Server:
        self.daily_secret = await self._load_daily_secret()
        # A factory where websockets types a class: Socket takes the gate first.
        sockets = partial(Socket, self.gate, self.settings.proxies, self.metrics.socket_refused)
        self.server = await serve(
            self.handle,
            self.settings.host,
            self.settings.port,
            create_connection=cast(type[ServerConnection], sockets),
            open_timeout=self.settings.open_timeout_s,
            process_request=self.http.process_request,
            max_size=p.MAX_FRAME_BYTES,
            compression=None,  # deflate costs ~100 KiB a connection for frames this small
            server_header=None,
        )
        if self.settings.metrics is not None:
            self.operator = await serve(
                _no_websocket,
                *self.settings.metrics,
                process_request=self.http.operator_request,
                server_header=None,
            )
        await self.liveness.beat()  # before the others could wonder
        await self.liveness.adopt_orphans()  # embedded: every race its previous run left, timers and all
        await self.quick.subscribe()
        self._upkeep = [
            asyncio.create_task(self._sweep_forever()),
            asyncio.create_task(self.liveness.run()),
            asyncio.create_task(self.quick.run()),
            asyncio.create_task(self.live_races.run()),
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
                p.Error(code=ErrorCode.UNAVAILABLE, message="the server is shutting down; reconnect soon")
            )
            conn.close(CLOSE_GOING_AWAY, "server shutting down")
        if self.operator is not None:
            self.operator.close()
            await self.operator.wait_closed()
        if self.server is not None:
            self.server.close(close_connections=False)
            try:
                await asyncio.wait_for(self.server.wait_closed(), 5)
            except TimeoutError:  # a client that never answers the close, or a command waiting its turn
                log.warning("%d connections did not close in time; aborting them", len(self.connections))
                for conn, task in list(self.connections.items()):
                    conn.ws.transport.abort()
                    task.cancel()  # a command that waits (a resume's turn) keeps its connection's task
                await asyncio.wait_for(self.server.wait_closed(), 5)
        await self.hub.close()
        await self.solving.close()
        await self.bus.close()
        await self.store.close()

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.sweep_s)
            self.hub.sweep()
            self.lobbies = {k: v for k, v in self.lobbies.items() if v[0] in self.hub.live}
            self.holdings.forget_gone()
            with contextlib.suppress(StoreUnavailable):  # the next sweep tries again
                await self.store.forget_lobbies(self.clock() - FORGET_LOBBIES_AFTER_MS)

    # ---------------------------------------------------------- websocket

    async def handle(self, ws: ServerConnection) -> None:
        cast(Socket, ws).opened()
        conn = Connection(ws, self.instance, self.settings, self.writes)
        if not self.addresses.opened(conn.id, self.http.client_key(ws, ws.request)):
            # Opened alongside others from its address since its handshake was let through.
            self.metrics.socket_refused(Crowded.CONNECTIONS, "close")
            await ws.close(CLOSE_POLICY, Crowded.CONNECTIONS.message)
            await conn.stop_writing()
            return
        self.connections[conn] = cast(asyncio.Task[None], asyncio.current_task())
        try:
            await read_frames(conn, self.dispatch, self.metrics.refused)
        finally:
            del self.connections[conn]
            self.addresses.closed(conn.id)
            self.live_races.stop(conn)
            await self.quick.leave(conn)
            await unbind(self, conn)
            await conn.stop_writing()

    async def dispatch(self, client: Client, message: p.ClientMessage) -> None:
        """Run one command; whatever goes wrong becomes a typed answer, never a dropped connection."""
        try:
            await self.handlers.run(self, client, message)
        except Refused as exc:
            self._refuse(client, message, exc.code, exc.message)
        except Exception:
            log.exception("%s failed for connection %s", message.type, client.id)
            self._refuse(
                client, message, ErrorCode.UNAVAILABLE, "something went wrong on our side; try again"
            )

    def _refuse(self, client: Client, message: Any, code: ErrorCode, text: str) -> None:
        self.metrics.refused(code)
        if isinstance(message, p.MoveMsg):
            client.send(rejected(client, message.seq, code, text))
        else:
            client.send(p.Error(code=code, message=text))


def rejected(client: Client, seq: int, code: ErrorCode, text: str) -> p.Rejected | p.RejectedV2:
    """A refused move's answer: the seat's game as the server has it (v2: with its last seq), to resync from."""
    lm, seat = client.live, client.seat
    view, last_seq = None, None
    if lm is not None and seat is not None:
        view, last_seq = lm.match.view(seat), lm.match.seat(seat).last_seq
    if client.version == 1:
        return p.Rejected(seq=seq, code=code, message=text, view=view)
    return p.RejectedV2(seq=seq, code=code, message=text, view=view, last_seq=last_seq if view else None)


def socket_budget(max_sockets: int | None) -> tuple[int, int]:
    """The game port's sockets at once (0: no cap), and the descriptors kept beyond them.

    None asks for the open-files limit (as ``python -m server`` raised it) less
    ``FD_RESERVE`` (a quarter of a small limit), so that the process is never
    out of descriptors: past the limit asyncio stops accepting anyone for a second.
    """
    if max_sockets is not None:
        return max_sockets, FD_RESERVE
    if sys.platform == "win32":
        return 0, FD_RESERVE
    import resource  # POSIX only

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        return 0, FD_RESERVE
    reserve = min(FD_RESERVE, soft // 4)
    return soft - reserve, reserve


async def _no_websocket(ws: ServerConnection) -> None:
    """Never called: the operator's address answers every request over HTTP (``Http.operator_request``)."""


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def run(settings: Settings, ready: Callable[[App], None] | None = None) -> None:
    """Serve until SIGTERM/SIGINT, then shut down cleanly."""
    import signal

    store = await open_store(settings.store_url, replicas=settings.redis_replicas)
    app = App(settings, store, await open_bus(settings.bus_url))
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
