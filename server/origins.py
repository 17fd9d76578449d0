"""Which browser pages may open a WebSocket here: the Origin they come from, the Host they reached.

A page's socket plays with its visitor's identity, so only this server's own
pages may open one: the Origin must be an allowed one (``--origin``), or by
default this very server over plain http (an ``https://`` page is a proxy's
in front, which must be configured). Origin equal to Host is not enough on
its own: a page of ``evil.example`` whose DNS answer is changed to this
server's address (DNS rebinding) sends both as ``evil.example``. So the Host
must also be a name this server answers to: localhost, an IP address (no DNS
was asked), the host names of ``--origin`` and ``--host-name``, the
``--host`` it listens on, and this machine's own name. Clients that are not
browsers send no Origin and are not concerned.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from .reach import WILDCARDS
from .settings import Settings


class PageCheck:
    def __init__(self, settings: Settings) -> None:
        self.origins = frozenset(settings.origins)
        names = {urlsplit(o).hostname for o in settings.origins} | set(settings.host_names)
        if settings.host in WILDCARDS:  # others reach this machine: by address, or by its own name
            names |= {socket.gethostname(), f"{socket.gethostname()}.local"}
        else:
            names.add(settings.host)
        self.names = frozenset(n.lower().rstrip(".") for n in names if n)

    def allows(self, origin: str | None, host: str | None) -> bool:
        """Whether a WebSocket handshake with these Origin and Host headers may go on."""
        if origin is None:
            return True  # not a browser: no cross-site hijacking to guard against
        if not self.host_known(host):
            return False
        if self.origins:
            return origin in self.origins
        parts = urlsplit(origin)
        return parts.scheme == "http" and parts.netloc == host

    def host_known(self, host: str | None) -> bool:
        try:
            name = urlsplit(f"//{host}").hostname if host else None
        except ValueError:  # an unbalanced bracket
            return False
        if not name:
            return False
        name = name.rstrip(".")
        if name == "localhost" or name in self.names:
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True
