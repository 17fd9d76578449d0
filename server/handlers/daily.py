"""The daily challenge's messages, and the daily rules a seat's commands must follow.

The rules themselves are in ``server/daily.py``; this carries them out
against the store and the hub.
"""

from __future__ import annotations

from .. import daily
from .. import protocol as p
from ..dispatch import Client, Context, Routes
from ..errors import ErrorCode, Refused
from ..match import Match
from ..store import BoardRow

routes = Routes()


async def enter(ctx: Context, client: Client, msg: p.Create, code: str) -> tuple[str, str, bool]:
    """A new daily game: its day, its seed, and whether it is ranked."""
    day = daily.day_of(ctx.clock())
    return day, daily.seed(ctx.daily_secret, day), await _daily_entry(ctx, client, msg, day, code)


async def _daily_entry(ctx: Context, client: Client, msg: p.Create, day: str, code: str) -> bool:
    """Whether this daily game is ranked: one ranked attempt a day, practice only after it."""
    if client.player is None:
        raise Refused(ErrorCode.BAD_KEY, "say hello first: the daily challenge needs your player id")
    if msg.variant != "classic" or msg.bot is not None:
        raise Refused(ErrorCode.NOT_ALLOWED, "the daily challenge is classic, against a person or alone")
    used = await ctx.store.daily_attempt(day, client.player.id)
    if used is None and msg.ranked is not False:
        await _claim_daily(ctx, day, client.player.id, code)
        return True
    if used is not None and msg.ranked:
        raise Refused(ErrorCode.ALREADY_PLAYED, f"you have played the {day} daily; replays open tomorrow")
    await _check_attempt_behind(ctx, day, client.player.id)
    return False


async def join(ctx: Context, client: Client, m: Match) -> None:
    """A seat in a daily race: ranked, it takes the joiner's attempt; unranked, it comes after it.

    Otherwise an unranked race would show the day's deal to someone whose
    ranked attempt is still to come.
    """
    if m.daily is None or (not m.ranked and daily.is_over(m.daily, ctx.clock())):
        return
    if client.player is None:
        raise Refused(ErrorCode.BAD_KEY, "say hello first: the daily challenge needs your player id")
    if not m.ranked:
        await _check_attempt_behind(ctx, m.daily, client.player.id)
    elif m.status == "lobby" and any(s is None for s in m.seats):
        await _claim_daily(ctx, m.daily, client.player.id, m.id)


def check_watch(ctx: Context, m: Match) -> None:
    if m.daily and not daily.is_over(m.daily, ctx.clock()):
        raise Refused(
            ErrorCode.NOT_ALLOWED,
            "daily games cannot be watched while their day runs; replays open when it is over",
        )


async def _check_attempt_behind(ctx: Context, day: str, player: str) -> None:
    """Refuse unranked play of the day's deal until the player's ranked attempt is over.

    Claiming the attempt is not enough: its lobby may wait half an hour
    and its game run for the time limit, and a practice game (hints,
    undo) beside it would rehearse the very deal it is played on.
    """
    code = await ctx.store.daily_attempt(day, player)
    if code is None:
        raise Refused(ErrorCode.NOT_ALLOWED, "play your ranked attempt first; practice comes after")
    try:
        over = (await ctx.hub.get(code)).match.done_for(player)
    except Refused as exc:
        if exc.code is not ErrorCode.NOT_FOUND:
            raise
        over = True  # expired: a lobby nobody started, or a result long decided
    if not over:
        raise Refused(
            ErrorCode.NOT_ALLOWED,
            f"finish your ranked attempt (match {code}) first; practice comes after",
        )


async def _claim_daily(ctx: Context, day: str, player: str, code: str) -> None:
    if await ctx.store.claim_daily(day, player, code) != code:
        raise Refused(ErrorCode.ALREADY_PLAYED, f"you have played the {day} daily; replays open tomorrow")


async def _day_info(ctx: Context, day: str, players: int) -> p.DayInfo:
    """A day's public facts: the seed and its par only once the day is over."""
    seed = daily.seed(ctx.daily_secret, day)
    revealed = daily.is_over(day, ctx.clock())
    return p.DayInfo(
        day=day,
        commitment=daily.commitment(seed),
        seed=seed if revealed else None,
        players=players,
        par=await ctx.solving.par(day, seed) if revealed else None,
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
            variant="classic",
            attempt=attempt,
            previous=await _day_info(ctx, yesterday, counts[1]),
        )
    )


@routes.handles(p.LeaderboardRequest)
async def on_leaderboard(ctx: Context, client: Client, msg: p.LeaderboardRequest) -> None:
    try:
        daily.parse_day(msg.day)
    except ValueError:
        raise Refused(ErrorCode.BAD_MESSAGE, f"{msg.day!r} is not a calendar day") from None
    if msg.day > daily.day_of(ctx.clock()):
        raise Refused(ErrorCode.NOT_YET, f"the {msg.day} daily has not begun")
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
