"""Who a client is, and what is on record: hello, a player's statistics and history, replays."""

from __future__ import annotations

import hmac
import secrets

from .. import daily, reach, stats
from .. import protocol as p
from ..dispatch import Client, Context, Routes
from ..errors import ErrorCode, Refused
from ..hub import new_token
from ..match.state import hash_token
from ..replay import verified_result
from ..store import PlayerRecord
from ..text import clean_name
from .seat import wait_turn

routes = Routes()


@routes.handles(p.Hello)
async def on_hello(ctx: Context, client: Client, msg: p.Hello) -> None:
    """A new identity, or the one ``player``/``key`` prove; a wrong key changes nothing.

    The connection speaks protocol ``v`` from the answer on. Not while it sits
    in a match or watches one: what it was sent so far is of the version it
    had, and a spectator's feed is that version's.
    """
    if msg.v != client.version and client.live is not None:
        raise Refused(
            ErrorCode.WRONG_PHASE, f"say hello with v {msg.v} before taking a seat or watching, not during"
        )
    if msg.player is None:
        if not await ctx.addresses.new_identity(client.id):
            raise Refused(
                ErrorCode.RATE_LIMITED,
                "too many new identities from your address; try again later, or keep the one you have",
            )
        key = new_token()
        record = PlayerRecord(secrets.token_urlsafe(12), hash_token(key), clean_name(msg.name), ctx.clock())
        await ctx.store.save_player(record)
        _welcome(ctx, client, record, key, msg.v)
        return
    found = await ctx.store.player(msg.player)
    key = msg.key or ""
    if found is None or not hmac.compare_digest(found.key_hash, hash_token(key)):
        raise Refused(
            ErrorCode.BAD_KEY,
            "that player id and key do not match; send hello without them for a new identity",
        )
    record = found
    if msg.name is not None and clean_name(msg.name) != record.name:
        record = PlayerRecord(record.id, record.key_hash, clean_name(msg.name), record.created_at)
        await ctx.store.save_player(record)
    _welcome(ctx, client, record, key, msg.v)


def _welcome(ctx: Context, client: Client, record: PlayerRecord, key: str, version: int) -> None:
    """The client is ``record`` now, speaking protocol ``version``; tell it, with where others
    reach this server for the links it shares (server/reach.py)."""
    client.player = record
    client.version = version
    share = reach.share_host(ctx.settings.host, ctx.port, client.request_host)
    client.send(p.Welcome(player=record.id, key=key, name=record.name, share_host=share))


@routes.handles(p.ReplayRequest)
async def on_replay(ctx: Context, client: Client, msg: p.ReplayRequest) -> None:
    await wait_turn(ctx, client)
    result = await verified_result(ctx.store, msg.match, ctx.clock())
    assert result.seed is not None
    client.send(
        p.Replay(
            match=result.match,
            variant=result.variant,
            seed=result.seed,
            daily=result.daily,
            seats=[
                p.ReplaySeat(seat=s.seat, name=s.name, score=s.score, moves=s.moves) for s in result.seats
            ],
        )
    )


async def subject(ctx: Context, client: Client, player: str | None) -> PlayerRecord:
    """Whose figures: the asker's own (after hello), or a named player's."""
    if player is None:
        if client.player is None:
            raise Refused(ErrorCode.BAD_KEY, "say hello first, or name a player")
        return client.player
    record = await ctx.store.player(player)
    if record is None:
        raise Refused(ErrorCode.NOT_FOUND, f"no player {player}")
    return record


@routes.handles(p.StatsRequest)
async def on_stats(ctx: Context, client: Client, msg: p.StatsRequest) -> None:
    who = await subject(ctx, client, msg.player)
    totals = await ctx.store.totals(who.id)
    client.send(stats.figures(who.id, who.name, totals, daily.day_of(ctx.clock())))


@routes.handles(p.HistoryRequest)
async def on_history(ctx: Context, client: Client, msg: p.HistoryRequest) -> None:
    who = await subject(ctx, client, msg.player)
    before = stats.parse_cursor(msg.before) if msg.before else None
    results = await ctx.store.player_games(who.id, before, msg.limit + 1)
    page = results[: msg.limit]
    client.send(
        p.History(
            player=who.id,
            games=[stats.history_entry(r, who.id) for r in page],
            next=stats.cursor(page[-1]) if len(results) > msg.limit else None,
        )
    )
