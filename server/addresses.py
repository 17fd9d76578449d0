"""What one client address may have of this process: connections at once, new identities an hour.

Every connection holds a file descriptor and some memory, every identity a
row kept for good, and a client can open either by the thousand. A server
reached directly (embedded, ``--host 0.0.0.0``) caps both per address; in the
compose shape nginx caps sockets per address in front as well
(deploy/nginx.conf), and passes the client's address on in ``X-Real-IP``,
believed only from the ``--proxy`` addresses. This machine's own connections
(loopback, not through a proxy: the tests, the benches, a terminal client)
are not counted. IPv6 addresses count per /64, the block one subscriber gets.
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Sequence

from websockets.datastructures import Headers

from .limits import Buckets

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

    def __init__(self, max_connections: int, identities_per_hour: float, identity_burst: int) -> None:
        self.max_connections = max_connections  # 0: no cap
        self.open: Counter[str] = Counter()
        self.keys: dict[str, str] = {}  # connection id -> its key (counted connections only)
        self.identities = Buckets(identities_per_hour / 3600, identity_burst)  # by key

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

    def new_identity(self, conn: str, now_s: float) -> bool:
        """Whether connection ``conn`` may make one more identity now (counted if so)."""
        key = self.keys.get(conn)
        return key is None or not self.identities.take(key, now_s)

    def forget_idle(self, now_s: float) -> None:
        """Drop the addresses whose allowance of identities is whole again (they would start so)."""
        self.identities.forget_full(now_s)
