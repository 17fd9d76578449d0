"""Ratings, the board of the best, quick races and the list of live races: their messages.

The rules are elsewhere: what is rated and how (``server/ratings.py``), who
races whom (``server/matchmaking.py``, ``server/quick.py``), what is listed
(``server/live_races.py``).
"""

from __future__ import annotations

from .. import protocol as p
from .. import ratings
from ..dispatch import Client, Context, Routes
from ..errors import ErrorCode, Refused
from ..live import LiveMatch
from ..match import Event
from ..match.events import Decided
from ..store import BoardPlace, Store
from .records import subject
from .seat import holder_keys

routes = Routes()


@routes.handles(p.QuickRace)
async def on_quick(ctx: Context, client: Client, msg: p.QuickRace) -> None:
    await ctx.quick.join(client, msg, holder_keys(ctx, client))


@routes.handles(p.QuickCancel)
async def on_quick_cancel(ctx: Context, client: Client, msg: p.QuickCancel) -> None:
    await ctx.quick.cancel(client)


@routes.handles(p.LiveRequest)
async def on_live(ctx: Context, client: Client, msg: p.LiveRequest) -> None:
    await ctx.live_races.follow(client, msg)


@routes.handles(p.LiveStop)
async def on_live_stop(ctx: Context, client: Client, msg: p.LiveStop) -> None:
    ctx.live_races.stop(client)


@routes.handles(p.RatingsRequest)
async def on_ratings(ctx: Context, client: Client, msg: p.RatingsRequest) -> None:
    who = await subject(ctx, client, msg.player)
    variants = []
    for variant, r in sorted((await ctx.store.ratings(who.id)).items()):
        history = await ctx.store.rating_history(who.id, variant, ratings.HISTORY_POINTS)
        variants.append(
            p.VariantRating(
                variant=variant,
                rating=r.shown,
                deviation=round(r.sigma),
                provisional=r.provisional,
                games=r.games,
                wins=r.wins,
                losses=r.losses,
                draws=r.draws,
                rank=await ctx.store.rating_rank(variant, who.id),
                history=[p.RatingPointInfo(at=h.at, match=h.match, rating=round(h.mu)) for h in history],
            )
        )
    client.send(p.Ratings(player=who.id, name=who.name, variants=variants))


@routes.handles(p.RatingBoardRequest)
async def on_rating_board(ctx: Context, client: Client, msg: p.RatingBoardRequest) -> None:
    if msg.after is not None and msg.start:
        raise Refused(ErrorCode.BAD_MESSAGE, "a page starts at start or after a next, not both")
    after = None if msg.after is None else ratings.parse_board_cursor(msg.after)
    page = await ctx.store.rating_board(msg.variant, msg.start, msg.limit, after)
    you = None
    if client.player is not None:
        you = await _place_of(ctx.store, msg.variant, client.player.id, client.player.name)
    # the ranks before the page: a page past the end (by cursor) is past every rank
    start = page.places[0].rank - 1 if page.places else (msg.start if after is None else page.total)
    client.send(
        p.RatingBoard(
            variant=msg.variant,
            start=start,
            entries=[_entry(e) for e in page.places],
            total=page.total,
            you=you,
            next=None if page.next is None else ratings.board_cursor(*page.next),
        )
    )


async def _place_of(store: Store, variant: str, player: str, name: str) -> p.RatingBoardEntry | None:
    rank = await store.rating_rank(variant, player)
    rating = (await store.ratings(player)).get(variant)
    if rank is None or rating is None:
        return None
    return _entry(BoardPlace(rank, player, name, rating))


def _entry(place: BoardPlace) -> p.RatingBoardEntry:
    return p.RatingBoardEntry(
        rank=place.rank,
        player=place.player,
        name=place.name,
        rating=place.rating.shown,
        games=place.rating.games,
    )


class RatingNews:
    """Tells a rated race's racers and spectators their new ratings, once the decision's process applied them.

    The update is a step of the decision in the store (docs/ratings.md): by
    the time the appending process hears back, it has landed, unless the
    store faltered; then it lands later, and only the statistics show it.
    """

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def applied(self, lm: LiveMatch, e: Event) -> None:
        pass

    async def appended(self, lm: LiveMatch, events: list[Event]) -> None:
        decided = next((e for e in events if isinstance(e, Decided)), None)
        if decided is None or not ratings.is_rated(decided.result):
            return
        change = await self._ctx.store.rating_change(decided.result.variant, decided.result.match)
        if change is not None:
            await self._ctx.hub.tell(lm, change)
