"""Engine speed on seeds "1".."1000" (classic): the figures of docs/benchmarks.md.

Run: ``.venv/bin/python bench/engine.py [--seeds N] [--runs R]``. Never part of
the test run. Each run plays one random legal game per seed, choosing moves
with ``random.Random(seed)`` so every run and every engine version plays the
same games, and reports three rates:

- checked moves/s: only the ``play()`` calls are timed, given the chosen
  ``Move``, and again given its text (a second pass replays the same games
  from their texts), which is what the server validates for a player;
- legal_moves()/s: only the ``legal_moves()`` calls, one before every move;
- whole games/s: the wall time of deal + (legal_moves, choose, play, is_over)
  until the game is over, with the deal cache cleared first so dealing counts;
  the moves played per second of that wall time are printed beside it.

With several runs the median of each rate is printed last, because this box
is shared and noisy.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence

from server.engine import Game, shuffled_deck

VARIANT = "classic"


def timed_playouts(seeds: Sequence[str], logs: list[list[str]]) -> tuple[int, float, int, float]:
    """Play one game per seed, appending its texts to ``logs``.

    Returns (plays, play seconds, listings, listing seconds).
    """
    clock = time.perf_counter
    plays = listings = 0
    play_time = listing_time = 0.0
    for seed in seeds:
        log: list[str] = []
        logs.append(log)
        rng = random.Random(seed)
        game = Game.new(seed, VARIANT)
        while not game.is_over:
            t0 = clock()
            moves = game.legal_moves()
            t1 = clock()
            move = rng.choice(moves)
            t2 = clock()
            game.play(move)
            t3 = clock()
            listing_time += t1 - t0
            play_time += t3 - t2
            listings += 1
            plays += 1
            log.append(str(move))
    return plays, play_time, listings, listing_time


def timed_text_plays(seeds: Sequence[str], logs: Sequence[Sequence[str]]) -> float:
    """Seconds spent in ``play(text)`` replaying every logged game."""
    clock = time.perf_counter
    play_time = 0.0
    for seed, log in zip(seeds, logs, strict=True):
        game = Game.new(seed, VARIANT)
        for text in log:
            t0 = clock()
            game.play(text)
            play_time += clock() - t0
    return play_time


def whole_games(seeds: Sequence[str]) -> float:
    """Seconds to deal and randomly play out every seed's game."""
    shuffled_deck.cache_clear()
    start = time.perf_counter()
    for seed in seeds:
        rng = random.Random(seed)
        game = Game.new(seed, VARIANT)
        while not game.is_over:
            game.play(rng.choice(game.legal_moves()))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000, help="play seeds 1..N (default 1000)")
    parser.add_argument("--runs", type=int, default=3, help="repeat and report medians (default 3)")
    args = parser.parse_args()
    seeds = [str(i) for i in range(1, args.seeds + 1)]
    names = ("play(Move)/s", "play(text)/s", "legal_moves()/s", "games/s", "moves/s in games")
    rates: list[tuple[float, ...]] = []
    for run in range(1, args.runs + 1):
        logs: list[list[str]] = []
        plays, play_time, listings, listing_time = timed_playouts(seeds, logs)
        text_time = timed_text_plays(seeds, logs)
        games_time = whole_games(seeds)
        rate = (
            plays / play_time,
            plays / text_time,
            listings / listing_time,
            len(seeds) / games_time,
            plays / games_time,
        )
        rates.append(rate)
        figures = ", ".join(f"{name} {value:,.0f}" for name, value in zip(names, rate, strict=True))
        print(f"run {run}: {figures} ({plays / len(seeds):.1f} moves/game)")
    medians = [statistics.median(r[i] for r in rates) for i in range(len(names))]
    figures = ", ".join(f"{name} {value:,.0f}" for name, value in zip(names, medians, strict=True))
    print(f"median of {len(rates)}: {figures}")


if __name__ == "__main__":
    main()
