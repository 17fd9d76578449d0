"""Durable state behind one small interface: match logs, results, players.

Backends by URL scheme: ``sqlite:///path/grip.db`` (the embedded default; the
path follows the third slash, so an absolute one makes four, as in SQLAlchemy)
and ``redis://`` (a single Redis or any node of a Redis Cluster). The match
log is the source of truth; ``append`` is conditional on the last ``ev`` so
that two processes deciding at once cannot both win, and it is durable
before it returns: a move is acknowledged, and a result sent, only after that.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Protocol

from ..errors import Conflict as Conflict
from ..errors import StoreUnavailable as StoreUnavailable
from ..match.events import Event
from ..protocol import LiveRace, Rated, Result, ResultSummary
from ..ratings import PlayerRating, RatingPoint
from ..settings import REDIS_SCHEMES
from ..stats import Totals


@dataclass(frozen=True)
class BoardRow:
    """One player's ranked daily game: a leaderboard line."""

    player: str
    name: str
    score: int
    time_ms: int
    match: str

    @property
    def key(self) -> tuple[int, int]:
        """The order of the board: lower score first, then the faster finish."""
        return self.score, self.time_ms


@dataclass(frozen=True)
class DailyBoard:
    top: list[BoardRow]  # best first
    you: tuple[int, BoardRow] | None  # the asker's rank (1 + players strictly ahead) and line
    distribution: dict[int, int]  # score -> players

    def ranked_top(self) -> list[tuple[int, BoardRow]]:
        """The top with competition ranks (1, 2, 2, 4): equal score and time share a rank."""
        out: list[tuple[int, BoardRow]] = []
        for i, row in enumerate(self.top):
            rank = out[-1][0] if out and out[-1][1].key == row.key else i + 1
            out.append((rank, row))
        return out


def board_rows(result: Result) -> list[BoardRow]:
    """The leaderboard lines a ranked daily result adds (none for other results)."""
    if not (result.ranked and result.daily):
        return []
    return [
        BoardRow(s.player, s.name, s.score, s.finished_at - result.started_at, result.match)
        for s in result.seats
        if s.player is not None
    ]


@dataclass(frozen=True)
class PlayerRecord:
    id: str
    key_hash: str
    name: str
    created_at: int


@dataclass(frozen=True)
class QueueEntry:
    """A player's one place in the quick-race queue (``server/quick.py``)."""

    player: str
    name: str
    conn: str  # the connection that waits: the only one told when the player is paired
    variant: str
    time_limit_s: int
    rating: int
    since: int  # when the player joined (their place: the longest waiting are paired first)
    token_hash: str  # of the seat token their connection keeps, for the race they are paired into

    @property
    def pool(self) -> tuple[str, int]:
        """The queue this place is in: players are paired only within one."""
        return self.variant, self.time_limit_s

    def dump(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def load(cls, text: str | bytes) -> QueueEntry:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class BoardPlace:
    """A line of a variant's board of the best ratings."""

    rank: int
    player: str
    name: str
    rating: PlayerRating


#: A place on a board of the best, as its order has it: (mu, player), best first, ties by player
#: descending. A page ``after`` one starts just past it, wherever that player is now.
BoardKey = tuple[float, str]


@dataclass(frozen=True)
class BoardPage:
    """A page of a board of the best: its lines, the board's size, and where the next page starts (None: the end)."""

    places: list[BoardPlace]
    total: int
    next: BoardKey | None


def live_gap(leftovers: Iterable[int]) -> int:
    """How far apart a listed race's racers are in cards left: the ``closest`` order's first key, lowest first.

    The one definition: ``server/live_races.py`` ranks by it, and each store
    keeps it with every listing so that its index has the same order.
    """
    lefts = list(leftovers)
    return max(lefts) - min(lefts) if lefts else 0


@dataclass(frozen=True)
class LiveTop:
    """The top of the list of live races, as a period's refresh reads it (``Store.live_top``)."""

    #: Each ``LiveRace``'s JSON as written, each once, in no order: the first ``depth`` listings of
    #: each order (newest; closest) past the stale ones, and every stale one (ended before ``stale_before``).
    races: list[bytes]
    total: int  # every listing, the stale ones included


class Store(Protocol):
    async def ping(self) -> bool:
        """Whether the store answers right now (for /healthz)."""

    async def append(
        self, match_id: str, expected_ev: int, events: Sequence[Event], *, rebase: bool = False
    ) -> int:
        """Append after ``expected_ev``; Conflict if the log has moved on. Returns the ev shift.

        With ``rebase`` (a lone ``moved`` event), a store may instead append
        after events the caller has not seen, if they cannot change the move's
        legality (other seats' moves, connection changes): the events then
        get the next free ``ev`` numbers, and the shift (new ev - given ev) is
        returned. A batch holding a ``decided`` event also stores its result,
        in the same atomic write.
        """

    async def confirm(self, match_id: str) -> None:
        """Return once the match's log as it stands is as safe as an append that returned.

        For an answer sent again from memory (a resent move's ack): its append
        may have been the one that got no answer. StoreUnavailable if that
        cannot be confirmed now.
        """

    async def events(self, match_id: str, after: int = 0) -> list[Event]: ...

    async def has_log(self, match_id: str) -> bool:
        """Whether the match has a log (it was opened, and its log is still kept), without reading it."""

    async def result(self, match_id: str) -> Result | None: ...

    async def save_replay(self, match_id: str, day: str | None, body: bytes) -> None:
        """Keep a decided match's replay (gzipped JSON, ``server/replay.py``) as long as its result,
        with its daily day."""

    async def replay(self, match_id: str) -> tuple[str | None, bytes] | None:
        """The kept replay of a match, and its daily day; None if none was kept."""

    async def player(self, player_id: str) -> PlayerRecord | None: ...

    async def save_player(self, player: PlayerRecord) -> None: ...

    async def setting(self, key: str, fresh: str | None = None) -> str | None:
        """A stored value (the daily secret, a day's par); ``fresh`` is stored only if there is none."""

    async def claim_daily(self, day: str, player: str, match: str) -> tuple[str, bool]:
        """Take the day's one ranked attempt for ``match``: the match that holds it, and whether this call took it."""

    async def release_daily(self, day: str, player: str, match: str) -> None:
        """Give the day's attempt back, if ``match`` holds it: the game it was taken for never got the player."""

    async def daily_attempt(self, day: str, player: str) -> str | None: ...

    async def leaderboard(self, day: str, player: str | None, limit: int = 100) -> DailyBoard: ...

    async def daily_days(self, before: str, limit: int) -> list[tuple[str, int]]:
        """Days before ``before`` with ranked games, newest first, with their player counts."""

    async def player_results(
        self, player: str, before: tuple[int, str] | None = None, limit: int | None = None
    ) -> list[Result]:
        """A player's results, newest first (by decided_at, then match), older than ``before``."""

    async def player_games(
        self, player: str, before: tuple[int, str] | None = None, limit: int | None = None
    ) -> list[ResultSummary]:
        """``player_results``, each read without its moves (``history``: a page of a hundred)."""

    async def totals(self, player: str) -> Totals:
        """The fold of every result of the player's (``server/stats.py``), kept as each is stored."""

    async def heartbeat(self, instance: str, ttl_ms: int) -> None:
        """Server process ``instance`` is alive, for the next ``ttl_ms``."""

    async def alive(self, instances: Collection[str]) -> set[str]:
        """Those of ``instances`` (server processes) whose last heartbeat has not run out."""

    async def running(self) -> dict[str, tuple[str, ...]]:
        """The matches started (a countdown or play) and not decided, each with its seats' connections.

        Their timers must run in some process (``Liveness.adopt_orphans``). The
        connections are those a store shared by processes keeps as the seats'
        leases, so that a process can tell whether a live one looks after
        the match; a store one process uses at a time gives none.
        """

    async def forget_lobbies(self, opened_before: int) -> int:
        """Delete the matches opened before ``opened_before`` (ms) and never started; how many.

        Nobody can join them any more (``Hub`` expires a lobby after half an
        hour), and without this every lobby ever opened would stay for good.
        A store whose keys expire on their own (Redis) has nothing to do.
        """

    # ------------------------------------------------------------------ ratings
    # A rated result (``ratings.is_rated``) is applied once, as part of its decision: SQLite in
    # its transaction, Redis as one more follow-up step (docs/deploy.md).

    async def ratings(self, player: str) -> dict[str, PlayerRating]:
        """The player's rating in each variant they have a rated race in."""

    async def rating_history(self, player: str, variant: str, limit: int) -> list[RatingPoint]:
        """The player's rating after each of their latest ``limit`` rated races, oldest first."""

    async def rating_change(self, variant: str, match: str) -> Rated | None:
        """What a rated race changed (None: not applied, or not rated)."""

    async def rating_board(
        self, variant: str, start: int, limit: int, after: BoardKey | None = None
    ) -> BoardPage:
        """Up to ``limit`` lines of the variant's board (past the provisional races): those just past
        ``after`` if given (a cursor: no line twice, none skipped, however the board changed meanwhile
        but for the players whose rating did), else ranks ``start + 1`` on. Neither grows with the depth."""

    async def rating_rank(self, variant: str, player: str) -> int | None:
        """The player's rank on the variant's board, if they are on it: not a count of the players ahead."""

    async def rating_log(self, variant: str) -> list[str]:
        """Every rated race of the variant, in the order it was applied."""

    # ------------------------------------------------------------- quick races

    async def queue_join(self, entry: QueueEntry) -> tuple[QueueEntry, QueueEntry | None]:
        """Give the player their one place (what is stored, and the place it replaced).

        A place they hold already (another tab) is replaced by this connection's,
        keeping its ``since`` when the queue is the same: two connections hold one place.
        """

    async def queue_leave(self, player: str, conn: str) -> bool:
        """Take the player's place out if ``conn`` holds it; whether it did."""

    async def queue_entries(self, limit: int) -> list[QueueEntry]:
        """The ``limit`` longest-waiting places, in waiting order (``since``, then player).

        A pairing round reads these and no more: its cost is bounded whatever
        the queue holds (``server/quick.py``).
        """

    async def queue_places(self, players: Sequence[str]) -> dict[str, QueueEntry]:
        """The places these players hold (those who hold none are left out)."""

    async def queue_claim(self, pair: tuple[QueueEntry, QueueEntry], match: str) -> bool:
        """Take both places out, as they are, for ``match``: False (nothing done) if either changed."""

    async def queue_paired(self, player: str) -> str | None:
        """The quick race the player was last paired into."""

    async def queue_lease(self, instance: str, ttl_ms: int) -> bool:
        """Whether process ``instance`` is the one pairing players, for the next ``ttl_ms`` (taken or renewed)."""

    # -------------------------------------------------------------- live races

    async def list_races(self, races: Sequence[LiveRace], stale: Sequence[str] = ()) -> None:
        """Put or refresh these races on the list of live races (a decided one stays off it).

        ``stale``: listed races long past their end, to take off. A decision takes its race
        off; these are the races every process died under before their decision.
        """

    async def live_races(self) -> list[bytes]:
        """Every listing, each ``LiveRace``'s JSON as written (the tests and benches check the top against it)."""

    async def live_top(self, depth: int, stale_before: int) -> LiveTop:
        """The top of each order: as many listings as the pages need, whatever the list holds.

        The store keeps each order indexed (newest: ``started_at`` then match,
        descending; closest: ``live_gap`` ascending, then as newest) and the
        listings by ``ends_at``, so that the stale ones (ended before
        ``stale_before``) are found without reading the rest.
        """

    async def close(self) -> None: ...


async def shown_rating(store: Store, player: str, variant: str) -> int:
    """The rating people are shown for ``player`` in ``variant`` (a newcomer's: the starting one)."""
    return ((await store.ratings(player)).get(variant) or PlayerRating()).shown


async def open_store(url: str, *, replicas: int = 0) -> Store:
    """The store at ``url``; ``replicas``: how many Redis replicas must have a write before it counts."""
    scheme = url.split("://", 1)[0]
    if scheme == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore(url.removeprefix("sqlite:///"))
    if scheme in REDIS_SCHEMES:
        from .redis import RedisStore

        return await RedisStore.connect(url, replicas=replicas)
    raise ValueError(f"no store for {url!r}: use sqlite:///path or redis://")
