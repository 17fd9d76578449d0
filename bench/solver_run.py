"""Solver statistics: par, proven share and win rate over deals 1..N, beside greedy and hint scores.

Run: ``.venv/bin/python bench/solver_run.py --deals 200 --budget-s 3 --hint-deals 10``
(needs the ``bench`` extra: tqdm, matplotlib). Rewrites the figures block of
``docs/solver.md`` (between the markers) and the PNG plots beside it; the
rest of that page is hand-written and kept.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib
from tqdm import tqdm  # type: ignore[import-untyped,unused-ignore]

from server.engine import VARIANTS, Game
from server.engine.players import play_out
from server.engine.solver import solve

matplotlib.use("Agg")
import matplotlib.pyplot as plt

DOCS = Path(__file__).resolve().parent.parent / "docs"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"


def run_one(task: tuple[str, str, str, float]) -> dict[str, Any]:
    kind, variant, seed, budget = task
    started = time.perf_counter()
    out: dict[str, Any] = {"kind": kind, "variant": variant, "seed": seed}
    if kind == "solve":
        sol = solve(seed, variant, budget_s=budget)  # replays the line, raises if it disagrees
        out.update(
            par=sol.par, proven=sol.proven, lower_bound=sol.lower_bound, nodes=sol.nodes, budget=budget
        )
    elif kind == "hint":
        calls: list[float] = []
        score = play_out(Game.new(seed, variant), "hint", random.Random(int(seed)), budget, calls)
        out.update(score=score, calls=len(calls), max_call=max(calls, default=0.0))
    else:
        out["score"] = play_out(Game.new(seed, variant), kind, random.Random(int(seed)))
    out["seconds"] = time.perf_counter() - started
    return out


def _mean(xs: list[int]) -> str:
    return f"{statistics.fmean(xs):.2f}" if xs else "-"


def report(rows: list[dict[str, Any]], args: argparse.Namespace, runs: list[tuple[str, float, str]]) -> str:
    lines = [START, ""]
    for argv, wall, load in runs:
        lines.append(
            f"Command: `.venv/bin/python bench/solver_run.py {argv}` ({wall / 60:.1f} min wall; {load})."
        )
        lines.append("")
    solved = [r for r in rows if r["kind"] == "solve"]
    budgets = {r["variant"]: r.get("budget", args.budget_s) for r in solved}
    for variant in sorted({r["variant"] for r in solved}):
        rs = [r for r in solved if r["variant"] == variant]
        if not rs:
            continue
        pars = [r["par"] for r in rs]
        proven = [r for r in rs if r["proven"]]
        wins = sum(1 for r in rs if r["par"] == 0)
        losses = sum(1 for r in rs if r["lower_bound"] > 0)
        undecided = len(rs) - wins - losses
        gaps = [r["par"] - r["lower_bound"] for r in rs]
        dist = Counter(pars)
        lines += [
            f"### {variant}: solver on deals 1..{len(rs)}, {budgets[variant]:g} s each",
            "",
            "| figure | value |",
            "|---|---|",
            f"| proven optimal | {len(proven)} of {len(rs)} ({100 * len(proven) / len(rs):.1f}%) |",
            f"| mean par (best found) | {_mean(pars)} |",
            f"| median par | {statistics.median(pars):g} |",
            f"| mean lower bound | {_mean([r['lower_bound'] for r in rs])} |",
            f"| mean bound gap (par - lower bound) | {_mean(gaps)} |",
            f"| win rate (par 0) | {wins}/{len(rs)}: proven wins {wins}, proven losses {losses}, "
            f"undecided {undecided}; so between {100 * wins / len(rs):.1f}% "
            f"and {100 * (wins + undecided) / len(rs):.1f}% |",
            f"| mean nodes per deal | {statistics.fmean(r['nodes'] for r in rs):,.0f} |",
            f"| mean seconds per deal | {statistics.fmean(r['seconds'] for r in rs):.2f} |",
            "",
            "Par distribution (par: deals): " + ", ".join(f"{p}: {n}" for p, n in sorted(dist.items())),
            "",
        ]
    lines += [
        "### Players (final leftover, lower is better)",
        "",
        "| variant | greedy: deals, mean | hint: deals, mean | greedy mean on the hint's deals "
        "| hint calls per game | slowest hint call (s) |",
        "|---|---|---|---|---|---|",
    ]
    for variant in VARIANTS:
        g = {r["seed"]: r["score"] for r in rows if r["kind"] == "greedy" and r["variant"] == variant}
        h = {r["seed"]: r["score"] for r in rows if r["kind"] == "hint" and r["variant"] == variant}
        if not g and not h:
            continue
        same = [g[s] for s in h if s in g]
        hr = [r for r in rows if r["kind"] == "hint" and r["variant"] == variant]
        calls = f"{statistics.fmean(r['calls'] for r in hr):.0f}" if hr else "-"
        slowest = f"{max(r['max_call'] for r in hr):.2f}" if hr else "-"
        lines.append(
            f"| {variant} | {len(g)}, {_mean(list(g.values()))} | {len(h)}, {_mean(list(h.values()))} "
            f"| {_mean(same)} | {calls} | {slowest} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], variant: str) -> None:
    pars = [r["par"] for r in rows if r["kind"] == "solve" and r["variant"] == variant]
    greedy = [r["score"] for r in rows if r["kind"] == "greedy" and r["variant"] == variant]
    hint = [r["score"] for r in rows if r["kind"] == "hint" and r["variant"] == variant]
    if not pars:
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bins = list(range(0, 74, 2))
    for data, label in ((pars, "solver par"), (greedy, "greedy"), (hint, "hint")):
        if data:
            ax.hist(data, bins=bins, alpha=0.5, density=True, label=f"{label} (n={len(data)})")
    ax.set_xlabel("final leftover (cards in stock and waste)")
    ax.set_ylabel("share of deals")
    ax.set_title(f"Devil's Grip, {variant}: par beside the players' scores")
    ax.legend()
    fig.tight_layout()
    fig.savefig(DOCS / f"solver-{variant}.png", dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deals", type=int, default=1000, help="solver on deals 1..N")
    parser.add_argument("--first-deal", type=int, default=1, help="the solver's deals start here")
    parser.add_argument("--greedy-deals", type=int, default=1000, help="greedy player on deals 1..N")
    parser.add_argument("--budget-s", type=float, default=10.0)
    parser.add_argument("--hint-deals", type=int, default=100, help="hint player on deals 1..M per variant")
    parser.add_argument("--hint-budget-s", type=float, default=1.0, help="the hint's time budget per call")
    parser.add_argument("--hint-variants", nargs="*", default=list(VARIANTS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--solve-variants", nargs="*", default=["classic", "relaxed"])
    parser.add_argument(
        "--out", default=str(DOCS / "solver-results.json"), help="rows, rewritten as they come"
    )
    parser.add_argument("--merge", nargs="*", default=[], help="rows of earlier runs to report with these")
    args = parser.parse_args()
    args.argv = " ".join(  # the command, for the page
        f"--{k.replace('_', '-')} {' '.join(v) if isinstance(v, list) else v}"
        for k, v in vars(args).items()
        if k not in ("argv", "out", "merge")
    )
    tasks: list[tuple[str, str, str, float]] = []
    for n in range(1, args.hint_deals + 1):
        tasks += [("hint", v, str(n), args.hint_budget_s) for v in args.hint_variants]
    for n in range(1, args.greedy_deals + 1):
        tasks += [("greedy", v, str(n), 0.0) for v in VARIANTS]
    for n in range(args.first_deal, args.deals + 1):
        tasks += [("solve", v, str(n), args.budget_s) for v in args.solve_variants]
    started = time.perf_counter()
    load_before = os.getloadavg()
    rows: list[dict[str, Any]] = []
    out = Path(args.out)
    with multiprocessing.Pool(args.workers) as pool:
        for row in tqdm(pool.imap_unordered(run_one, tasks), total=len(tasks), unit="task"):
            rows.append(row)
            if len(rows) % 20 == 0:
                out.write_text(json.dumps(rows))  # partial results while the run goes
    out.write_text(json.dumps(rows))
    wall = time.perf_counter() - started
    load = f"load average {load_before[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end, {os.cpu_count()} cores"
    runs = [(args.argv, wall, load)]
    for extra in args.merge:
        data = json.loads(Path(extra).read_text())
        rows += data["rows"] if isinstance(data, dict) else data
        if isinstance(data, dict):
            runs.append((data["argv"], data["wall"], data["load"]))
    (DOCS / "solver-results.json").write_text(
        json.dumps({"argv": args.argv, "wall": wall, "load": load, "rows": rows})
    )
    page = DOCS / "solver.md"
    text = page.read_text() if page.exists() else f"# Solver\n\n{START}\n{END}\n"
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    page.write_text(head + report(rows, args, runs) + tail)
    for variant in {r["variant"] for r in rows if r["kind"] == "solve"}:
        plot(rows, variant)


if __name__ == "__main__":
    main()
