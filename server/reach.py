"""Where other people reach this server: the address for the links a player shares.

A server started with ``--host 0.0.0.0`` listens on every interface, but
``http://0.0.0.0:8765/`` (or ``127.0.0.1``) in a share link is this machine
only: a friend needs the machine's address on their network. The printout
and the browser opened at start use it, and so do the page's share links
(``welcome.share_host``) when the page itself was opened on a loopback
address.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

#: Bind addresses that mean "every interface".
WILDCARDS = frozenset({"", "0.0.0.0", "::"})

#: Never contacted: connecting a UDP socket only picks the route to it, and so
#: the source address of the default route (documentation ranges, RFC 5737/3849).
_ROUTE_PROBES = ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1"))


def lan_address() -> str | None:
    """This machine's address on its network (the default route's), or None without a network."""
    for family, probe in _ROUTE_PROBES:
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                address = str(s.getsockname()[0])
        except OSError:
            continue
        if not this_machine_only(address):
            return address
    return None


def this_machine_only(host: str) -> bool:
    """Whether ``host`` names no address another machine can reach (loopback, unspecified)."""
    if host.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False  # a name: whoever typed it reached us by it
    return ip.is_loopback or ip.is_unspecified


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def page_host(bind_host: str, port: int) -> str:
    """``host:port`` to print and open at start: the network address when listening on every interface."""
    if bind_host in WILDCARDS:
        return _host_port(lan_address() or "127.0.0.1", port)
    return _host_port(bind_host, port)


def share_host(bind_host: str, port: int, request_host: str | None) -> str | None:
    """``host:port`` for links others open, as seen by a request with Host ``request_host``.

    The Host the page was loaded from, unless it names this machine only while
    the server listens on every interface and the Host's port is the server's
    own (not a proxy's in front of it): then the machine's network address.
    None when the request named no Host.
    """
    if not request_host:
        return None
    parts = urlsplit(f"//{request_host}")
    try:
        request_port = parts.port or 80
    except ValueError:  # a malformed port: links keep the Host as it came
        return request_host
    if bind_host in WILDCARDS and request_port == port and this_machine_only(parts.hostname or ""):
        lan = lan_address()
        if lan is not None:
            return _host_port(lan, port)
    return request_host
