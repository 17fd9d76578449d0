"""The quick-race queue of a store used by one process (embedded): held in memory.

A queue place lives as long as its connection, and every connection of an
embedded server ends with its process, so there is nothing to keep on disk:
after a restart nobody is waiting. The Redis store keeps the same data in
Redis, where every process sees it (``server/store/redis.py``).
"""

from __future__ import annotations

from dataclasses import replace

from . import QueueEntry


class MemoryQueue:
    def __init__(self) -> None:
        self._places: dict[str, QueueEntry] = {}
        self._paired: dict[str, str] = {}

    def join(self, entry: QueueEntry) -> tuple[QueueEntry, QueueEntry | None]:
        previous = self._places.get(entry.player)
        stored = kept_place(entry, previous)
        self._places[entry.player] = stored
        return stored, previous

    def leave(self, player: str, conn: str) -> bool:
        place = self._places.get(player)
        if place is None or place.conn != conn:
            return False
        del self._places[player]
        return True

    def entries(self) -> list[QueueEntry]:
        return list(self._places.values())

    def claim(self, pair: tuple[QueueEntry, QueueEntry], match: str) -> bool:
        if any(self._places.get(e.player) != e for e in pair):
            return False
        for e in pair:
            del self._places[e.player]
            self._paired[e.player] = match
        return True

    def paired(self, player: str) -> str | None:
        return self._paired.get(player)


def kept_place(entry: QueueEntry, previous: QueueEntry | None) -> QueueEntry:
    """``entry`` as it is stored over the player's ``previous`` place: in the same queue, it keeps its time."""
    if previous is not None and previous.pool == entry.pool:
        return replace(entry, since=previous.since)
    return entry
