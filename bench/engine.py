"""Engine speed on seeds "1".."1000" (classic): the figures of docs/benchmarks.md.

Run: ``.venv/bin/python bench/engine.py [--seeds N] [--runs R] [--against DIR]``.
Never part of the test run. Each run plays one random legal game per seed,
choosing moves with ``random.Random(seed)`` so every run and every engine
version plays the same games, and reports these rates:

- checked moves/s: only the ``play()`` calls are timed, given the chosen
  ``Move``, and again given its text (a second pass replays the same games
  from their texts), which is what the server validates for a player;
- legal_moves()/s: only the ``legal_moves()`` calls, one before every move;
- legal_texts()/s: the sorted texts the server lists in a view, one call
  before every move, timed alone;
- undo()/s: each game taken back move by move after it ended, timed alone;
- revealed()/s and check()/s: what a protocol v2 ack adds to a move (the
  cards the play brought into view, the CRC-32 of the position text), one
  call each after every play, timed alone; printed also as a share of a
  play(text), the server's own work on a move, from the same run;
- whole games/s: the wall time of deal + (legal_moves, choose, play, is_over)
  until the game is over, with the deal cache cleared first so dealing counts;
  the moves played per second of that wall time are printed beside it.

``--against DIR`` times another checkout's engine (``DIR/server/engine``, say
``main``'s worktree) in the same process, alternating with this one run by
run, and prints each figure's ratio this/that: on this shared, noisy box a
ratio from one run says more than two bare rates from two. Calls that engine
lacks are not timed for it. With several runs the medians are printed last.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import server.engine

VARIANT = "classic"
CALLS = ("play", "legal_moves", "legal_texts", "undo", "revealed", "check")
FIGURES = (
    "play(Move)/s",
    "play(text)/s",
    "legal_moves()/s",
    "legal_texts()/s",
    "undo()/s",
    "revealed()/s",
    "check()/s",
    "games/s",
    "moves/s in games",
)
Rates = dict[str, float]


@dataclass
class Timed:
    """Calls counted and seconds spent, per engine call timed alone."""

    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CALLS, 0))
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CALLS, 0.0))

    def add(self, name: str, seconds: float) -> None:
        self.calls[name] += 1
        self.seconds[name] += seconds

    def rate(self, name: str) -> float:
        return self.calls[name] / self.seconds[name] if self.seconds[name] else float("nan")


def load_engine(root: Path) -> ModuleType:
    """The engine package of the checkout at ``root``, imported beside ours as ``baseline_engine``."""
    init = root / "server" / "engine" / "__init__.py"
    spec = importlib.util.spec_from_file_location("baseline_engine", init, submodule_search_locations=[])
    if spec is None or spec.loader is None:
        raise SystemExit(f"no engine at {init}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_engine"] = module
    spec.loader.exec_module(module)
    return module


def lacking() -> None:
    """Stands for a call the engine timed lacks."""


def timed_playouts(engine: ModuleType, seeds: Sequence[str], logs: list[list[str]]) -> Timed:
    """Play one game per seed, appending its texts to ``logs``, then take it back."""
    clock = time.perf_counter
    timed = Timed()
    for seed in seeds:
        log: list[str] = []
        logs.append(log)
        rng = random.Random(seed)
        game = engine.Game.new(seed, VARIANT)
        revealed: Callable[[], Any] = getattr(game, "revealed", lacking)
        check: Callable[[], Any] = getattr(game, "check", lacking)
        while not game.is_over:
            t0 = clock()
            moves = game.legal_moves()
            t1 = clock()
            game.legal_texts()
            t2 = clock()
            move = rng.choice(moves)
            t3 = clock()
            game.play(move)
            t4 = clock()
            revealed()
            t5 = clock()
            check()
            t6 = clock()
            timed.add("legal_moves", t1 - t0)
            timed.add("legal_texts", t2 - t1)
            timed.add("play", t4 - t3)
            if revealed is not lacking:
                timed.add("revealed", t5 - t4)
                timed.add("check", t6 - t5)
            log.append(str(move))
        while game.moves:
            t0 = clock()
            game.undo()
            timed.add("undo", clock() - t0)
    return timed


def timed_text_plays(engine: ModuleType, seeds: Sequence[str], logs: Sequence[Sequence[str]]) -> float:
    """Seconds spent in ``play(text)`` replaying every logged game."""
    clock = time.perf_counter
    play_time = 0.0
    for seed, log in zip(seeds, logs, strict=True):
        game = engine.Game.new(seed, VARIANT)
        for text in log:
            t0 = clock()
            game.play(text)
            play_time += clock() - t0
    return play_time


def whole_games(engine: ModuleType, seeds: Sequence[str]) -> float:
    """Seconds to deal and randomly play out every seed's game."""
    engine.shuffled_deck.cache_clear()
    start = time.perf_counter()
    for seed in seeds:
        rng = random.Random(seed)
        game = engine.Game.new(seed, VARIANT)
        while not game.is_over:
            game.play(rng.choice(game.legal_moves()))
    return time.perf_counter() - start


def measure(engine: ModuleType, seeds: Sequence[str]) -> tuple[Rates, float]:
    """One run's rates, and its moves per game."""
    logs: list[list[str]] = []
    timed = timed_playouts(engine, seeds, logs)
    plays = timed.calls["play"]
    text_time = timed_text_plays(engine, seeds, logs)
    games_time = whole_games(engine, seeds)
    rates = (
        timed.rate("play"),
        plays / text_time,
        timed.rate("legal_moves"),
        timed.rate("legal_texts"),
        timed.rate("undo"),
        timed.rate("revealed"),
        timed.rate("check"),
        len(seeds) / games_time,
        plays / games_time,
    )
    return dict(zip(FIGURES, rates, strict=True)), plays / len(seeds)


def shown(rates: Rates) -> str:
    return ", ".join(f"{name} {value:,.0f}" for name, value in rates.items() if value == value)


def medians(runs: Sequence[Rates]) -> Rates:
    return {name: statistics.median(r[name] for r in runs) for name in FIGURES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1000, help="play seeds 1..N (default 1000)")
    parser.add_argument("--runs", type=int, default=3, help="repeat and report medians (default 3)")
    parser.add_argument("--against", type=Path, help="a checkout whose engine to time alongside, as a ratio")
    args = parser.parse_args()
    seeds = [str(i) for i in range(1, args.seeds + 1)]
    baseline = load_engine(args.against) if args.against else None
    ours: list[Rates] = []
    theirs: list[Rates] = []
    for run in range(1, args.runs + 1):
        if baseline is not None:
            rates, _ = measure(baseline, seeds)
            theirs.append(rates)
            print(f"run {run}, {args.against}: {shown(rates)}")
        rates, per_game = measure(server.engine, seeds)
        ours.append(rates)
        print(f"run {run}: {shown(rates)} ({per_game:.1f} moves/game)")
    print(f"median of {len(ours)}: {shown(medians(ours))}")
    for name in ("revealed()/s", "check()/s"):
        share = statistics.median(r["play(text)/s"] / r[name] for r in ours)
        print(f"{name[:-2]} per move: {share:.1%} of a play(text) (median of the runs' ratios)")
    if theirs:
        ratios = {
            name: statistics.median(o[name] / t[name] for o, t in zip(ours, theirs, strict=True))
            for name in FIGURES
            if theirs[0][name] == theirs[0][name]
        }
        print(
            "this/that, median of the runs' ratios: " + ", ".join(f"{n} {r:.2f}" for n, r in ratios.items())
        )


if __name__ == "__main__":
    main()
