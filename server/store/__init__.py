"""Durable state behind one small interface: match logs, results, players.

Backends by URL scheme: ``sqlite:///path/grip.db`` (the embedded default)
and ``redis://``. The match log is the source of truth; ``append`` is
conditional on the last ``ev`` so that two processes deciding at once cannot
both win, and it is durable before it returns: a move is acknowledged, and a
result sent, only after that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..match import Event
from ..protocol import Result


class Conflict(Exception):
    """The log already has an event at the ``ev`` we tried: catch up and decide again."""


class StoreUnavailable(Exception):
    """The store cannot be reached now; nothing was written."""


@dataclass(frozen=True)
class PlayerRecord:
    id: str
    key_hash: str
    name: str
    created_at: int


class Store(Protocol):
    async def ping(self) -> bool:
        """Whether the store answers right now (for /healthz)."""

    async def append(self, match_id: str, expected_ev: int, events: Sequence[Event]) -> None:
        """Append after ``expected_ev``; Conflict if the log has moved on.

        A batch holding a ``decided`` event also stores its result, in the
        same atomic write.
        """

    async def events(self, match_id: str, after: int = 0) -> list[Event]: ...

    async def result(self, match_id: str) -> Result | None: ...

    async def player(self, player_id: str) -> PlayerRecord | None: ...

    async def save_player(self, player: PlayerRecord) -> None: ...

    async def close(self) -> None: ...


def open_store(url: str) -> Store:
    scheme = url.split("://", 1)[0]
    if scheme == "sqlite":
        from .sqlite import SqliteStore

        return SqliteStore(url.removeprefix("sqlite://"))
    if scheme in ("redis", "rediss", "unix"):
        from .redis import RedisStore

        return RedisStore(url)
    raise ValueError(f"no store for {url!r}: use sqlite:///path or redis://")
