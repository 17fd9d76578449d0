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
from bisect import bisect_left, insort
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
    """Each place in waiting order takes the best partner still free, found by bisection.

    The free places are kept by window (``gap``: a handful of widths), each
    sorted by rating: a window's nearest free rating on either side of the
    seeker is its only candidate, so a seeker costs a few look-ups whatever
    the queue holds. Scanning outward from the seeker's rating visited every
    place in reach, the taken ones too, and with 1,000 waiting a round took
    1.2 s of the event loop, 10 s for 2,000 once one of them had waited 30 s
    (docs/benchmarks.md, "Loads nobody ran").
    """
    windows: dict[float, list[tuple[int, int, str]]] = {}
    by_key: dict[tuple[int, int, str], QueueEntry] = {}
    window_of: dict[str, float] = {}
    for e in places:
        key = (e.rating, *_waiting_order(e))
        window_of[e.player] = gap(now - e.since)
        by_key[key] = e
        windows.setdefault(window_of[e.player], []).append(key)
    for keys in windows.values():
        keys.sort()
    pairs = []
    for e in sorted(places, key=_waiting_order):
        mine = window_of[e.player]
        own = windows[mine]
        here = bisect_left(own, (e.rating, *_waiting_order(e)))
        if here == len(own) or by_key[own[here]] is not e:
            continue  # taken already
        del own[here]
        best: tuple[int, int, str] | None = None
        for width, keys in windows.items():
            for found in _nearest(keys, e.rating):
                distance = abs(found[0] - e.rating)
                if distance <= max(mine, width) and (best is None or (distance, *found[1:]) < best):
                    best = (distance, *found[1:])
                    partner_key, partner_window = found, width
        if best is None:
            insort(own, (e.rating, *_waiting_order(e)))  # free for a later seeker
            continue
        partner_keys = windows[partner_window]
        del partner_keys[bisect_left(partner_keys, partner_key)]
        pairs.append((e, by_key[partner_key]))
    return pairs


def _nearest(keys: list[tuple[int, int, str]], rating: int) -> list[tuple[int, int, str]]:
    """The longest-waiting place of the nearest rating at or above ``rating``, and of the nearest below."""
    out = []
    at = bisect_left(keys, (rating,))
    if at < len(keys):
        out.append(keys[at])
    if at > 0:
        below = keys[at - 1][0]
        out.append(keys[bisect_left(keys, (below,))])
    return out
