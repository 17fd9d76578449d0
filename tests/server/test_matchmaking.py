"""Who races whom: the pairing rules on their own, with the time passed in."""

from __future__ import annotations

import math
import random

import pytest
from counting import count_calls
from hypothesis import given
from hypothesis import strategies as st

import server.matchmaking
from server.matchmaking import ANYONE_AFTER_MS, gap, pair
from server.store import QueueEntry

T0 = 1_000_000


def place(
    player: str, rating: int, since: int = T0, variant: str = "classic", clock: int = 300
) -> QueueEntry:
    return QueueEntry(player, player.title(), f"i-{player}", variant, clock, rating, since, "h")


def names(pairs: list[tuple[QueueEntry, QueueEntry]]) -> list[tuple[str, str]]:
    return [(a.player, b.player) for a, b in pairs]


def test_the_window_widens_with_the_wait_and_takes_anyone_after_30_s() -> None:
    assert gap(0) == 100
    assert gap(4_999) == 100
    assert gap(5_000) == 200
    assert gap(25_000) == 600
    assert gap(ANYONE_AFTER_MS) == math.inf


def test_ratings_too_far_apart_wait_until_the_window_reaches_them() -> None:
    ann, bob = place("ann", 1500), place("bob", 1850)
    assert pair([ann, bob], T0) == []
    assert pair([ann, bob], T0 + 14_999) == []  # 300 apart is not 350
    assert names(pair([ann, bob], T0 + 15_000)) == [("ann", "bob")]


def test_a_long_wait_accepts_anyone_and_a_newcomer_is_taken_by_it() -> None:
    old, new = place("old", 900, since=T0), place("new", 2400, since=T0 + 30_000)
    assert names(pair([old, new], T0 + 30_000)) == [("old", "new")]


def test_the_longest_waiting_picks_first_and_takes_the_nearest_rating() -> None:
    first = place("first", 1500, since=T0)
    near = place("near", 1530, since=T0 + 2)
    far = place("far", 1590, since=T0 + 1)
    other = place("other", 1580, since=T0 + 3)
    assert names(pair([far, near, other, first], T0 + 10)) == [("first", "near"), ("far", "other")]


def test_equal_distance_goes_to_whoever_waited_longer() -> None:
    head = place("head", 1500, since=T0)
    early, late = place("early", 1550, since=T0 + 5), place("late", 1450, since=T0 + 9)
    assert names(pair([late, early, head], T0 + 10)) == [("head", "early")]


def test_a_player_who_left_and_joined_again_is_behind_those_who_stayed() -> None:
    """Their place's time is their last join: rejoining never pushes them ahead."""
    head = place("head", 1500, since=T0)
    stayed = place("stayed", 1500, since=T0 + 100)
    churner = place("churner", 1500, since=T0 + 900)  # joined first, then left and joined again
    assert names(pair([churner, stayed, head], T0 + 1000)) == [("head", "stayed")]


def test_queues_of_other_variants_or_clocks_never_mix() -> None:
    places = [place("a", 1500), place("b", 1500, variant="relaxed"), place("c", 1500, clock=600)]
    assert pair(places, T0 + ANYONE_AFTER_MS) == []


@given(
    st.lists(
        st.tuples(st.integers(800, 2600), st.integers(0, 60_000), st.sampled_from([180, 300])),
        max_size=40,
    ),
    st.integers(0, 60_000),
)
def test_nobody_is_paired_twice_or_with_themselves_and_every_pair_is_in_reach(
    entries: list[tuple[int, int, int]], later: int
) -> None:
    places = [place(f"p{i}", r, since=T0 + s, clock=c) for i, (r, s, c) in enumerate(entries)]
    now = T0 + 60_000 + later
    pairs = pair(places, now)
    seen = [e.player for pair_ in pairs for e in pair_]
    assert len(seen) == len(set(seen))
    for a, b in pairs:
        assert a.player != b.player and a.pool == b.pool
        assert abs(a.rating - b.rating) <= max(gap(now - a.since), gap(now - b.since))
        assert (a.since, a.player) < (b.since, b.player)  # the longer waiting sits first
    left = [e for e in places if e.player not in seen]
    for pool in {e.pool for e in left}:  # nobody left over could still have raced another left over
        waiting = [e for e in left if e.pool == pool]
        for i, a in enumerate(waiting):
            for b in waiting[i + 1 :]:
                assert abs(a.rating - b.rating) > max(gap(now - a.since), gap(now - b.since))


def by_the_rule(places: list[QueueEntry], now: int) -> list[tuple[str, str]]:
    """The pairing rule as written in the module's docstring, every pair looked at (the reference)."""
    free = sorted(places, key=lambda e: (e.since, e.player))
    pairs = []
    for e in list(free):
        if e not in free:
            continue
        reach = [
            o
            for o in free
            if o is not e
            and o.pool == e.pool
            and abs(o.rating - e.rating) <= max(gap(now - e.since), gap(now - o.since))
        ]
        if reach:
            o = min(reach, key=lambda o: (abs(o.rating - e.rating), o.since, o.player))
            free.remove(e)
            free.remove(o)
            pairs.append((e.player, o.player))
    return pairs


@given(
    st.lists(
        st.tuples(st.integers(1000, 1600), st.integers(0, 40_000), st.sampled_from([180, 300])),
        max_size=40,
    )
)
def test_the_pairs_are_those_of_the_rule(entries: list[tuple[int, int, int]]) -> None:
    places = [place(f"p{i}", r, since=T0 - s, clock=c) for i, (r, s, c) in enumerate(entries)]
    assert sorted(names(pair(places, T0))) == sorted(by_the_rule(places, T0))  # pools in any order


def test_a_round_looks_at_each_place_a_few_times_whatever_the_queue_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A seeker scanned every place in reach, the taken ones too: 1,000 waiting were a round of
    1.2 s on the event loop (docs/benchmarks.md, "Loads nobody ran"). Counted: windows worked out."""
    rnd = random.Random(7)
    places = [
        place(f"p{i}", int(rnd.gauss(1500, 200)), since=T0 - (31_000 if i == 0 else rnd.randint(0, 4_000)))
        for i in range(1_000)
    ]
    windows = count_calls(monkeypatch, server.matchmaking, "gap")
    pairs = pair(places, T0)
    assert len(pairs) >= 495  # nearly everyone: most have someone within 100
    assert windows[0] <= len(places)  # once each; it was 251,524 times
