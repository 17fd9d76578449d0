"""Experiments behind the hint for a hidden stock with no redeal (classic): what merge timing is worth.

Run: ``.venv/bin/python bench/hint_experiments.py holds --deals 1000`` or ``... oracle --deals 400``.
All on canonical states with the hint's own greedy rollouts (``players._Rollouts``):

* ``holds``: whole-pile moves only while the stock holds more than S cards,
  then the endgame solved exactly once the stock is empty (S = 0 is greedy
  with an exact endgame).
* ``oracle``: a cheat, for scale only. At every whole-pile move greedy would
  make, compare "merge now" with "turn first" by greedy played out on the
  *real* stock order, and take the better. This is what the timing of
  whole-pile moves is worth to a player who knows the order; the hint's
  sampling makes the same comparison over orders drawn from the unseen cards.
"""

from __future__ import annotations

import argparse
import statistics

from server.engine.cards import shuffled_deck
from server.engine.players import _Rollouts
from server.engine.variants import get_variant

State = tuple[list[int], list[int], list[int], list[int]]


def deal(sim: _Rollouts, seed: int) -> State:
    deck = shuffled_deck(str(seed), 2)
    tops, bots = [0] * sim.size, [0] * sim.size
    for c in deck[:24]:
        tops[sim.key[c]] += 1
        bots[sim.key[c]] += 1
    return tops, bots, [sim.key[c] for c in reversed(deck[24:])], []


def endgame(sim: _Rollouts, tops: list[int], bots: list[int], waste: list[int]) -> int:
    """The exact least leftover once the stock is empty (depth-first, memo on the state)."""
    memo: dict[tuple[bytes, bytes, int], int] = {}
    need = sim.need

    def rec(i: int) -> int:
        key = (bytes(tops), bytes(bots), i)
        if key in memo:
            return memo[key]
        best = i
        if i and need[waste[i - 1]] >= 0 and tops[need[waste[i - 1]]]:
            c = waste[i - 1]
            tops[need[c]] -= 1
            tops[c] += 1
            best = rec(i - 1)
            tops[need[c]] += 1
            tops[c] -= 1
        for b in sim.merges(tops, bots):
            if not best:
                break
            bots[b] -= 1
            tops[need[b]] -= 1
            if i:
                r = waste[i - 1]
                tops[r] += 1
                bots[r] += 1
                best = min(best, rec(i - 1))
                tops[r] -= 1
                bots[r] -= 1
            else:
                best = 0
            bots[b] += 1
            tops[need[b]] += 1
        memo[key] = best
        return best

    return rec(len(waste))


def hold_game(sim: _Rollouts, seed: int, hold_below: int) -> int:
    tops, bots, stock, waste = deal(sim, seed)
    while stock:
        if sim.fits(tops, waste):
            sim.play(tops, bots, stock, waste, -2)
            continue
        merges = sim.merges(tops, bots) if len(stock) > hold_below else []
        sim.play(tops, bots, stock, waste, merges[0] if merges else -1)
    return endgame(sim, tops, bots, waste)


def oracle_game(sim: _Rollouts, seed: int) -> int:
    tops, bots, stock, waste = deal(sim, seed)
    while stock:
        if sim.fits(tops, waste):
            sim.play(tops, bots, stock, waste, -2)
            continue
        merges = sim.merges(tops, bots)
        move = -1
        if merges:
            scores = []
            for m in (merges[0], -1):
                t, b, s, w = tops[:], bots[:], stock[:], waste[:]
                sim.play(t, b, s, w, m)
                scores.append(sim.greedy_rest(t, b, s, w))
            move = merges[0] if scores[0] <= scores[1] else -1
        sim.play(tops, bots, stock, waste, move)
    return sim.greedy_rest(tops, bots, stock, waste)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("experiment", choices=["holds", "oracle"])
    parser.add_argument("--first-deal", type=int, default=1)
    parser.add_argument("--deals", type=int, default=1000)
    args = parser.parse_args()
    sim = _Rollouts(get_variant("classic"))
    deals = range(args.first_deal, args.first_deal + args.deals)
    greedy = [sim.greedy_rest(*deal(sim, d)) for d in deals]
    print(f"greedy: {statistics.fmean(greedy):.2f} on {len(greedy)} deals")
    runs = (
        {"oracle (knows the order)": [oracle_game(sim, d) for d in deals]}
        if args.experiment == "oracle"
        else {
            f"whole-pile moves only while the stock has more than {s} cards, exact endgame": [
                hold_game(sim, d, s) for d in deals
            ]
            for s in (0, 3, 6, 12, 24, 72)
        }
    )
    for name, scores in runs.items():
        diff = [a - b for a, b in zip(scores, greedy, strict=True)]
        se = statistics.stdev(diff) / len(diff) ** 0.5
        print(
            f"{name}: {statistics.fmean(scores):.2f}, against greedy {statistics.fmean(diff):+.2f} ± {se:.2f}"
        )


if __name__ == "__main__":
    main()
