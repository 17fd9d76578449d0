"""Order statistics for the embedded store's boards: how many players are ahead, and where the k-th one is. Pure.

SQLite has no rank index: a player's rank was a count of the players ahead,
and a deep page walked every player before it (10 ms at the end of 100,000;
docs/benchmarks.md, "The board of the best"). So the store keeps a Fenwick
tree (a binary indexed tree) of each board, counting its players by *slot*
in the board's order (position 1 first): a result moves a player in it (a
few nodes), a rank adds up at most ``bits + 1`` nodes for the players in
the slots before its own and counts only the players of its own slot ahead
of it, and a page at an offset finds its slot the same way (``descend``) and
walks only that slot's players before its first row.

Two boards use it:

- the board of the best ratings of a variant (``RATINGS``): slots of a
  quarter of a rating point, best first. Ratings beyond the slots' span
  (about ±8,192, never reached: a newcomer has 1,500 ± 500) share the first
  or last slot, whose outer bound is open (``None``);
- a day's leaderboard, one tree per score (``FINISH``): slots of 100 ms of
  the time to finish, fastest first; past 6,553 s all share the last one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Tree:
    """The shape of a Fenwick tree over ``2**bits`` positions; its nodes' counts are the store's."""

    bits: int

    @property
    def size(self) -> int:
        return 1 << self.bits

    def changes(self, moves: Iterable[tuple[int, int]]) -> dict[int, int]:
        """The nodes to change, and by how much, for players coming (+1) or going (-1) at each position.

        A player who moves within one position changes nothing.
        """
        out: dict[int, int] = {}
        for position, delta in moves:
            i = position
            while i <= self.size:
                out[i] = out.get(i, 0) + delta
                i += i & -i
        return {node: d for node, d in out.items() if d}

    def before_nodes(self, position: int) -> list[int]:
        """The nodes whose counts add up to the players at positions before ``position``."""
        nodes = []
        i = position - 1
        while i > 0:
            nodes.append(i)
            i -= i & -i
        return nodes

    def descend(self, k: int, read: Callable[[int], int]) -> tuple[int, int]:
        """The position of the ``k + 1``-th player (``k`` < the players counted), and the players before it.

        ``read(node)`` is a node's count (0 for one never written): ``bits + 1`` reads.
        """
        position, before, step = 0, 0, self.size
        while step:
            node = position + step
            if node <= self.size:
                n = read(node)
                if before + n <= k:
                    position, before = node, before + n
            step >>= 1
        return position + 1, before

    def build(self, positions: Sequence[int]) -> dict[int, int]:
        """The nonzero nodes of a tree counting a player at each of ``positions`` (for a data file from
        before the tree was kept): a walk up the tree per player for a few, else once over the tree."""
        if len(positions) * (self.bits + 1) < self.size:
            return self.changes((position, 1) for position in positions)
        tree = [0] * (self.size + 1)
        for position in positions:
            tree[position] += 1
        for i in range(1, self.size + 1):
            parent = i + (i & -i)
            if parent <= self.size:
                tree[parent] += tree[i]
        return {i: n for i, n in enumerate(tree) if i and n}


RATINGS = Tree(16)
#: The width of a rating slot in rating points (a power of two: ``mu / WIDTH`` is exact).
WIDTH = 0.25
_ZERO = RATINGS.size // 2  # the slot of mu 0


def rating_position(mu: float) -> int:
    """The position of ``mu`` on a board of the best: 1 for the best slot."""
    return RATINGS.size - min(max(math.floor(mu / WIDTH) + _ZERO, 0), RATINGS.size - 1)


def rating_bounds(position: int) -> tuple[float | None, float | None]:
    """The ratings at ``position``: ``lo <= mu < hi`` (None: open on that side)."""
    s = RATINGS.size - position
    lo = None if s == 0 else (s - _ZERO) * WIDTH
    hi = None if s == RATINGS.size - 1 else (s + 1 - _ZERO) * WIDTH
    return lo, hi


FINISH = Tree(16)
#: The width of a finishing-time slot, in ms.
FINISH_MS = 100


def finish_position(time_ms: int) -> int:
    """The position of a time to finish on its score's tree: 1 for the fastest slot."""
    return min(max(time_ms, 0) // FINISH_MS, FINISH.size - 1) + 1


def finish_from(position: int) -> int | None:
    """The least time to finish at ``position`` (None: the first, open below)."""
    return None if position == 1 else (position - 1) * FINISH_MS
