"""A player's statistics: the fold of their results, kept as running totals. Pure, no I/O.

Reading every result a player ever had on each ``stats`` request cost time
in proportion to their whole history (5 ms at 300 results, and a player can
add ten a second). So the store keeps each player's ``Totals``, the fold of
their results so far, and advances it by ``Totals.add`` in the same write
that enters a result in the player's index: SQLite in the decision's
transaction, Redis in one script on the player's slot that does nothing if
the index already holds the match. Each result is folded exactly once, and
the figures are still the results' fold: ``fold(results)`` from nothing
equals the stored totals (the stores' tests recompute them so).

The fold does not depend on the order the results come in (sums, counts, a
minimum, the latest by decision time), so a decision that lands after a
later one, on another process, changes nothing.

Practice games (one seat, hints and undo) are kept apart: they count in
their own figures, never in the race and daily ones.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from . import protocol as p

RATED = ("brilliant", "excellent", "good")
#: The last scores kept per variant: the trend chart draws them.
RECENT = 30


class VariantTotals(BaseModel):
    played: int = 0
    wins: int = 0  # games ended with nothing left
    score_sum: int = 0
    best: int | None = None
    on_grid: int = 0
    complete: int = 0
    ratings: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(RATED, 0))
    distribution: dict[int, int] = Field(default_factory=dict)  # score -> games
    recent: list[tuple[int, str, int]] = Field(
        default_factory=list
    )  # (decided_at, match, score), oldest first

    def add(self, result: p.Result, me: p.SeatResult) -> None:
        self.played += 1
        self.wins += me.score == 0
        self.score_sum += me.score
        self.best = me.score if self.best is None else min(self.best, me.score)
        self.on_grid += me.on_grid
        self.complete += me.complete
        if me.rating in self.ratings:
            self.ratings[me.rating] += 1
        self.distribution[me.score] = self.distribution.get(me.score, 0) + 1
        self.recent = sorted([*self.recent, (result.decided_at, result.match, me.score)])[-RECENT:]

    def figures(self, variant: str) -> p.VariantStats:
        return p.VariantStats(
            variant=variant,
            played=self.played,
            wins=self.wins,
            mean_score=self.score_sum / self.played,
            best_score=self.best if self.best is not None else 0,
            ratings=self.ratings,
            mean_on_grid=self.on_grid / self.played,
            mean_complete=self.complete / self.played,
            distribution=[p.ScoreGames(score=s, games=n) for s, n in sorted(self.distribution.items())],
            recent=[score for _, _, score in self.recent],
        )


class RivalTotals(BaseModel):
    name: str  # as of the last race against them
    last_match: str
    last_at: int
    wins: int = 0
    losses: int = 0
    draws: int = 0


class Totals(BaseModel):
    """Everything the figures need, whatever the number of results folded in."""

    games: int = 0  # results folded (practice ones too)
    variants: dict[str, VariantTotals] = Field(default_factory=dict)
    practice: dict[str, VariantTotals] = Field(default_factory=dict)
    daily_days: list[str] = Field(default_factory=list)  # days with a ranked daily, sorted
    rivals: dict[str, RivalTotals] = Field(default_factory=dict)

    def add(self, result: p.Result, player: str) -> None:
        """Fold in one of ``player``'s results (the caller makes sure it is not folded twice)."""
        me = seat_of(result, player)
        if me is None:
            return
        self.games += 1
        kept = self.practice if result.practice else self.variants
        kept.setdefault(result.variant, VariantTotals()).add(result, me)
        if result.daily and result.ranked and result.daily not in self.daily_days:
            self.daily_days = sorted([*self.daily_days, result.daily])
        other = next((s for s in result.seats if s.seat != me.seat), None)
        if other is None or other.player is None:
            return
        rival = self.rivals.get(other.player)
        if rival is None:
            rival = self.rivals[other.player] = RivalTotals(
                name=other.name, last_match=result.match, last_at=result.decided_at
            )
        elif (result.decided_at, result.match) > (rival.last_at, rival.last_match):
            rival.name, rival.last_match, rival.last_at = other.name, result.match, result.decided_at
        won = outcome(result, me.seat)
        rival.wins += won == "win"
        rival.losses += won == "loss"
        rival.draws += won == "draw"


def fold(player: str, results: Iterable[p.Result]) -> Totals:
    """The totals of ``player`` from their results, in any order."""
    totals = Totals()
    for result in results:
        totals.add(result, player)
    return totals


def figures(player: str, name: str, totals: Totals, today: str) -> p.Stats:
    """The ``stats`` message of a player from their totals."""
    current, best = streaks(set(totals.daily_days), today)
    return p.Stats(
        player=player,
        name=name,
        variants=[v.figures(variant) for variant, v in sorted(totals.variants.items())],
        practice=[v.figures(variant) for variant, v in sorted(totals.practice.items())],
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
            for pid, r in sorted(totals.rivals.items(), key=lambda kv: -kv[1].last_at)
        ],
    )


Outcome = Literal["win", "loss", "draw", "solo"]


def outcome(result: p.Result | p.ResultSummary, seat: int) -> Outcome:
    if len(result.seats) < 2:
        return "solo"
    if result.draw:
        return "draw"
    return "win" if result.winner == seat else "loss"


def seat_of(result: p.Result, player: str) -> p.SeatResult | None:
    return next((s for s in result.seats if s.player == player), None)


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


def history_entry(result: p.ResultSummary, player: str) -> p.GameEntry:
    me = next(s for s in result.seats if s.player == player)
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
        practice=result.practice,
        replay=f"/api/replay/{result.match}",
    )


def cursor(result: p.Result | p.ResultSummary) -> str:
    return f"{result.decided_at}.{result.match}"


def parse_cursor(text: str) -> tuple[int, str]:
    at, match = text.split(".", 1)
    return int(at), match
