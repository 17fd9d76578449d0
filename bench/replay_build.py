"""The CPU a replay costs where its match is decided (``Replays``), and its size: this checkout
against another revision's ``server/replay.py``, in one process.

Run: ``PYTHONPATH=. .venv/bin/python bench/replay_build.py [--base REV] [--runs N]`` (the path: the
venv's editable install would import the main checkout's ``server``). Never part of the test run.

Two decided results, each a race of two seats on the same deal: ``greedy``, a
classic game played to its end by the engine's greedy player (``greedy_move``),
as long as a real race; and ``long``, ``bench/abuse.py``'s 2,000-play game
(free-swap, one swap back and forth), the longest a replay gets. For each,
the time of ``packed_replay`` (what the event loop pays at the decision: the
plays, the JSON, the gzip) per version, interleaved run by run, the median of
``--runs`` and the ratio this/base: this checkout's both ways, from the plays
the match kept (``Match.take_plays``, as ``Replays`` builds it) and with the
logs replayed (a replay built on request); then the JSON's size and the
gzipped size at levels 1 and 6 with their times (this checkout's body).
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType

import server.replay
from server import protocol as p
from server.engine import Game
from server.engine.players import greedy_move

LONG_GAME_PLAYS = 2000


def _imported(rev: str, name: str) -> ModuleType:
    """``server/NAME.py`` as it is at ``rev``, imported beside this checkout's as ``server._NAME_base``."""
    source = subprocess.run(
        ["git", "show", f"{rev}:server/{name}.py"], capture_output=True, check=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp(prefix="replay-build-")) / f"{name}_base.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"server._{name}_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def base_module(rev: str) -> ModuleType:
    """``server/replay.py`` as it is at ``rev``, with ``rev``'s ``server/protocol.py`` (which builds its plays)."""
    module = _imported(rev, "replay")
    module.p = _imported(rev, "protocol")
    return module


def result(variant: str, seed: str, moves: list[str]) -> p.Result:
    """A decided race of two seats that both played ``moves``."""
    score = Game.replay(seed, variant, moves).leftover
    seats = [
        p.SeatResult(
            seat=n,
            name=f"racer {n}",
            score=score,
            rating=None,
            on_grid=0,
            complete=0,
            reason="finished",
            finished_at=1_000_000,
            moves=moves,
        )
        for n in (0, 1)
    ]
    return p.Result(
        ev=1, match="ACDEFGHJ", variant=variant, seed=seed, started_at=0, seats=seats, winner=None, draw=True
    )


def greedy_game(seed: str) -> list[str]:
    game = Game.new(seed, "classic")
    while (move := greedy_move(game)) is not None:
        game.play(move)
    return [m.text for m in game.moves]


def swap_game(seed: str) -> list[str]:
    game = Game.new(seed, "free-swap")
    swap = next(m for m in game.legal_texts() if "~" in m)
    for _ in range(LONG_GAME_PLAYS):
        game.play(swap)
    return [m.text for m in game.moves]


def timed(work: Callable[[], object]) -> float:
    """The time ``work`` takes, in ms."""
    began = time.perf_counter()
    work()
    return (time.perf_counter() - began) * 1000


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="main", help="the revision to compare with (default: main)")
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args(argv)
    base = base_module(args.base)
    games = {
        "greedy": result("classic", "12345", greedy_game("12345")),
        "long": result("free-swap", "7", swap_game("7")),
    }
    print(f"packed_replay per decided race (2 seats), ms: median of {args.runs} runs, interleaved")
    for name, r in games.items():
        plays = len(r.seats[0].moves)
        # The plays as the match kept them: the engine's, one by one (what ``Match.apply`` takes).
        kept = {s.seat: server.replay._replayed(r.seed or "", r.variant, s.moves, s.score) for s in r.seats}
        ours, replayed, theirs = [], [], []
        for _ in range(args.runs):
            theirs.append(timed(partial(base.packed_replay, r)))
            ours.append(timed(partial(server.replay.packed_replay, r, kept)))
            replayed.append(timed(partial(server.replay.packed_replay, r)))
        a, c, b = statistics.median(ours), statistics.median(replayed), statistics.median(theirs)
        assert server.replay.replay_body(r, kept) == server.replay.replay_body(r)
        old_raw, old_packed = len(base.replay_body(r)), len(base.packed_replay(r))
        print(
            f"{name} ({plays} moves a seat): base {b:.2f} ms, this from kept plays {a:.2f} ms "
            f"(this/base {a / b:.3f}), this with the logs replayed {c:.2f} ms (this/base {c / b:.3f})"
        )
        print(f"  base body: {old_raw:,} B JSON, {old_packed:,} B gzipped")
        raw = server.replay.replay_body(r)
        for level in (1, 6, 9):
            spent = statistics.median(timed(partial(gzip.compress, raw, level)) for _ in range(args.runs))
            print(
                f"  this body: {len(raw):,} B JSON, gzip -{level}: {len(gzip.compress(raw, level)):,} B in {spent:.3f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
