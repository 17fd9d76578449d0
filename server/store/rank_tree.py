"""An order statistic over ratings: how many players are ahead of a rating, and where the k-th one is. Pure.

The embedded store keeps, per variant, a Fenwick tree (a binary indexed
tree) of the board's players counted by *slot*: a quarter of a rating
point, best first. A rated race moves its two racers in it (a few nodes
each); a rank then adds up at most ``BITS + 1`` nodes for the players in
better slots, and counts only the players of the asker's own slot ahead of
them; a page at an offset finds its slot the same way (``descend``) and
walks only that slot's players before its first row. Before this a rank
counted every player ahead, and a deep page walked every one before it:
both grew with the board (docs/benchmarks.md, "The board of the best").

A slot covers ``[lo, hi)`` of ``mu``; ratings beyond the slots' span (about
±8,192, never reached: a newcomer has 1,500 ± 500) share the first or last
slot, whose outer bound is open (``None``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

BITS = 16
SLOTS = 1 << BITS
#: The width of a slot in rating points (a power of two: ``mu / WIDTH`` is exact).
WIDTH = 0.25
_ZERO = SLOTS // 2  # the slot of mu 0


def slot(mu: float) -> int:
    """The slot of ``mu``: 0 .. SLOTS - 1, higher for a higher rating."""
    return min(max(math.floor(mu / WIDTH) + _ZERO, 0), SLOTS - 1)


def bounds(s: int) -> tuple[float | None, float | None]:
    """The ratings of slot ``s``: ``lo <= mu < hi`` (None: open on that side)."""
    lo = None if s == 0 else (s - _ZERO) * WIDTH
    hi = None if s == SLOTS - 1 else (s + 1 - _ZERO) * WIDTH
    return lo, hi


def _position(s: int) -> int:
    """The tree's position of slot ``s``: 1 for the best slot, SLOTS for the worst."""
    return SLOTS - s


def changes(moves: Iterable[tuple[float, int]]) -> dict[int, int]:
    """The tree's nodes to change, and by how much, for players coming (+1) or going (-1) at each ``mu``.

    A player whose rating moves within one slot changes nothing.
    """
    out: dict[int, int] = {}
    for mu, delta in moves:
        i = _position(slot(mu))
        while i <= SLOTS:
            out[i] = out.get(i, 0) + delta
            i += i & -i
    return {node: d for node, d in out.items() if d}


def ahead_nodes(mu: float) -> list[int]:
    """The nodes whose counts add up to the players in slots better than ``mu``'s."""
    nodes = []
    i = _position(slot(mu)) - 1
    while i > 0:
        nodes.append(i)
        i -= i & -i
    return nodes


def descend(k: int, read: Callable[[int], int]) -> tuple[int, int]:
    """The slot of the board's ``k + 1``-th player (``k`` < the board's size), and the players in better slots.

    ``read(node)`` is a node's count (0 for one never written): ``BITS + 1`` reads.
    """
    position, before, step = 0, 0, SLOTS
    while step:
        node = position + step
        if node <= SLOTS:
            n = read(node)
            if before + n <= k:
                position, before = node, before + n
        step >>= 1
    return SLOTS - (position + 1), before


def build(mus: Iterable[float]) -> dict[int, int]:
    """The tree of a board holding a player at each of ``mus``: its nonzero nodes (for a data file
    from before the tree was kept). Linear in the slots, not a walk up the tree per player."""
    tree = [0] * (SLOTS + 1)
    for mu in mus:
        tree[_position(slot(mu))] += 1
    for i in range(1, SLOTS + 1):
        parent = i + (i & -i)
        if parent <= SLOTS:
            tree[parent] += tree[i]
    return {i: n for i, n in enumerate(tree) if i and n}
