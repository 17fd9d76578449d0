"""Memory a match holds: while both racers play, and once it is decided.

A server keeps a decided match in memory for a while (``FINISHED_TTL_MS`` in
``server/hub.py``) so that a rematch, a resume or a late spectator finds it;
under a steady stream of quick games those decided matches are most of what
it holds. This drives ``Match`` sans-I/O (decide, apply) with greedy racers
and counts the bytes still allocated per match with ``tracemalloc``.

    python bench/match_memory.py --matches 200
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

from server.engine.players import greedy_move
from server.hub import new_code
from server.match import Duplicate, Event, Match

T0 = 1_800_000_000_000


def opened(code: str, seed: str) -> Match:
    log = Match.open(
        code, variant="classic", seed=seed, seats=2, time_limit_s=600, name="Ann",
        token=f"{code}-a" * 4, player=None, now=T0,
    )  # fmt: skip
    match = Match.from_events(log, 60_000)
    apply(match, match.decide_join("Bob", f"{code}-b" * 4, None, T0))
    for seat in (0, 1):
        apply(match, match.decide_ready(seat, T0))
    apply(match, match.tick(match.starts_at))
    return match


def apply(match: Match, events: list[Event] | Duplicate) -> None:
    assert not isinstance(events, Duplicate)
    for e in events:
        match.apply(e)


def race(match: Match, moves_each: int | None) -> Match:
    """Greedy moves in turn until both racers ended (or made ``moves_each``)."""
    now = match.started_at + 1
    for seq in range(1, (moves_each or 10_000) + 1):
        for seat in (0, 1):
            s = match.seat(seat)
            if s.ended is not None or s.game is None:
                continue
            move = greedy_move(s.game)
            if move is None:
                apply(match, match.decide_finish(seat, now))
            else:
                apply(match, match.decide_move(seat, seq, move.text, now))
        if match.status == "finished":
            match.take_plays()  # what the hub's ``Replays`` does at the decision: built, they are dropped
            break
    return match


def kib_per_match(matches: int, moves_each: int | None) -> float:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept = [race(opened(new_code(), str(i)), moves_each) for i in range(matches)]
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert len(kept) == matches
    return used / matches / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=200)
    args = ap.parse_args()
    kib_per_match(20, None)  # warm the move and deal caches, which every match shares
    print(f"{args.matches} matches of classic, greedy racers (tracemalloc, bytes still allocated):")
    print(f"  playing, 30 moves each: {kib_per_match(args.matches, 30):6.1f} KiB per match")
    print(f"  decided:                {kib_per_match(args.matches, None):6.1f} KiB per match")


if __name__ == "__main__":
    main()
