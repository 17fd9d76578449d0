"""Taking a seat and playing in it: create, join, watch, resume, and the commands of a seat.

A client sits in at most one match at a time (``Client.live``), in a seat or
among its spectators. Every change goes through ``Hub.execute``: the match
decides, the store makes it durable, the hub tells everyone.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable

from .. import protocol as p
from ..daily import check_hint, check_watch
from ..dispatch import Client, Context, Routes
from ..engine import Game
from ..errors import Conflict, ErrorCode, Refused
from ..hub import new_code, new_token
from ..live import LiveMatch
from ..match import Duplicate, Event, Match
from ..match.events import SeatTaken
from ..match.render import ack_again, missed_events, resumed, watching
from ..store import shown_rating
from . import daily
from .records import clean_name

routes = Routes()


@routes.handles(p.Create)
async def on_create(ctx: Context, client: Client, msg: p.Create) -> None:
    seed = msg.seed or (str(msg.deal) if msg.deal is not None else secrets.token_hex(8))
    token = new_token()
    code, day, ranked = new_code(), None, False
    if msg.rated and client.player is None:
        raise Refused(ErrorCode.BAD_KEY, "say hello first: a rated race rates who you are")
    if msg.bot is not None:
        ctx.bots.check(client)
    if msg.daily:
        day, seed, ranked = await daily.enter(ctx, client, msg, code)
    events = Match.open(
        code,
        variant=msg.variant,
        seed=seed,
        seats=msg.seats,
        time_limit_s=msg.time_limit_s,
        name=_name(client, msg.name),
        token=token,
        player=client.player.id if client.player else None,
        now=ctx.clock(),
        practice=msg.seats == 1 and not ranked,
        daily=day,
        ranked=ranked,
        chosen=day is None and (msg.seed is not None or msg.deal is not None),
        rated=msg.rated,
        private=msg.private,
        rating=await _rating(ctx, client, msg.variant) if msg.rated else None,
    )
    try:
        lm = await ctx.hub.open(events)
    except Conflict:  # one code in 25^8 is taken: ask again
        raise Refused(ErrorCode.UNAVAILABLE, "that match code was taken; try again") from None
    client.send(p.Seated(type="created", match=lm.match.id, seat=0, token=token))
    await take_seat(ctx, client, lm, 0)
    if msg.bot is not None:  # "race a bot" (a second seat): it takes seat 1 through dispatch, like a person
        await ctx.bots.seat(lm, msg.bot, client)


@routes.handles(p.Join)
async def on_join(ctx: Context, client: Client, msg: p.Join) -> None:
    lm = await ctx.hub.get(msg.match)
    await daily.join(ctx, client, lm.match)
    token = new_token()
    player = client.player.id if client.player else None
    name = _name(client, msg.name)
    rating = await _rating(ctx, client, lm.match.variant) if lm.match.rated else None
    events = await ctx.hub.execute(lm, lambda m: m.decide_join(name, token, player, ctx.clock(), rating))
    assert isinstance(events, list) and isinstance(events[0], SeatTaken)
    seat = events[0].seat
    client.send(p.Seated(type="joined", match=lm.match.id, seat=seat, token=token))
    await take_seat(ctx, client, lm, seat)


@routes.handles(p.Watch)
async def on_watch(ctx: Context, client: Client, msg: p.Watch) -> None:
    lm = await ctx.hub.get(msg.match)
    check_watch(lm.match.daily, ctx.clock())
    lm.match.check_watcher(
        client.player.id if client.player else None, client.seat if client.live is lm else None
    )
    await unbind(ctx, client)
    client.live = lm
    # No await between the snapshot and joining the audience: nothing can slip between.
    client.send(watching(lm.match, ctx.clock()))
    lm.spectators.add(client)


@routes.handles(p.Resume)
async def on_resume(ctx: Context, client: Client, msg: p.Resume) -> None:
    lm = await ctx.hub.get(msg.match)
    seat = lm.match.seat_of_token(msg.token)
    if msg.last_ev < lm.match.ev:  # it replays the log: a seat resuming again and again waits its turn
        while wait := ctx.resumes.take(f"{msg.match}:{seat}"):
            await asyncio.sleep(wait)
    await unbind(ctx, client)
    m = lm.match
    missed: list[p.Message] = []
    if msg.last_ev < m.ev:  # else nothing was missed: the log is not even read
        log_events = await ctx.store.events(msg.match)
        while log_events and log_events[-1].ev < m.ev:  # applied meanwhile: read the log again
            log_events = await ctx.store.events(msg.match)
        missed = missed_events(
            [e for e in log_events if e.ev <= m.ev], seat, msg.last_ev, ctx.settings.grace_ms
        )
    client.live, client.seat = lm, seat
    ctx.hub.attach_seat(lm, seat, client)
    client.send(resumed(m, seat, missed, ctx.clock()))
    await ctx.hub.execute(lm, lambda m: m.decide_connect(seat, client.id, ctx.clock()))
    if m.result is not None and m.rated:  # the result screen shows what the race did to the ratings
        change = await ctx.store.rating_change(m.variant, m.id)
        if change is not None:
            client.send(change)


@routes.handles(p.Ready)
async def on_ready(ctx: Context, client: Client, msg: p.Ready) -> None:
    await _execute(ctx, client, Match.decide_ready)


@routes.handles(p.MoveMsg)
async def on_move(ctx: Context, client: Client, msg: p.MoveMsg) -> None:
    lm, seat = seated(client)
    started = time.perf_counter()
    decision = await ctx.hub.execute(lm, lambda m: m.decide_move(seat, msg.seq, msg.move, ctx.clock()))
    if isinstance(decision, Duplicate):
        client.send(ack_again(lm.match, seat, decision.seq, client.version))
        return
    ctx.metrics.moves.inc()
    ctx.metrics.ack_latency.observe(time.perf_counter() - started)


@routes.handles(p.Finish)
async def on_finish(ctx: Context, client: Client, msg: p.Finish) -> None:
    await _execute(ctx, client, Match.decide_finish)


@routes.handles(p.Resign)
async def on_resign(ctx: Context, client: Client, msg: p.Resign) -> None:
    await _execute(ctx, client, lambda m, seat, now: m.decide_finish(seat, now, "resign"))


@routes.handles(p.Rematch)
async def on_rematch(ctx: Context, client: Client, msg: p.Rematch) -> None:
    await _execute(ctx, client, lambda m, seat, now: m.decide_rematch(seat, new_code(), now))


@routes.handles(p.Leave)
async def on_leave(ctx: Context, client: Client, msg: p.Leave) -> None:
    lm, seat = seated(client)
    await ctx.hub.execute(lm, lambda m: m.decide_leave(seat, ctx.clock()))
    ctx.hub.detach(lm, client)
    client.live, client.seat = None, None


@routes.handles(p.HintRequest)
async def on_hint(ctx: Context, client: Client, msg: p.HintRequest) -> None:
    lm, seat = seated(client)
    game = _practice_game(lm.match, seat)
    check_hint(lm.match.daily, ctx.clock())
    asker = client.player.id if client.player is not None else client.id
    client.send(p.Hint(move=await ctx.solving.hint(game, asker)))


@routes.handles(p.UndoRequest)
async def on_undo(ctx: Context, client: Client, msg: p.UndoRequest) -> None:
    await _execute(ctx, client, Match.decide_undo)


async def _execute(ctx: Context, client: Client, decide: Callable[[Match, int, int], list[Event]]) -> None:
    """A command of the client's seat: ``decide(match, seat, now)``."""
    lm, seat = seated(client)
    await ctx.hub.execute(lm, lambda m: decide(m, seat, ctx.clock()))


async def unbind(ctx: Context, client: Client) -> None:
    """Leave the match the client sits in or watches; a seat left is recorded as dropped."""
    lm, client.live = client.live, None
    client.seat = None
    if lm is None:
        return
    seat = ctx.hub.detach(lm, client)
    if seat is not None:
        await ctx.hub.record_connection(lm, seat, client.id, connected=False)


async def take_seat(ctx: Context, client: Client, lm: LiveMatch, seat: int) -> None:
    if client.live is not lm or client.seat != seat:
        await unbind(ctx, client)
    client.live, client.seat = lm, seat
    ctx.hub.attach_seat(lm, seat, client)
    await ctx.hub.execute(lm, lambda m: m.decide_connect(seat, client.id, ctx.clock()))


def seated(client: Client) -> tuple[LiveMatch, int]:
    """The match and seat the client plays in; refused if it holds none."""
    if client.live is None or client.seat is None:
        raise Refused(ErrorCode.WRONG_PHASE, "create or join a match first")
    if client.live.seats.get(client.seat) is not client:
        raise Refused(ErrorCode.TAKEN_OVER, "this seat was taken over by a newer connection")
    return client.live, client.seat


async def _rating(ctx: Context, client: Client, variant: str) -> int | None:
    """The client's rating in ``variant`` as a rated race's lobby shows it (a newcomer's: 1500)."""
    return None if client.player is None else await shown_rating(ctx.store, client.player.id, variant)


def _name(client: Client, given: str | None) -> str:
    return clean_name(given or (client.player.name if client.player else None))


def _practice_game(match: Match, seat: int) -> Game:
    if not match.practice:
        raise Refused(ErrorCode.NOT_ALLOWED, "hints are for practice games only")
    game = match.seat(seat).game
    if game is None or match.status != "playing" or match.seat(seat).ended is not None:
        raise Refused(ErrorCode.WRONG_PHASE, "your game is not being played")
    return game
