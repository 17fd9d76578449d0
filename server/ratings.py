"""Player ratings: which races are rated, and a rated race's update. Pure, no I/O.

The arithmetic is OpenSkill's (the ``openskill`` package: Weng-Lin's
Bayesian rating, Plackett-Luce model), not ours: a rating is a mean ``mu``
and an uncertainty ``sigma``, scaled so that a newcomer starts at 1500 ± 500
(the package's defaults times 60). People are shown ``mu``, rounded; it is
provisional (``?``) for the first ``PROVISIONAL_GAMES`` rated races.

Ratings are per variant. A race is rated when neither racer chose the deal
(``Result.rated``: quick races, and friendly races created rated), both
seats are distinct players, and nobody was abandoned before their first
move (the race never got going for them). A win is a win however it came
(a lower leftover, or the same leftover finished sooner); a resignation is
a loss; a draw is a draw (docs/ratings.md).

An update depends on both racers' ratings just before it, so the order in
which rated races are applied matters: the store keeps that order (its
rating log), applies each race once, in one atomic write with both new
ratings, and ``replay`` of the log's results from nothing gives exactly the
stored ratings (floats included: the same operations in the same order).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from openskill.models import PlackettLuce
from pydantic import BaseModel

from . import protocol as p
from .errors import ErrorCode, Refused

SCALE = 60.0  # OpenSkill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300) scaled to 1500
MODEL = PlackettLuce(mu=25.0 * SCALE, sigma=25.0 / 3 * SCALE, beta=25.0 / 6 * SCALE, tau=25.0 / 300 * SCALE)
INITIAL_MU = 25.0 * SCALE
INITIAL_SIGMA = 25.0 / 3 * SCALE
#: A rating is shown with a ``?`` (and kept off the board of the best) until this many rated races.
PROVISIONAL_GAMES = 5
#: The points of a rating's history sent for the chart: the latest ones.
HISTORY_POINTS = 200


class PlayerRating(BaseModel):
    """A player's rating in one variant, and the rated races behind it."""

    mu: float = INITIAL_MU
    sigma: float = INITIAL_SIGMA
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def shown(self) -> int:
        """The number people see."""
        return round(self.mu)

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES


class RatingPoint(BaseModel):
    """A player's rating just after one of their rated races: a point of the history chart."""

    at: int  # the race's decision time
    match: str
    mu: float
    sigma: float


def is_rated(result: p.Result) -> bool:
    """Whether ``result`` changes ratings (module docstring: what counts)."""
    if not result.rated or result.practice or result.daily is not None or len(result.seats) != 2:
        return False
    a, b = result.seats
    if a.player is None or b.player is None or a.player == b.player:
        return False
    return not any(s.reason == "abandoned" and not s.moves for s in result.seats)


def rated_players(result: p.Result) -> list[str]:
    """The two players a rated result rates, by seat."""
    return [s.player for s in result.seats if s.player is not None]


def update(result: p.Result, before: Mapping[str, PlayerRating]) -> dict[str, PlayerRating]:
    """Both racers' ratings after a rated ``result``, from theirs just before (missing: a newcomer's)."""
    a, b = result.seats
    assert a.player is not None and b.player is not None
    old = [before.get(a.player) or PlayerRating(), before.get(b.player) or PlayerRating()]
    if result.draw or result.winner is None:
        ranks = [1.0, 1.0]
    else:
        ranks = [1.0, 2.0] if result.winner == a.seat else [2.0, 1.0]
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in old]
    [[new_a], [new_b]] = MODEL.rate(teams, ranks=ranks)
    after: dict[str, PlayerRating] = {}
    for seat, r, new, rank in ((a, old[0], new_a, ranks[0]), (b, old[1], new_b, ranks[1])):
        assert seat.player is not None
        draw = ranks[0] == ranks[1]
        after[seat.player] = PlayerRating(
            mu=new.mu,
            sigma=new.sigma,
            games=r.games + 1,
            wins=r.wins + (not draw and rank == 1.0),
            losses=r.losses + (not draw and rank == 2.0),
            draws=r.draws + draw,
        )
    return after


def point(result: p.Result, rating: PlayerRating) -> RatingPoint:
    return RatingPoint(at=result.decided_at, match=result.match, mu=rating.mu, sigma=rating.sigma)


def replay(results: Iterable[p.Result]) -> dict[str, dict[str, PlayerRating]]:
    """Every player's rating by variant, from rated results in the order they were applied."""
    ratings: dict[str, dict[str, PlayerRating]] = {}
    for result in results:
        if is_rated(result):
            variant = ratings.setdefault(result.variant, {})
            variant.update(update(result, variant))
    return ratings


def change(
    result: p.Result, before: Mapping[str, PlayerRating], after: Mapping[str, PlayerRating]
) -> p.Rated:
    """The ``rated`` message of a race: each racer's rating before and after it."""
    return p.Rated(
        match=result.match,
        variant=result.variant,
        seats=[
            p.RatingChange(
                seat=s.seat,
                player=s.player,
                before=(before.get(s.player) or PlayerRating()).shown,
                after=after[s.player].shown,
                provisional=after[s.player].provisional,
            )
            for s in result.seats
            if s.player is not None
        ],
    )


def board_cursor(mu: float, player: str) -> str:
    """A ``rating_board``'s ``next``: the place (mu, player) its last line holds, for ``after``.

    Opaque to clients; ``repr`` gives the float back exactly, so a page goes
    on just past that line and no further (a rounded rating would skip or
    repeat players of nearly the same one).
    """
    return f"{mu!r}:{player}"


def parse_board_cursor(text: str) -> tuple[float, str]:
    """The place a cursor names; ``bad_message`` for text this server did not write."""
    number, _, player = text.partition(":")
    try:
        mu = float(number)
    except ValueError:
        mu = math.nan
    if not math.isfinite(mu) or not player:
        raise Refused(ErrorCode.BAD_MESSAGE, f"after: {text!r} is not a page's next: pass it as it came")
    return mu, player
