"""What one client address may have of this process: sockets opening, connections, identities an hour.

Every socket holds a file descriptor and some memory, every identity a row
kept for good, and a client can open either by the thousand. A server
reached directly (embedded, ``--host 0.0.0.0``) caps them per address; in
the compose shape nginx caps sockets per address in front as well
(deploy/nginx.conf), and passes the client's address on in ``X-Real-IP``,
believed only from the ``--proxy`` addresses. This machine's own connections
(loopback, not through a proxy: the tests, the benches, a terminal client)
are not counted. IPv6 addresses count per /64, the block one subscriber gets.
The identities an address makes are counted in an allowance (``server/limits/``)
that every process on one Redis shares; its sockets and connections, in this process.

A socket is counted from its accept, before any byte of its request
(``Gate``): one that never finishes its handshake (or its HTTP request:
slowloris) holds its descriptor until ``open_timeout``, and process_request
only ever sees complete requests. Past the cap, a socket is refused with a
reason once its request comes (429; 503 when the whole process is out of
sockets), and past twice the cap it is closed at once: those refused still
hold a socket until they are answered, so they are capped too.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Sequence
from enum import Enum

from websockets.datastructures import Headers

from .limits import Limiter

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def client_key(peer: str, headers: Headers, proxies: Sequence[str]) -> str | None:
    """Whom a connection from ``peer`` counts for: its address (IPv6: its /64); None for this machine."""
    ip = parse_ip(peer)
    if ip is None:
        return None
    if any(ip in ipaddress.ip_network(net, strict=False) for net in proxies):
        real = parse_ip(headers.get("X-Real-IP", ""))
        if real is None:
            return None  # the proxy's own request (a health check)
        ip = real
    if ip.is_loopback:
        return None
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def parse_ip(text: str) -> IPAddress | None:
    """An address (IPv4 written as IPv6, ``::ffff:a.b.c.d``, as IPv4), or None for anything else."""
    try:
        ip = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class PerAddress:
    """Connections open and identities made, per client key (``client_key``), by connection id."""

    def __init__(self, max_connections: int, identities: Limiter) -> None:
        self.max_connections = max_connections  # 0: no cap
        self.open: Counter[str] = Counter()
        self.keys: dict[str, str] = {}  # connection id -> its key (counted connections only)
        self.identities = identities  # identities made, by key

    def full(self, key: str | None) -> bool:
        return key is not None and 0 < self.max_connections <= self.open[key]

    def opened(self, conn: str, key: str | None) -> bool:
        """Count connection ``conn`` in; False (not counted) when its address already has its share."""
        if self.full(key):
            return False
        if key is not None:
            self.open[key] += 1
            self.keys[conn] = key
        return True

    def closed(self, conn: str) -> None:
        key = self.keys.pop(conn, None)
        if key is not None:
            self.open[key] -= 1
            if not self.open[key]:
                del self.open[key]

    async def new_identity(self, conn: str) -> bool:
        """Whether connection ``conn`` may make one more identity now (counted if so)."""
        key = self.keys.get(conn)
        return key is None or not await self.identities.take(key)


class Crowded(Enum):
    """Why a socket is turned away (the value labels ``grip_sockets_refused``)."""

    CONNECTIONS = "connections"  # its address holds its share of open WebSockets (429)
    OPENING = "opening"  # its address has its share of sockets not open yet (429)
    SERVER = "server"  # the process has no descriptors to spare (503)

    @property
    def status(self) -> int:
        return 503 if self is Crowded.SERVER else 429

    @property
    def message(self) -> str:
        return _CROWDED[self]


_CROWDED = {
    Crowded.CONNECTIONS: "too many connections from your address",
    Crowded.OPENING: "too many connections opening from your address",
    Crowded.SERVER: "the server has no room for more connections; try again soon",
}


class Admission(Enum):
    """What becomes of a socket just accepted (``Gate.accepted``)."""

    GO_ON = "go_on"  # to its handshake
    REFUSE = "refuse"  # answered 429/503 with the reason once its request comes
    DROP = "drop"  # closed at once: even the refusals are past their cap


class Gate:
    """The game port's sockets, from accept to close; per address, those not open yet.

    ``max_opening`` per address (0: no cap) bounds handshakes and HTTP
    requests in progress; ``max_sockets`` (0: no cap) bounds the process's,
    below its open-files limit, so that accepting never fails for want of a
    descriptor (asyncio would stop accepting anyone for a second). Past
    either, a socket is refused, and past twice it (the process: half its
    reserve more) dropped: the descriptors held stay bounded whatever a
    client opens.
    """

    def __init__(self, max_opening: int, max_sockets: int, reserve: int) -> None:
        self.max_opening = max_opening
        self.max_sockets = max_sockets
        self.drop_sockets_at = max_sockets + reserve // 2
        self.sockets = 0
        self.opening: Counter[str] = Counter()

    def accepted(self, key: str | None) -> tuple[Admission, Crowded | None]:
        """Count in a socket from ``key`` (None: not counted per address): what to do with it, and why."""
        if self.max_sockets and self.sockets >= self.drop_sockets_at:
            return Admission.DROP, Crowded.SERVER
        opening = self.opening[key] if key is not None and self.max_opening else 0
        if opening >= 2 * self.max_opening > 0:
            return Admission.DROP, Crowded.OPENING
        self.sockets += 1
        if key is not None:
            self.opening[key] += 1
        if self.max_sockets and self.sockets > self.max_sockets:
            return Admission.REFUSE, Crowded.SERVER
        if opening >= self.max_opening > 0:
            return Admission.REFUSE, Crowded.OPENING
        return Admission.GO_ON, None

    def opened(self, key: str | None) -> None:
        """A socket from ``key`` counted in by ``accepted`` finished its handshake (or its request)."""
        if key is not None:
            self.opening[key] -= 1
            if not self.opening[key]:
                del self.opening[key]

    def closed(self) -> None:
        """A socket counted in by ``accepted`` is closed (after ``opened``, or instead of it)."""
        self.sockets -= 1
