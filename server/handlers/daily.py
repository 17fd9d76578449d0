"""The daily challenge's messages, and the daily rules carried out for a seat.

The rules are in ``server/daily.py``, as decisions on plain facts; this
reads the facts from the store and the hub, and carries the decisions out.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import NamedTuple

from .. import daily
from .. import protocol as p
from ..dispatch import Client, Context, Routes
from ..errors import Conflict, ErrorCode, Refused, StoreUnavailable
from ..match import Match
from ..store import BoardRow

routes = Routes()


class Claim(NamedTuple):
    """A ranked attempt taken by this request (not one the player held already)."""

    day: str
    player: str
    match: str


async def enter(
    ctx: Context, client: Client, msg: p.Create, code: str
) -> tuple[str, str, bool, Claim | None]:
    """A new daily game, match ``code``: its day, its seed, whether it is ranked, and the attempt it took."""
    day = daily.day_of(ctx.clock())
    player = daily.player_of(client.player.id if client.player else None)
    daily.check_game(msg.variant, msg.bot)
    entry = daily.create_entry(day, await ctx.store.daily_attempt(day, player), msg.ranked)
    claim = await _admit(ctx, entry, day, player, code)
    return day, daily.seed(ctx.daily_secret, day), entry is daily.Entry.RANKED, claim


async def join(ctx: Context, client: Client, m: Match) -> Claim | None:
    """Let ``client`` take a seat in ``m`` as far as the daily rules go (the match decides the rest).

    Returns the attempt this took, to be given back should the match refuse the seat.
    """
    open_lobby = m.status == "lobby" and any(s is None for s in m.seats)
    entry = daily.join_entry(m.daily, m.ranked, open_lobby, ctx.clock())
    if m.daily is not None and entry is not daily.Entry.FREE:
        player = daily.player_of(client.player.id if client.player else None)
        return await _admit(ctx, entry, m.daily, player, m.id)
    return None


@contextlib.asynccontextmanager
async def given_back_if_refused(ctx: Context, claim: Claim | None) -> AsyncIterator[None]:
    """Give ``claim`` back if the game it was taken for is refused inside (a seat taken meanwhile).

    The attempt is claimed before the match decides (two tabs must not both
    take one); a refusal leaves the player without a seat in it, and the
    attempt would be lost for the day. Not on ``unavailable``: that write
    may land all the same.
    """
    try:
        yield
    except (Refused, Conflict) as exc:
        refused = not isinstance(exc, Refused) or exc.code is not ErrorCode.UNAVAILABLE
        if claim is not None and refused:
            with contextlib.suppress(StoreUnavailable):  # then the attempt stays taken: as before
                await ctx.store.release_daily(*claim)
        raise


async def _admit(ctx: Context, entry: daily.Entry, day: str, player: str, match: str) -> Claim | None:
    """Carry out an entry decision: claim the day's attempt (returned if taken now), or check that it is over."""
    if entry is daily.Entry.RANKED:
        holder, taken = await ctx.store.claim_daily(day, player, match)
        daily.check_claim(day, holder, match)
        return Claim(day, player, match) if taken else None
    if entry is daily.Entry.AFTER_ATTEMPT:
        attempt = await ctx.store.daily_attempt(day, player)
        over = attempt is None or await _attempt_over(ctx, attempt, player)
        daily.check_after_attempt(attempt, over)
    return None


async def _attempt_over(ctx: Context, attempt: str, player: str) -> bool:
    try:
        return (await ctx.hub.get(attempt)).match.done_for(player)
    except Refused as exc:
        if exc.code is not ErrorCode.NOT_FOUND:
            raise
        return True  # expired: a lobby nobody started, or a result long decided


async def _day_info(ctx: Context, day: str, players: int) -> p.DayInfo:
    """A day's public facts: the seed only once the day is over, and its par if it had games too.

    A par takes a worker seconds to solve and is stored for good: it is not
    solved for a day nobody played (any day back to 1970 can be asked for).
    """
    seed = daily.seed(ctx.daily_secret, day)
    revealed = daily.is_over(day, ctx.clock())
    return p.DayInfo(
        day=day,
        commitment=daily.commitment(seed),
        seed=seed if revealed else None,
        players=players,
        par=await ctx.solving.par(day, seed) if revealed and players else None,
    )


@routes.handles(p.DailyRequest)
async def on_daily(ctx: Context, client: Client, msg: p.DailyRequest) -> None:
    today = daily.day_of(ctx.clock())
    yesterday = daily.previous_day(today)
    counts = [
        sum((await ctx.store.leaderboard(d, None, limit=1)).distribution.values()) for d in (today, yesterday)
    ]
    attempt = await ctx.store.daily_attempt(today, client.player.id) if client.player else None
    client.send(
        p.DailyInfo(
            today=await _day_info(ctx, today, counts[0]),
            variant=daily.VARIANT,
            attempt=attempt,
            previous=await _day_info(ctx, yesterday, counts[1]),
        )
    )


@routes.handles(p.LeaderboardRequest)
async def on_leaderboard(ctx: Context, client: Client, msg: p.LeaderboardRequest) -> None:
    daily.check_leaderboard(msg.day, ctx.clock())
    board = await ctx.store.leaderboard(msg.day, client.player.id if client.player else None)
    client.send(
        p.Leaderboard(
            day=await _day_info(ctx, msg.day, sum(board.distribution.values())),
            top=[_entry(rank, row) for rank, row in board.ranked_top()],
            you=_entry(*board.you) if board.you else None,
            distribution=[p.ScoreCount(score=s, players=n) for s, n in sorted(board.distribution.items())],
        )
    )


@routes.handles(p.DaysRequest)
async def on_days(ctx: Context, client: Client, msg: p.DaysRequest) -> None:
    before = msg.before or daily.day_of(ctx.clock())
    days = await ctx.store.daily_days(before, msg.limit)
    client.send(p.Days(days=[await _day_info(ctx, day, n) for day, n in days]))


def _entry(rank: int, row: BoardRow) -> p.BoardEntry:
    return p.BoardEntry(
        rank=rank, player=row.player, name=row.name, score=row.score, time_ms=row.time_ms, match=row.match
    )
