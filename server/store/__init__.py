"""Durable state behind one small interface: match logs, results, players.

Backends by URL scheme: ``sqlite:///path/grip.db`` (the embedded default)
and ``redis://`` (a single Redis or any node of a Redis Cluster). The match
log is the source of truth; ``append`` is conditional on the last ``ev`` so
that two processes deciding at once cannot both win, and it is durable
before it returns: a move is acknowledged, and a result sent, only after that.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import Conflict as Conflict
from ..errors import StoreUnavailable as StoreUnavailable
from ..match.events import Event
from ..protocol import Result
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

    async def result(self, match_id: str) -> Result | None: ...

    async def player(self, player_id: str) -> PlayerRecord | None: ...

    async def save_player(self, player: PlayerRecord) -> None: ...

    async def setting(self, key: str, fresh: str | None = None) -> str | None:
        """A stored value (the daily secret, a day's par); ``fresh`` is stored only if there is none."""

    async def claim_daily(self, day: str, player: str, match: str) -> str:
        """Take the day's one ranked attempt for ``match``; returns the match that holds it."""

    async def daily_attempt(self, day: str, player: str) -> str | None: ...

    async def leaderboard(self, day: str, player: str | None, limit: int = 100) -> DailyBoard: ...

    async def daily_days(self, before: str, limit: int) -> list[tuple[str, int]]:
        """Days before ``before`` with ranked games, newest first, with their player counts."""

    async def player_results(
        self, player: str, before: tuple[int, str] | None = None, limit: int | None = None
    ) -> list[Result]:
        """A player's results, newest first (by decided_at, then match), older than ``before``."""

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

    async def close(self) -> None: ...


async def open_store(url: str, *, replicas: int = 0) -> Store:
    """The store at ``url``; ``replicas``: how many Redis replicas must have a write before it counts."""
    scheme = url.split("://", 1)[0]
    if scheme == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore(url.removeprefix("sqlite://"))
    if scheme in ("redis", "rediss", "unix"):
        from .redis import RedisStore

        return await RedisStore.connect(url, replicas=replicas)
    raise ValueError(f"no store for {url!r}: use sqlite:///path or redis://")
