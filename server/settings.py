"""A server process's settings: ``python -m server``'s options, and the tests' overrides."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .match import DEFAULT_GRACE_MS

#: The web page's files (served at ``/``).
WEB_ROOT = Path(__file__).resolve().parent.parent / "client" / "web"


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 8765
    store_url: str = "sqlite:///./data/grip.db"
    bus_url: str = "memory://"
    redis_replicas: int = 0  # Redis replicas that must have a write before it is acknowledged
    origins: tuple[str, ...] = ()  # empty: same-origin pages and non-browser clients only
    host_names: tuple[str, ...] = ()  # DNS names browsers reach this server by (server/origins.py)
    metrics: tuple[str, int] | None = None  # the operator's address for /metrics; None: loopback only
    grace_ms: int = DEFAULT_GRACE_MS
    rate_per_s: float = 30.0
    burst: int = 60
    flood_limit: int = 200  # frames refused within flood_window_s past which the connection is closed
    flood_window_s: float = 10.0
    sweep_s: float = 30.0
    # Per client address (server/addresses.py): WebSockets at once (0: no cap), sockets not open
    # yet (handshakes and HTTP requests in progress; 0: no cap), new identities.
    max_per_address: int = 64
    opening_per_address: int = 16
    identities_per_hour: float = 30.0
    identity_burst: int = 20
    # Matches held here that one connection or identity, and one address, took a seat in; open
    # lobbies one address created (server/holdings.py). 0: no cap.
    games_per_player: int = 8
    games_per_address: int = 64
    lobbies_per_address: int = 16
    proxies: tuple[str, ...] = ()  # addresses (CIDR) whose X-Real-IP names the client
    # Sockets of the game port at once, all addresses (server/addresses.py, ``Gate``): None for the
    # open-files limit less a reserve for the store, the bus and the solver; 0: no cap.
    max_sockets: int | None = None
    open_timeout_s: float = 5.0  # from accept to a WebSocket open (or an HTTP request read)
    # Quick races: how often this process looks for pairs while it holds the queue's lease
    # (sooner when someone joins); 0: it never pairs (others do; tests stage a queue so).
    quick_pair_every_s: float = 0.5
    quick_window: int = 256  # the longest-waiting places a round reads and pairs (server/quick.py)
    live_every_s: float = 2.0  # how often the list of live races is written and sent again
    par_budget_s: float = 10.0  # the solver's time for a past daily deal's par
    par_nodes: int = 10**9
    # Bot races going at once ("race a bot": a worker's time a move): a connection's, a player's,
    # this process's.
    bots_per_connection: int = 2
    bots_per_player: int = 3
    bots_total: int = 32
    # Resumes of one seat that replay its log (a long game's is a tenth of a second of CPU) or record
    # a connect (the log grows): past these, each waits its turn.
    resumes_per_min: float = 12.0
    resume_burst: int = 5
    hints_per_min: float = 20.0  # solver hints a player may ask a minute on average...
    hint_burst: int = 10  # ...in bursts of up to this many
    api_rate_per_s: float = 5.0  # /api/ requests a second per client address on average...
    api_burst: int = 20  # ...in bursts of up to this many
    web_root: Path = WEB_ROOT
