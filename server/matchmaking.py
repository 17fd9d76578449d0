"""Who races whom in the quick-race queue, given the places and the time. Pure, no I/O.

Each (variant, clock) is a queue of its own. The longest waiting are paired
first: each takes the nearest rating among those it may race, ties going to
whoever waited longer. Two players may race when their ratings are no
further apart than the wider of their two windows, and a window widens with
the time waited (``gap``): ±100 at first, 100 more every 5 s, anyone after
30 s. So a newcomer's narrow window does not keep a long-waiting player from
the race they have waited for, and nobody waits much past 30 s while
someone else waits in the same queue.

A place's time is when its player joined: someone who leaves and joins
again goes to the back, and a second connection of a player holds the same
one place (the store keeps one per player), so neither can push ahead of
those who waited.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable

from .store import QueueEntry

GAP_START = 100
GAP_STEP = 100
GAP_EVERY_MS = 5_000
ANYONE_AFTER_MS = 30_000


def gap(waited_ms: int) -> float:
    """How far apart two ratings may be for a player who has waited ``waited_ms``."""
    if waited_ms >= ANYONE_AFTER_MS:
        return math.inf
    return GAP_START + GAP_STEP * (max(waited_ms, 0) // GAP_EVERY_MS)


def pair(places: Iterable[QueueEntry], now: int) -> list[tuple[QueueEntry, QueueEntry]]:
    """The races to start now: the longer-waiting player of each pair first (seat 0)."""
    pools: dict[tuple[str, int], list[QueueEntry]] = {}
    for place in places:
        pools.setdefault(place.pool, []).append(place)
    pairs: list[tuple[QueueEntry, QueueEntry]] = []
    for pool in pools.values():
        pairs += _pair_pool(pool, now)
    return pairs


def _waiting_order(e: QueueEntry) -> tuple[int, str]:
    return e.since, e.player


def _pair_pool(places: list[QueueEntry], now: int) -> list[tuple[QueueEntry, QueueEntry]]:
    by_rating = sorted(places, key=lambda e: (e.rating, *_waiting_order(e)))
    ratings = [e.rating for e in by_rating]
    widest = max(gap(now - e.since) for e in places)
    taken: set[str] = set()
    pairs = []
    for e in sorted(places, key=_waiting_order):
        if e.player in taken:
            continue
        mine = gap(now - e.since)
        reach = max(mine, widest)  # nobody further than this can be in reach
        best: tuple[int, int, str] | None = None
        partner: QueueEntry | None = None
        here = bisect_left(ratings, e.rating)
        for side in (range(here - 1, -1, -1), range(here, len(by_rating))):
            for i in side:
                o = by_rating[i]
                distance = abs(o.rating - e.rating)
                if distance > reach:
                    break
                if o.player in taken or o.player == e.player:
                    continue
                key = (distance, *_waiting_order(o))
                if distance <= max(mine, gap(now - o.since)) and (best is None or key < best):
                    best, partner = key, o
        if partner is not None:
            taken.update((e.player, partner.player))
            pairs.append((e, partner))
    return pairs
