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
from ..match.events import SeatTaken, holds_at_its_number
from ..match.render import ack_again, missed_events, resumed, undone_again, watching
from ..match.state import hash_token
from ..seating import seated, take_seat, unbind
from ..store import shown_rating
from ..text import clean_name, clean_seed
from . import daily

routes = Routes()

RESUME_READ_PAUSES_S = (0.0, 0.01, 0.05, 0.2, 0.5)  # before each read of the log a resume makes


@routes.handles(p.Create)
async def on_create(ctx: Context, client: Client, msg: p.Create) -> None:
    chosen = clean_seed(msg.seed) if msg.seed is not None else None
    seed = chosen or (str(msg.deal) if msg.deal is not None else secrets.token_hex(8))
    token = new_token()
    code, day, ranked, claim = new_code(), None, False, None
    if msg.rated and client.player is None:
        raise Refused(ErrorCode.BAD_KEY, "say hello first: a rated race rates who you are")
    if msg.bot is not None:
        ctx.bots.check(client)
    keys = holder_keys(ctx, client)
    ctx.holdings.check(keys, creating=True, replacing=_let_go_of(ctx, client))
    await ctx.holdings.opening(keys)
    if msg.daily:
        day, seed, ranked, claim = await daily.enter(ctx, client, msg, code)
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
        async with daily.given_back_if_refused(ctx, claim):
            lm = await ctx.hub.open(events)
    except Conflict:  # one code in 25^8 is taken: ask again
        raise Refused(ErrorCode.UNAVAILABLE, "that match code was taken; try again") from None
    client.send(p.Seated(type="created", match=lm.match.id, seat=0, token=token))
    await take_seat(ctx, client, lm, 0)
    ctx.holdings.took_seat(keys, lm, created=True)
    await _close_previous(ctx, client, lm.match.id, token)
    if msg.bot is not None:  # "race a bot" (a second seat): it takes seat 1 through dispatch, like a person
        await ctx.bots.seat(lm, msg.bot, client)


async def _close_previous(ctx: Context, client: Client, match_id: str, token: str) -> None:
    """One open match per creator: a new one calls off the lobby they made before, if it never
    started, or ends the practice game they made before, if it is still played (``decide_replaced``).

    Whoever joined the lobby is told (``lobby.called_off``) and a join is
    refused from then on. With nobody here in it any more, the lobby, or the
    practice game (ended now or before), is let go of at once rather than held
    for ``LOBBY_TTL_MS`` or ``UNLOAD_DECIDED_AFTER_MS``: a creator making game
    after game held each of them that long. A lobby's log is forgotten with
    the other lobbies never started (``Store.forget_lobbies``, or Redis's
    expiry); a practice game's stays, with its result: ``resume`` and
    ``replay`` read it back. The creator is their identity, else their connection.
    """
    creator = _creator(client)
    previous = ctx.lobbies.get(creator)
    ctx.lobbies[creator] = (match_id, hash_token(token))
    # Made in this process (the map is this process's), and held here until let go of: a lobby
    # or a game no longer here has nothing left to call off or end (nor a log worth reading).
    if previous is None:
        return
    lm = ctx.hub.live.get(previous[0])
    if lm is None or ctx.hub.expired(lm.match):
        return
    first = lm.match.seats[0]
    if first is None or first.token_hash != previous[1]:
        return  # the creator left it already
    await ctx.hub.execute(lm, lambda m: m.decide_replaced(ctx.clock()))
    m = lm.match
    done = m.called_off is not None or (m.practice and m.status == "finished")
    if done and not lm.seats and not lm.spectators:
        ctx.hub.drop(m.id)


@routes.handles(p.Join)
async def on_join(ctx: Context, client: Client, msg: p.Join) -> None:
    lm = await ctx.hub.get(msg.match)
    keys = holder_keys(ctx, client)
    ctx.holdings.check(keys, creating=False)
    claim = await daily.join(ctx, client, lm.match)
    token = new_token()
    player = client.player.id if client.player else None
    name = _name(client, msg.name)
    rating = await _rating(ctx, client, lm.match.variant) if lm.match.rated else None
    async with daily.given_back_if_refused(ctx, claim):
        events = await ctx.hub.execute(lm, lambda m: m.decide_join(name, token, player, ctx.clock(), rating))
    assert isinstance(events, list) and isinstance(events[0], SeatTaken)
    seat = events[0].seat
    client.send(p.Seated(type="joined", match=lm.match.id, seat=seat, token=token))
    await take_seat(ctx, client, lm, seat)
    ctx.holdings.took_seat(keys, lm, created=False)


@routes.handles(p.Watch)
async def on_watch(ctx: Context, client: Client, msg: p.Watch) -> None:
    lm = await ctx.hub.get(msg.match)
    check_watch(lm.match.daily, ctx.clock())
    lm.match.check_watcher(
        client.player.id if client.player else None, client.seat if client.live is lm else None
    )
    await wait_turn(ctx, client)
    await unbind(ctx, client)
    client.live = lm
    # No await between the snapshot and joining the audience: nothing can slip between.
    client.send(watching(lm.match, ctx.clock()))
    lm.spectators.add(client)


@routes.handles(p.Resume)
async def on_resume(ctx: Context, client: Client, msg: p.Resume) -> None:
    lm = await ctx.hub.get(msg.match)
    seat = lm.match.seat_of_token(msg.token)
    # A connection resuming the seat it holds (a client resyncing) is sent the snapshot, and nothing
    # is recorded: a drop and a connect each time grew the log without end and told everyone twice.
    holds = _holds(client, lm, seat)
    # A resume that replays the log, or records a connect (the log grows: it is read whole by every
    # resume from behind), waits its turn when a seat resumes again and again, and when its client
    # address resumes seat after seat (a seat's share alone let one client resume as many as it holds).
    if msg.last_ev < lm.match.ev or not holds:
        await wait_turn(ctx, client, f"{msg.match}:{seat}")
    if not holds:
        await unbind(ctx, client)
    m = lm.match
    missed: list[p.Message] = []
    if msg.last_ev < m.ev:  # else nothing was missed: the log is not even read
        m, log_events = await _log_as_held(ctx, lm)
        missed = missed_events(log_events, seat, msg.last_ev, ctx.settings.grace_ms)
    holds = holds and _holds(client, lm, seat)  # not taken over meanwhile
    client.live, client.seat = lm, seat
    ctx.hub.attach_seat(lm, seat, client)
    client.send(resumed(m, seat, missed, ctx.clock()))
    ctx.holdings.took_seat(holder_keys(ctx, client), lm, created=False)  # a rematch's seat: counted
    if not holds:
        await ctx.hub.execute(lm, lambda m: m.decide_connect(seat, client.id, ctx.clock()))
    if m.result is not None and m.rated:  # the result screen shows what the race did to the ratings
        change = await ctx.store.rating_change(m.variant, m.id)
        if change is not None:
            client.send(change)


async def wait_turn(ctx: Context, client: Client, seat: str | None = None) -> None:
    """Wait for a turn of the client address's share of what builds a game whole (a resume that replays
    the log, a watch's snapshot, a replay: 0.4-39 ms each for a long game), and of ``seat``'s own share
    of resumes. Waited, not refused: a classroom behind one address reconnecting at once all get in.
    A connection with no address counted (loopback, this machine's) has no address share."""
    turns = [] if seat is None else [(ctx.resumes, seat)]
    address = ctx.addresses.keys.get(client.id)
    if address is not None:
        turns.append((ctx.address_snapshots, address))
    for buckets, key in turns:
        while wait := await buckets.take(key):
            await asyncio.sleep(wait)


def _holds(client: Client, lm: LiveMatch, seat: int) -> bool:
    """Whether ``client`` is the connection attached to ``seat`` of ``lm`` here."""
    return client.live is lm and client.seat == seat and lm.seats.get(seat) is client


async def _log_as_held(ctx: Context, lm: LiveMatch) -> tuple[Match, list[Event]]:
    """The match as held here and its log up to it, for a resume to render what was missed.

    The copy can be ahead of a read of the log: a batch applied meanwhile
    (read again), or a log that lost its end (Redis back from a snapshot, or
    from an AOF written each second), maybe written past since by a process
    that never had the lost events (then the event at the copy's ``ev``
    differs). A few reads, pausing longer each time,
    each against the copy as it is then (a reload replaces it); if they never
    agree, the copy is checked against the log in the background (reloaded if
    the log lost events) and the resume answered ``unavailable``, not spun on.
    """
    for pause in RESUME_READ_PAUSES_S:
        await asyncio.sleep(pause)
        m = lm.match
        log_events = await ctx.store.events(m.id)
        if not log_events:
            return m, []
        if holds_at_its_number(log_events, m.last_event):  # not short of the copy, nor another history
            return m, log_events[: m.ev]
    ctx.hub.recovery.catch_up_soon(lm)
    raise Refused(ErrorCode.UNAVAILABLE, "the store's log of this match ends early; resume again")


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
    ctx.metrics.moved(time.perf_counter() - started)


@routes.handles(p.Finish)
async def on_finish(ctx: Context, client: Client, msg: p.Finish) -> None:
    await _execute(ctx, client, Match.decide_finish)


@routes.handles(p.Resign)
async def on_resign(ctx: Context, client: Client, msg: p.Resign) -> None:
    await _execute(ctx, client, lambda m, seat, now: m.decide_finish(seat, now, "resign"))


@routes.handles(p.Rematch)
async def on_rematch(ctx: Context, client: Client, msg: p.Rematch) -> None:
    keys = holder_keys(ctx, client)
    ctx.holdings.check(keys, creating=False)  # a rematch is a new match, as a create
    seated(client)  # (no seat: nothing asked, nothing counted)
    await ctx.holdings.opening(keys)
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
    if msg.seq is not None and client.version == 1:
        raise Refused(ErrorCode.BAD_MESSAGE, "an undo takes a seq in protocol v2 only")
    lm, seat = seated(client)
    decision = await ctx.hub.execute(lm, lambda m: m.decide_undo(seat, ctx.clock(), msg.seq))
    if isinstance(decision, Duplicate):  # a resend of an undo applied: its first answer again
        client.send(undone_again(lm.match, seat, decision.seq))


async def _execute(ctx: Context, client: Client, decide: Callable[[Match, int, int], list[Event]]) -> None:
    """A command of the client's seat: ``decide(match, seat, now)``."""
    lm, seat = seated(client)
    await ctx.hub.execute(lm, lambda m: decide(m, seat, ctx.clock()))


async def _rating(ctx: Context, client: Client, variant: str) -> int | None:
    """The client's rating in ``variant`` as a rated race's lobby shows it (a newcomer's: 1500)."""
    return None if client.player is None else await shown_rating(ctx.store, client.player.id, variant)


def _creator(client: Client) -> str:
    """Whose lobby a ``create`` opens (one open each): the client's identity, else its connection."""
    return client.player.id if client.player is not None else client.id


def _let_go_of(ctx: Context, client: Client) -> str | None:
    """The match a ``create`` will let go of (``_close_previous``): the creator's lobby or practice game,
    held here with nobody else seated, which a quota should not count against the new one."""
    previous = ctx.lobbies.get(_creator(client))
    lm = ctx.hub.live.get(previous[0]) if previous else None
    if lm is None or not (lm.match.status == "lobby" or lm.match.practice):
        return None
    return lm.match.id if all(s is None for s in lm.match.seats[1:]) else None


def holder_keys(ctx: Context, client: Client) -> list[str]:
    """The keys the client's seats count under (``Holdings``): connection, identity, address."""
    return ctx.holdings.keys(
        client.id, client.player.id if client.player else None, ctx.addresses.keys.get(client.id)
    )


def _name(client: Client, given: str | None) -> str:
    return clean_name(given or (client.player.name if client.player else None))


def _practice_game(match: Match, seat: int) -> Game:
    if not match.practice:
        raise Refused(ErrorCode.NOT_ALLOWED, "hints are for practice games only")
    game = match.seat(seat).game
    if game is None or match.status != "playing" or match.seat(seat).ended is not None:
        raise Refused(ErrorCode.WRONG_PHASE, "your game is not being played")
    return game
