"""The HTTP side of the port: the web page's files, ``/healthz``, ``/metrics``, replays, variants.

Everything but a WebSocket upgrade is answered here, before websockets
would (``process_request``). An upgrade is let through only from an allowed
page (server/origins.py): a page elsewhere must not play with its visitor's
identity. ``/api/`` answers (a replay is a megabyte) are rate-limited per
client address (``Settings.api_rate_per_s``): 429 with Retry-After past it.
``/metrics`` is the operator's: on the ``--metrics`` address when there is
one (``operator_request``), else on this port to this machine only. Every
answer says the page runs only its own scripts and styles, talks only to its
own server and is never framed (``SECURITY_HEADERS``).
"""

from __future__ import annotations

import json
import math
import mimetypes
import re
from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers, MultipleValuesError
from websockets.http11 import Request, Response

from . import protocol as p
from .addresses import Crowded, PerAddress, client_key, parse_ip
from .bus import Bus
from .engine.variants import describe as describe_variants
from .limits import Limiter
from .metrics import Metrics
from .origins import PageCheck
from .replay import replay_json
from .settings import Settings
from .store import Store
from .transport import Socket

#: The web page's own paths (``route()`` in client/web/js/app.js): each is served index.html.
PAGE_ROUTE = re.compile(
    rf"/(practice|rules|live|daily(/\d{{4}}-\d{{2}}-\d{{2}})?|stats(/[A-Za-z0-9_-]{{1,64}})?"
    rf"|[mwr]/[{p.CODE_ALPHABET}{p.CODE_ALPHABET.lower()}]{{{p.CODE_LENGTH}}})?/*"
)
#: Paths that look like one of the page's (no file extension) but that it cannot show: the page
#: still comes, with status 404, and says so with a way home.
LOOKS_LIKE_A_PAGE = re.compile(r"(/[^/.]*)*/?")
#: The page's Content-Security-Policy (deploy/nginx.conf sends the same with the files it serves).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (("Content-Security-Policy", CSP), ("X-Content-Type-Options", "nosniff"))
#: The most a path to one of the web page's files may name: a file is at most this many folders
#: deep (``js/engine/game.js`` is 3 names), and no name is ``..``. Looking up a path asks the file
#: system about each of its names: ``/a/a/.../a``, 3,900 names in an 8 KiB request line, cost
#: 7.8 ms of the event loop per request; such a path is no file without asking.
MAX_FILE_NAMES = 8
#: The longest path that may be one of the page's (``/stats/`` and a 64-character player id is
#: 71): a longer one is not found without matching it against the page's routes (0.4 ms at 8 KiB).
MAX_PAGE_PATH = 256
VARIANTS_JSON = json.dumps({"variants": describe_variants()}, separators=(",", ":")).encode()


class Http:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        bus: Bus,
        metrics: Metrics,
        clock: Callable[[], int],
        addresses: PerAddress,
        api: Limiter,
    ) -> None:
        self.settings = settings
        self.store = store
        self.bus = bus
        self.metrics = metrics
        self.clock = clock
        self.pages = PageCheck(settings)
        self.addresses = addresses
        self._api = api  # per client address

    async def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """The answer to a plain HTTP request; None lets a WebSocket upgrade through.

        A header read here (Host, Origin, Upgrade, X-Real-IP, Accept-Encoding)
        given twice is a 400: websockets' ``headers.get`` raises on it, which
        was a 500 and a traceback in the log for each such request.
        """
        try:
            return await self._answer(connection, request)
        except MultipleValuesError as exc:
            return _response(400, f"the header {exc} was given more than once\n".encode(), "text/plain")

    async def _answer(self, connection: ServerConnection, request: Request) -> Response | None:
        if isinstance(connection, Socket) and connection.refusal is not None:
            return connection.respond(connection.refusal.status, connection.refusal.message + "\n")
        if request.headers.get("Upgrade", "").lower() == "websocket":
            if not self.pages.allows(request.headers.get("Origin"), request.headers.get("Host")):
                return connection.respond(403, "origin not allowed\n")
            if self.addresses.full(self.client_key(connection, request)):
                self.metrics.socket_refused(Crowded.CONNECTIONS, "refuse")
                return connection.respond(429, Crowded.CONNECTIONS.message + "\n")
            return None
        path = urlsplit(request.path).path
        if path == "/healthz":
            return await self._healthz()
        if path == "/metrics" and self.settings.metrics is None and _loopback(connection):
            return self._metrics()
        if path.startswith("/api/") and (wait := await self._api.take(self._api_key(connection, request))):
            return _too_many(wait)
        if path == "/api/variants":
            return _response(200, VARIANTS_JSON, "application/json")
        if path.startswith("/api/replay/"):
            takes_gzip = "gzip" in request.headers.get("Accept-Encoding", "")
            status, body, gzipped = await replay_json(self.store, path, self.clock(), takes_gzip)
            response = _response(status, body, "application/json")
            response.headers["Vary"] = "Accept-Encoding"
            if gzipped:
                response.headers["Content-Encoding"] = "gzip"
            return response
        return self._static(path)

    def client_key(self, connection: ServerConnection, request: Request | None) -> str | None:
        """Whom the connection counts for (server/addresses.py)."""
        headers = request.headers if request is not None else Headers()
        return client_key(str(connection.remote_address[0]), headers, self.settings.proxies)

    async def operator_request(self, connection: ServerConnection, request: Request) -> Response:
        """The ``--metrics`` address: ``/metrics`` and ``/healthz``, nothing else (no WebSocket)."""
        path = urlsplit(request.path).path
        if path == "/metrics":
            return self._metrics()
        if path == "/healthz":
            return await self._healthz()
        return _response(404, b"not found\n", "text/plain")

    def _metrics(self) -> Response:
        return _response(200, self.metrics.render(), "text/plain; version=0.0.4; charset=utf-8")

    def _api_key(self, connection: ServerConnection, request: Request) -> str:
        """Whom an ``/api/`` request counts for: its client, or this machine as one client."""
        return self.client_key(connection, request) or str(connection.remote_address[0])

    async def _healthz(self) -> Response:
        status = {"bus": bool(self.bus.healthy), "store": await self.store.ping()}
        ok = all(status.values())
        body = json.dumps({"status": "ok" if ok else "degraded", **status}).encode()
        return _response(200 if ok else 503, body, "application/json")

    def _static(self, path: str) -> Response:
        if len(path) > MAX_PAGE_PATH:
            return _response(404, b"not found\n", "text/plain")
        root = self.settings.web_root.resolve()
        target = _file_under(root, path.lstrip("/") or "index.html")
        status = 200
        if target is None and PAGE_ROUTE.fullmatch(path):
            target = root / "index.html"  # the page routes these itself (route() in client/web/js/app.js)
        elif target is None and LOOKS_LIKE_A_PAGE.fullmatch(path):
            target, status = root / "index.html", 404
        if target is None:
            return _response(404, b"not found\n", "text/plain")
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind == "application/javascript":
            kind += "; charset=utf-8"
        return _response(status, target.read_bytes(), kind)


def _file_under(root: Path, rel: str) -> Path | None:
    """The file ``rel`` names under ``root``, or None: outside it, missing, or no possible file name.

    A NUL byte or a name longer than the file system allows (``ENAMETOOLONG``)
    raises rather than answering "no such file": it is a 404 all the same. A
    path of more names than ``MAX_FILE_NAMES``, or going up (``..``), is none
    either, found without a system call: resolving it asked about each name.
    """
    names = rel.split("/")
    if len(names) > MAX_FILE_NAMES or ".." in names:
        return None
    try:
        target = (root / rel).resolve()
        return target if target.is_relative_to(root) and target.is_file() else None
    except (OSError, ValueError):
        return None


def _loopback(connection: ServerConnection) -> bool:
    """Whether the request came from this machine (a proxy here counts: deploy/nginx.conf keeps /metrics)."""
    ip = parse_ip(str(connection.remote_address[0]))
    return ip is not None and ip.is_loopback


def _too_many(wait: float) -> Response:
    """429 with Retry-After: the API answers cost the server, each address has a quota."""
    seconds = math.ceil(wait)
    body = json.dumps({"error": "rate_limited", "message": f"too many requests: try again in {seconds} s"})
    response = _response(429, body.encode(), "application/json")
    response.headers["Retry-After"] = str(seconds)
    return response


def _response(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body))), *SECURITY_HEADERS])
    headers["Cache-Control"] = "no-cache"
    return Response(status, HTTPStatus(status).phrase, headers, body)
