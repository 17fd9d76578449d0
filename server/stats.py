"""A player's statistics, folded from their stored results: pure, no I/O.

The figures are never stored on their own: they are computed from the
results, which are durable before anyone hears of them, so the two can never
disagree. One pass over a player's results (newest first, as the store gives
them) yields everything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Literal

from . import protocol as p

RATED = ("brilliant", "excellent", "good")


@dataclass
class _Variant:
    scores: list[int] = field(default_factory=list)  # oldest first
    on_grid: int = 0
    complete: int = 0
    ratings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RATED, 0))


@dataclass
class _Rival:
    name: str
    last_match: str
    last_at: int
    wins: int = 0
    losses: int = 0
    draws: int = 0


Outcome = Literal["win", "loss", "draw", "solo"]


def outcome(result: p.Result, seat: int) -> Outcome:
    if len(result.seats) < 2:
        return "solo"
    if result.draw:
        return "draw"
    return "win" if result.winner == seat else "loss"


def seat_of(result: p.Result, player: str) -> p.SeatResult | None:
    return next((s for s in result.seats if s.player == player), None)


def compute(player: str, name: str, results: Sequence[p.Result], today: str) -> p.Stats:
    """Every figure of ``player`` from their results (any order)."""
    variants: dict[str, _Variant] = {}
    rivals: dict[str, _Rival] = {}
    daily_days: set[str] = set()
    for result in sorted(results, key=lambda r: (r.decided_at, r.match)):
        me = seat_of(result, player)
        if me is None:
            continue
        v = variants.setdefault(result.variant, _Variant())
        v.scores.append(me.score)
        v.on_grid += me.on_grid
        v.complete += me.complete
        if me.rating in v.ratings:
            v.ratings[me.rating] += 1
        if result.daily and result.ranked:
            daily_days.add(result.daily)
        other = next((s for s in result.seats if s.seat != me.seat), None)
        if other is not None and other.player is not None:
            rival = rivals.setdefault(other.player, _Rival(other.name, result.match, result.decided_at))
            rival.name, rival.last_match, rival.last_at = other.name, result.match, result.decided_at
            won = outcome(result, me.seat)
            rival.wins += won == "win"
            rival.losses += won == "loss"
            rival.draws += won == "draw"
    current, best = streaks(daily_days, today)
    return p.Stats(
        player=player,
        name=name,
        variants=[
            p.VariantStats(
                variant=name_,
                played=len(v.scores),
                wins=v.scores.count(0),
                mean_score=sum(v.scores) / len(v.scores),
                best_score=min(v.scores),
                ratings=v.ratings,
                mean_on_grid=v.on_grid / len(v.scores),
                mean_complete=v.complete / len(v.scores),
                scores=v.scores,
            )
            for name_, v in sorted(variants.items())
        ],
        daily_streak=current,
        best_daily_streak=best,
        head_to_head=[
            p.HeadToHead(
                opponent=pid,
                name=r.name,
                wins=r.wins,
                losses=r.losses,
                draws=r.draws,
                last_match=r.last_match,
                last_at=r.last_at,
            )
            for pid, r in sorted(rivals.items(), key=lambda kv: -kv[1].last_at)
        ],
    )


def streaks(days: set[str], today: str) -> tuple[int, int]:
    """(current, best) runs of consecutive days; the current run may end today or yesterday."""
    dates = sorted(date.fromisoformat(d) for d in days)
    best = run = 0
    previous: date | None = None
    for d in dates:
        run = run + 1 if previous is not None and d - previous == timedelta(days=1) else 1
        best = max(best, run)
        previous = d
    last = date.fromisoformat(today)
    current = 0
    if previous is not None and last - previous <= timedelta(days=1):
        current = run
    return current, best


def history_entry(result: p.Result, player: str) -> p.GameEntry:
    me = seat_of(result, player)
    assert me is not None
    other = next((s for s in result.seats if s.seat != me.seat), None)
    return p.GameEntry(
        match=result.match,
        variant=result.variant,
        at=result.decided_at,
        score=me.score,
        rating=me.rating,
        outcome=outcome(result, me.seat),
        opponent=other.name if other else None,
        daily=result.daily,
        replay=f"/api/replay/{result.match}",
    )


def cursor(result: p.Result) -> str:
    return f"{result.decided_at}.{result.match}"


def parse_cursor(text: str) -> tuple[int, str]:
    at, match = text.split(".", 1)
    return int(at), match
