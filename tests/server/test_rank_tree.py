"""The order statistic of the embedded store's boards (``server/store/rank_tree.py``), against counting."""

from __future__ import annotations

import random

from server.store import rank_tree
from server.store.rank_tree import (
    FINISH,
    RATINGS,
    finish_from,
    finish_position,
    rating_bounds,
    rating_position,
)


def test_ranks_and_offsets_by_the_tree_are_those_counted_one_by_one() -> None:
    rnd = random.Random(1)
    mus = [rnd.gauss(1500, 300) for _ in range(3000)] + [1e9, -1e9, 0.0, -0.1, 1500.0, 1500.0, 1500.25]
    tree = RATINGS.build([rating_position(mu) for mu in mus])
    # built at once, or a player at a time as ratings are written: the same nodes
    assert tree == RATINGS.changes((rating_position(mu), 1) for mu in mus)
    assert RATINGS.build([rating_position(mu) for mu in mus[:5]]) == RATINGS.changes(
        (rating_position(mu), 1) for mu in mus[:5]
    )
    best_first = sorted(mus, reverse=True)
    for mu in rnd.sample(mus, 300):
        better = sum(tree.get(n, 0) for n in RATINGS.before_nodes(rating_position(mu)))
        assert better == sum(1 for m in mus if rating_position(m) < rating_position(mu))
        assert len(RATINGS.before_nodes(rating_position(mu))) <= RATINGS.bits
    reads: list[int] = []

    def read(node: int) -> int:
        reads.append(node)
        return tree.get(node, 0)

    for k in range(0, len(mus), 7):
        reads.clear()
        position, before = RATINGS.descend(k, read)
        assert len(reads) <= RATINGS.bits + 1
        assert position == rating_position(best_first[k])
        assert before == sum(1 for m in mus if rating_position(m) < position)
        lo, hi = rating_bounds(position)
        assert (lo is None or best_first[k] >= lo) and (hi is None or best_first[k] < hi)


def test_a_rating_that_moves_within_its_slot_changes_no_node() -> None:
    assert RATINGS.changes([(rating_position(1500.01), -1), (rating_position(1500.2), 1)]) == {}
    moved = RATINGS.changes([(rating_position(1500.0), -1), (rating_position(1600.0), 1)])
    assert moved and RATINGS.size not in moved  # the root, the board's size, stays


def test_finishing_times_by_slot() -> None:
    assert finish_position(0) == finish_position(99) == 1 and finish_from(1) is None
    assert finish_position(100) == 2 and finish_from(2) == 100
    assert finish_position(10**9) == FINISH.size  # past the span: the last slot
    assert rank_tree.FINISH_MS * (FINISH.size - 1) == finish_from(FINISH.size)
