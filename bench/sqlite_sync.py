"""What ``PRAGMA synchronous=FULL`` costs the embedded store per move, against ``NORMAL``.

    .venv/bin/python bench/sqlite_sync.py --rounds 7

In WAL mode NORMAL writes each commit to the WAL without an fsync (a killed
process loses nothing; an OS crash or power cut can lose the last commits),
and FULL fsyncs the WAL at every commit (nothing acknowledged is lost even
then). The store group-commits the appends of one event-loop turn, so the
price of the fsync is shared by the moves of that turn: measured here with
1 move a commit (a quiet server: every move pays a whole fsync) and 50 (a
busy one). Each round measures both settings in turn, on a fresh data file
in ``--dir`` (a real disk: ``/tmp`` may be memory), and the medians are
compared; printed per move and as FULL / NORMAL.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.match.events import Moved, Numbers  # noqa: E402
from server.store.sqlite import SqliteStore  # noqa: E402
from tests.store_events import opening  # noqa: E402

NUMBERS = Numbers(leftover=72, on_grid=24, complete=0, moves=1)
MODES = ("NORMAL", "FULL")


def code(n: int) -> str:
    alphabet = "34679ACDEFGHJKMNPQRTUVWXY"
    return "".join(alphabet[(n // len(alphabet) ** i) % len(alphabet)] for i in range(8))


async def per_move_us(directory: Path, mode: str, batch: int, moves: int) -> float:
    """Microseconds of wall time per move, ``batch`` moves (of as many matches) a commit."""
    store = SqliteStore(str(directory / f"{mode}-{batch}.db"))
    store._db.execute(f"PRAGMA synchronous={mode}")
    matches = [code(n) for n in range(batch)]
    for m in matches:
        await store.append(m, 0, opening(m))
    ev = 2
    started = time.perf_counter()
    for seq in range(1, moves // batch + 1):
        ev += 1
        await asyncio.gather(
            *(
                store.append(m, ev - 1, [Moved(ev=ev, at=ev, seat=0, seq=seq, move="T", numbers=NUMBERS)])
                for m in matches
            )
        )
    elapsed = time.perf_counter() - started
    await store.close()
    return elapsed / (moves // batch * batch) * 1e6


async def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--moves", type=int, default=500, help="moves a measurement")
    ap.add_argument("--dir", type=Path, default=ROOT / "data", help="where the data files go (a real disk)")
    args = ap.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    figures: dict[tuple[str, int], list[float]] = {(mode, batch): [] for mode in MODES for batch in (1, 50)}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            for batch in (1, 50):
                for mode in MODES:
                    figures[(mode, batch)].append(await per_move_us(Path(tmp), mode, batch, args.moves))
    print(f"{args.rounds} rounds of {args.moves} moves per setting, data files in {args.dir}:")
    for batch in (1, 50):
        normal, full = (statistics.median(figures[(mode, batch)]) for mode in MODES)
        spread = {mode: (min(figures[(mode, batch)]), max(figures[(mode, batch)])) for mode in MODES}
        print(f"  {batch:2d} move(s) a commit: NORMAL {normal:8.0f} us/move ({spread['NORMAL'][0]:.0f}-"
              f"{spread['NORMAL'][1]:.0f}), FULL {full:8.0f} us/move ({spread['FULL'][0]:.0f}-"
              f"{spread['FULL'][1]:.0f}); FULL / NORMAL {full / normal:5.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
