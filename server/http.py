"""The HTTP side of the port: the web page's files, ``/healthz``, ``/metrics``, replays, variants.

Everything but a WebSocket upgrade is answered here, before websockets
would (``process_request``). ``/api/`` answers (a replay is a megabyte) are
rate-limited per client address (``Settings.api_rate_per_s``): 429 with
Retry-After past it. An upgrade is let through only from an allowed
page origin: a page elsewhere must not play with its visitor's identity.
"""

from __future__ import annotations

import json
import math
import mimetypes
import re
from collections.abc import Callable
from http import HTTPStatus
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from . import protocol as p
from .bus import Bus
from .engine.variants import describe as describe_variants
from .limits import Buckets
from .metrics import Metrics
from .replay import replay_json
from .settings import Settings
from .store import Store

#: The web page's own paths (``route()`` in client/web/js/app.js): each is served index.html.
PAGE_ROUTE = re.compile(
    rf"/(practice|rules|live|daily(/\d{{4}}-\d{{2}}-\d{{2}})?|stats(/[A-Za-z0-9_-]{{1,64}})?"
    rf"|[mwr]/[{p.CODE_ALPHABET}{p.CODE_ALPHABET.lower()}]{{{p.CODE_LENGTH}}})?/*"
)
#: Paths that look like one of the page's (no file extension) but that it cannot show: the page
#: still comes, with status 404, and says so with a way home.
LOOKS_LIKE_A_PAGE = re.compile(r"(/[^/.]*)*/?")
VARIANTS_JSON = json.dumps({"variants": describe_variants()}, separators=(",", ":")).encode()


class Http:
    def __init__(
        self, settings: Settings, store: Store, bus: Bus, metrics: Metrics, clock: Callable[[], int]
    ) -> None:
        self.settings = settings
        self.store = store
        self.bus = bus
        self.metrics = metrics
        self.clock = clock
        self._api = Buckets(settings.api_rate_per_s, settings.api_burst)  # per client address

    async def process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        """The answer to a plain HTTP request; None lets a WebSocket upgrade through."""
        if request.headers.get("Upgrade", "").lower() == "websocket":
            if not self._origin_ok(request):
                return connection.respond(403, "origin not allowed\n")
            return None
        path = urlsplit(request.path).path
        if path == "/healthz":
            return await self._healthz()
        if path == "/metrics":
            return _response(200, self.metrics.render(), "text/plain; version=0.0.4; charset=utf-8")
        if path.startswith("/api/") and (wait := self._api.take(self._address(connection, request))):
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

    def _address(self, connection: ServerConnection, request: Request) -> str:
        """The client's address: as the trusted proxy in front says (``client_address_header``), or the peer's."""
        header = self.settings.client_address_header
        if header is not None and (said := request.headers.get(header)):
            return said
        peer = connection.remote_address
        return str(peer[0]) if peer else ""

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
        status = 200
        if not target.is_file() and PAGE_ROUTE.fullmatch(path):
            target = root / "index.html"  # the page routes these itself (route() in client/web/js/app.js)
        elif not target.is_file() and LOOKS_LIKE_A_PAGE.fullmatch(path):
            target, status = root / "index.html", 404
        if not target.is_file():
            return _response(404, b"not found\n", "text/plain")
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind == "application/javascript":
            kind += "; charset=utf-8"
        return _response(status, target.read_bytes(), kind)


def _too_many(wait: float) -> Response:
    """429 with Retry-After: the API answers cost the server, each address has a quota."""
    seconds = math.ceil(wait)
    body = json.dumps({"error": "rate_limited", "message": f"too many requests: try again in {seconds} s"})
    response = _response(429, body.encode(), "application/json")
    response.headers["Retry-After"] = str(seconds)
    return response


def _response(status: int, body: bytes, content_type: str) -> Response:
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(body)))])
    headers["Cache-Control"] = "no-cache"
    return Response(status, HTTPStatus(status).phrase, headers, body)
