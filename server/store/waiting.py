"""The quick-race queue of a store used by one process (embedded): held in memory.

A queue place lives as long as its connection, and every connection of an
embedded server ends with its process, so there is nothing to keep on disk:
after a restart nobody is waiting. The Redis store keeps the same data in
Redis, where every process sees it (``server/store/redis.py``).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence
from dataclasses import replace

from . import QueueEntry


class MemoryQueue:
    """The places by player, and their keys (``since``, player) in waiting order, for a round's window."""

    def __init__(self) -> None:
        self._places: dict[str, QueueEntry] = {}
        self._order: list[tuple[int, str]] = []
        self._paired: dict[str, str] = {}

    def join(self, entry: QueueEntry) -> tuple[QueueEntry, QueueEntry | None]:
        previous = self._places.get(entry.player)
        stored = kept_place(entry, previous)
        if previous is not None:
            self._take_out(previous)
        self._places[entry.player] = stored
        insort(self._order, (stored.since, stored.player))
        return stored, previous

    def leave(self, player: str, conn: str) -> bool:
        place = self._places.get(player)
        if place is None or place.conn != conn:
            return False
        self._take_out(place)
        return True

    def entries(self, limit: int) -> list[QueueEntry]:
        return [self._places[player] for _, player in self._order[:limit]]

    def places(self, players: Sequence[str]) -> dict[str, QueueEntry]:
        return {p: self._places[p] for p in players if p in self._places}

    def claim(self, pair: tuple[QueueEntry, QueueEntry], match: str) -> bool:
        if any(self._places.get(e.player) != e for e in pair):
            return False
        for e in pair:
            self._take_out(e)
            self._paired[e.player] = match
        return True

    def _take_out(self, place: QueueEntry) -> None:
        del self._places[place.player]
        del self._order[bisect_left(self._order, (place.since, place.player))]

    def paired(self, player: str) -> str | None:
        return self._paired.get(player)


def kept_place(entry: QueueEntry, previous: QueueEntry | None) -> QueueEntry:
    """``entry`` as it is stored over the player's ``previous`` place: in the same queue, it keeps its time."""
    if previous is not None and previous.pool == entry.pool:
        return replace(entry, since=previous.since)
    return entry
