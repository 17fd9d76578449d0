"""A server process's settings: ``python -m server``'s options, and the tests' overrides.

Each field says what it does in its ``help``, and that is its command-line
option too: ``python -m server`` makes one per field (``--opening-per-address
N`` for ``opening_per_address``; ``flag`` names another, ``parse`` reads its
text) with the field's default (``server/__main__.py``, ``options``). Only
``store_url`` and ``bus_url`` have none (``--data`` and ``--redis`` make them),
and ``grace_ms`` is ``--grace-s``, in seconds.

A value a field may not hold is refused in one place, ``checked``: no number
is negative, and a field's ``check`` (``port_number``, ``network``,
``origin``, ``positive``) says what else it needs. ``Settings()`` refuses
with ValueError, the command line with a usage error naming the option.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .match import DEFAULT_GRACE_MS

#: The web page's files (served at ``/``).
WEB_ROOT = Path(__file__).resolve().parent.parent / "client" / "web"

T = TypeVar("T")

#: The URL schemes of a Redis (``--redis``; the store and the bus open one for them).
REDIS_SCHEMES = ("redis", "rediss", "unix")


def setting(
    default: T,
    help: str,
    *,
    flag: str | None = None,
    metavar: str | None = None,
    parse: Callable[[str], Any] | None = None,
    shown: str | None = None,
    check: Callable[[Any], object] | None = None,
) -> T:
    """A field with its option's words: ``help`` (its default is added), and for the option
    ``flag`` (else ``--`` and the field's name with dashes), ``metavar``, ``parse`` (else the
    field's type) and ``shown`` (the default as ``--help`` says it, for a default worked out later);
    ``check`` raises ValueError for a value (of a repeatable one, an item) the field may not hold."""
    meta = {"help": help, "flag": flag, "metavar": metavar, "parse": parse, "shown": shown, "check": check}
    return field(default=default, metadata=meta)


def checked(f: Field[Any], value: T) -> T:
    """``value`` (an item, for a repeatable field) if field ``f`` may hold it; else ValueError saying why.

    The one place a setting's value is judged: ``Settings`` runs it on every
    field, the command line on every option's value as it reads it.
    """
    if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
        raise ValueError("must not be negative")  # no count, duration or rate here is
    check = f.metadata.get("check")
    if check is not None and value is not None:
        check(value)
    return value


def positive(value: float) -> None:
    """A duration a loop or a timer waits: 0 would spin, or close every socket at once."""
    if value <= 0:
        raise ValueError("must be more than 0")


def port_number(port: int) -> None:
    if not 0 <= port <= 65535:
        raise ValueError("a port is 0 to 65535")


def network(text: str) -> None:
    """An address or a network (CIDR): what ``addresses.client_key`` matches a peer against."""
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ValueError("not an IP address or network (CIDR), like 10.0.0.0/8 or 192.0.2.7") from None


def origin(text: str) -> None:
    """A page origin as browsers send it in ``Origin`` (``server/origins.py`` compares it whole)."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (ValueError for a port that is none)
    except ValueError:
        parts = urlsplit("")
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or text != f"{parts.scheme}://{parts.netloc}"
    ):
        raise ValueError(
            "an origin is http(s)://HOST or http(s)://HOST:PORT, no path, like https://grip.example.com"
        )


def address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:9100`` for IPv6) as a listening address; ValueError if it is none."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def listening(where: tuple[str, int]) -> None:
    """``address``'s value: its port one there can be."""
    port_number(where[1])


def redis_url(text: str) -> str:
    """``--redis``: a URL the Redis client opens (``server/redis_link.py``); ValueError if it is none."""
    if urlsplit(text).scheme not in REDIS_SCHEMES:
        raise ValueError(f"expected redis://HOST:PORT/DB (or rediss://, unix://), got {text!r}")
    return text


@dataclass(frozen=True)
class Settings:
    host: str = setting("127.0.0.1", "address to listen on (0.0.0.0: every one)")
    port: int = setting(8765, "port to listen on (0 picks a free one)", check=port_number)
    store_url: str = "sqlite:///./data/grip.db"  # made from --data or --redis
    bus_url: str = "memory://"  # made from --redis
    redis_replicas: int = setting(
        0, "acknowledge a write only once N Redis replicas have it (WAIT; needs --redis)", metavar="N"
    )
    origins: tuple[str, ...] = setting(
        (),
        "an allowed page origin (repeatable; none: same-origin pages only)",
        flag="--origin",
        metavar="URL",
        check=origin,
    )
    host_names: tuple[str, ...] = setting(
        (),
        "a DNS name browsers reach this server by (repeatable; localhost, addresses and the --origin "
        "hosts need none; server/origins.py)",
        flag="--host-name",
        metavar="NAME",
    )
    metrics: tuple[str, int] | None = setting(
        None,
        "serve /metrics on this operator address only",
        metavar="HOST:PORT",
        parse=address,
        shown="on --port, to this machine only",
        check=listening,
    )
    grace_ms: int = DEFAULT_GRACE_MS  # --grace-s
    rate_per_s: float = setting(30.0, "messages a second per connection", flag="--rate")
    burst: int = setting(60, "messages a connection may send at once", shown="twice --rate, at least 10")
    flood_limit: int = setting(
        200, "frames refused within --flood-window-s past which the connection is closed"
    )
    flood_window_s: float = setting(10.0, "the window of --flood-limit (s)", check=positive)
    sweep_s: float = setting(
        30.0, "how often matches and lobbies no longer needed are let go of (s)", check=positive
    )
    # Per client address (server/addresses.py).
    max_per_address: int = setting(
        64, "WebSockets one client address may hold at once (0: no cap)", metavar="N"
    )
    opening_per_address: int = setting(
        16, "sockets one client address may have not open yet: handshakes, HTTP requests (0: no cap)"
    )
    identities_per_hour: float = setting(
        30.0, "new identities one client address may make an hour on average"
    )
    identity_burst: int = setting(20, "new identities one client address may make at once")
    # Matches held here (server/holdings.py). 0: no cap.
    games_per_player: int = setting(8, "matches one connection or identity may hold a seat in (0: no cap)")
    games_per_address: int = setting(64, "matches one client address may hold seats in (0: no cap)")
    lobbies_per_address: int = setting(16, "open lobbies one client address may have created (0: no cap)")
    matches_per_hour: float = setting(
        120.0, "matches one identity may open an hour on average (create, rematch, quick race)"
    )
    match_burst: int = setting(20, "matches one identity may open at once")
    address_matches_per_hour: float = setting(
        1200.0,
        "matches one client address may open an hour on average, all its identities (a home, an office, a NAT)",
    )
    address_match_burst: int = setting(200, "matches one client address may open at once")
    proxies: tuple[str, ...] = setting(
        (),
        "a proxy in front (repeatable): connections from it count for its X-Real-IP",
        flag="--proxy",
        metavar="CIDR",
        check=network,
    )
    max_sockets: int | None = setting(
        None,
        "sockets of the game port at once, all addresses (0: no cap; server/addresses.py)",
        shown="the open-files limit less a reserve for the store, the bus and the solver",
    )
    open_timeout_s: float = setting(
        5.0, "from accept to a WebSocket open, or an HTTP request read (s)", check=positive
    )
    quick_pair_every_s: float = setting(
        0.5,
        "quick races: how often this process pairs while it holds the queue's lease (s; sooner when someone "
        "joins; 0: it never pairs, others do)",
    )
    quick_window: int = setting(256, "quick races: the longest-waiting places a round reads and pairs")
    live_every_s: float = setting(
        2.0, "how often the list of live races is written and sent again (s)", check=positive
    )
    par_budget_s: float = setting(10.0, "the solver's time for a past daily deal's par (s)")
    par_nodes: int = setting(10**9, "the solver's nodes for a past daily deal's par")
    # Bot races going at once ("race a bot": a worker's time a move).
    bots_per_connection: int = setting(2, "bot races one connection may have going at once")
    bots_per_player: int = setting(3, "bot races one player may have going at once")
    bots_total: int = setting(32, "bot races this process may have going at once")
    # Resumes that replay a seat's log (a long game's is a tenth of a second of CPU) or record a connect.
    resumes_per_min: float = setting(12.0, "resumes of one seat a minute on average (past them, each waits)")
    resume_burst: int = setting(5, "resumes of one seat at once (past them, each waits its turn)")
    # What builds a game whole (a resume that replays the log, a watch's snapshot, a replay), all of one
    # client address: a seat's share bounded one seat, and a client resuming 8 long games' seats in turn
    # kept a fifth of a core busy; 64 sockets watching a long game at their frame rate, 0.7 of one.
    address_snapshots_per_min: float = setting(
        120.0,
        "resumes, watches and replays one client address may ask a minute on average (past them, each waits)",
    )
    address_snapshot_burst: int = setting(
        60, "resumes, watches and replays one client address may ask at once"
    )
    hints_per_min: float = setting(20.0, "solver hints a player may ask a minute on average")
    hint_burst: int = setting(10, "solver hints a player may ask at once")
    api_rate_per_s: float = setting(5.0, "/api/ requests a second per client address on average")
    api_burst: int = setting(20, "/api/ requests one client address may make at once")
    web_root: Path = setting(WEB_ROOT, "the web page's files, served at /", metavar="DIR")  # noqa: RUF009 (a field)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            for item in value if isinstance(f.default, tuple) else (value,):
                try:
                    checked(f, item)
                except ValueError as exc:
                    raise ValueError(f"{f.name}: {exc} (got {item!r})") from None
