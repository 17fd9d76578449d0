"""Where a client sits: the ``Client`` as the server sees it, and taking or leaving a seat.

Apart from the handlers (``server/handlers/``), which only register what a
message does: quick races (``server/quick.py``) seat a paired connection and
put a called-off racer back in the queue, and the ``App`` lets go of a
closed connection's seat, with the same two steps as a ``join`` or a
``leave``. This module imports neither the handlers nor ``server/dispatch.py``,
so none of them goes round in a circle to reach it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .errors import ErrorCode, Refused
from .hub import Hub
from .live import LiveMatch, Peer
from .store import PlayerRecord


class Client(Peer, Protocol):
    """A connection as the handlers see it: a hub peer, with whom it speaks for and where it sits.

    A WebSocket connection (``server/transport.py``) or a bot the server seats
    (``server/bots.py``).
    """

    player: PlayerRecord | None
    live: LiveMatch | None
    seat: int | None
    request_host: str | None  # the Host its connection was opened with (none for a bot)


class Seating(Protocol):
    """What seating uses of its server process (``App``)."""

    hub: Hub
    clock: Callable[[], int]


async def unbind(ctx: Seating, client: Client) -> None:
    """Leave the match the client sits in or watches; a seat left is recorded as dropped."""
    lm, client.live = client.live, None
    client.seat = None
    if lm is None:
        return
    seat = ctx.hub.detach(lm, client)
    if seat is not None:
        await ctx.hub.record_connection(lm, seat, client.id, connected=False)
    m = lm.match
    if seat is not None and m.practice and m.status == "finished" and not lm.spectators and ctx.hub.holds(lm):
        # Its player left their decided practice game: it is let go of now, not a minute after its
        # decision ("play again", a rematch, made game after game, each held that minute). Its log
        # and result stay in the store: a resume or a replay reads them back. (A spectator leaving
        # lets go of nothing: watching two games by turns would read each back every time.)
        ctx.hub.drop(m.id)


async def take_seat(ctx: Seating, client: Client, lm: LiveMatch, seat: int) -> None:
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
