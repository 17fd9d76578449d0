"""The hint against greedy, paired on the same deals: mean leftover, paired difference and its standard error.

Run: ``.venv/bin/python bench/hint_vs_greedy.py --variants classic --first-deal 1 --deals 1000``
(one process; rows go to ``--out`` as JSON lines as they come, and a run
resumes from that file). The hint is played through ``Game`` move by move,
as the server does; greedy is ``play_out(..., "greedy")``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from pathlib import Path

from server.engine import Game
from server.engine.players import play_out


def run_one(variant: str, seed: str, budget_s: float) -> dict[str, object]:
    greedy = play_out(Game.new(seed, variant), "greedy", random.Random(0))
    calls: list[float] = []
    score = play_out(Game.new(seed, variant), "hint", random.Random(int(seed)), budget_s, calls)
    return {
        "variant": variant,
        "seed": seed,
        "greedy": greedy,
        "hint": score,
        "calls": len(calls),
        "mean_call": statistics.fmean(calls) if calls else 0.0,
        "max_call": max(calls, default=0.0),
    }


def summary(rows: list[dict[str, object]]) -> str:
    out = []
    for variant in dict.fromkeys(str(r["variant"]) for r in rows):
        rs = [r for r in rows if r["variant"] == variant]
        g = [float(r["greedy"]) for r in rs]  # type: ignore[arg-type]
        h = [float(r["hint"]) for r in rs]  # type: ignore[arg-type]
        d = [a - b for a, b in zip(h, g, strict=True)]
        se = statistics.stdev(d) / len(d) ** 0.5 if len(d) > 1 else 0.0
        calls = [float(r["mean_call"]) for r in rs]  # type: ignore[arg-type]
        worst = max(float(r["max_call"]) for r in rs)  # type: ignore[arg-type]
        better = sum(1 for x in d if x < 0)
        worse = sum(1 for x in d if x > 0)
        out.append(
            f"| {variant} | {len(rs)} | {statistics.fmean(g):.2f} | {statistics.fmean(h):.2f} "
            f"| {statistics.fmean(d):+.2f} ± {se:.2f} | {better} / {worse} "
            f"| {statistics.fmean(calls) * 1000:.0f} | {worst:.2f} |"
        )
    head = (
        "| variant | deals | greedy mean | hint mean | hint - greedy (± s.e.) | deals better / worse "
        "| mean call (ms) | slowest call (s) |\n|---|---|---|---|---|---|---|---|"
    )
    return head + "\n" + "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variants", nargs="*", default=["classic"])
    parser.add_argument("--first-deal", type=int, default=1)
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--budget-s", type=float, default=1.0, help="the hint's budget per call")
    parser.add_argument("--out", type=Path, default=Path("hint_vs_greedy.jsonl"))
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.out.read_text().splitlines()] if args.out.exists() else []
    done = {(r["variant"], r["seed"]) for r in rows}
    with args.out.open("a") as f:
        for variant in args.variants:
            for n in range(args.first_deal, args.first_deal + args.deals):
                if (variant, str(n)) in done:
                    continue
                row = run_one(variant, str(n), args.budget_s)
                rows.append(row)
                f.write(json.dumps(row) + "\n")
                f.flush()
    wanted = {
        (v, str(n)) for v in args.variants for n in range(args.first_deal, args.first_deal + args.deals)
    }
    print(summary([r for r in rows if (r["variant"], r["seed"]) in wanted]))


if __name__ == "__main__":
    main()
