""" "Race a bot": a bot the server seats in a match, playing like a person would.

A ``BotPeer`` is an in-process client: the hub sends it the same messages as
a player's connection (it sits in ``LiveMatch.seats`` like one), and it sends
its commands through ``App.dispatch``, the very path a WebSocket frame takes
after parsing: join, ready, move with its own ``seq``, rematch. So its moves
are decided and validated by the match like anyone's, and it decides them
only from what a racer receives (its own ``View`` and the opponent's
``progress``), with ``engine.view_players``.

It readies when the human readies, plays at a human pace (a move every
``PACE_S`` seconds, jittered), agrees to a rematch, and stops at the result
when no rematch follows, or when its match is dropped.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
from collections.abc import Sequence
from typing import Any

from . import protocol as p
from .dispatch import Context
from .engine.view_players import STRATEGIES
from .live import CLOSE_TRY_AGAIN, LiveMatch
from .liveness import connection_id
from .store import PlayerRecord

log = logging.getLogger(__name__)

PACE_S = (0.6, 1.6)  # seconds between moves, uniform: a brisk human
RETRY_S = 1.0  # before resuming again when the store did not answer
NAMES = {"greedy": "Greedy bot", "lookahead": "Lookahead bot"}


class BotPeer:
    """A bot seat: a ``Client`` like a connection, with an inbox instead of a socket."""

    _ids = itertools.count(1)

    def __init__(self, ctx: Context, strategy: str, pace_s: tuple[float, float] | None = None) -> None:
        self.ctx = ctx
        self.strategy = strategy
        self.decide = STRATEGIES[strategy]
        self.pace_s = PACE_S if pace_s is None else pace_s
        self.id = connection_id(ctx.instance, f"bot{next(self._ids)}")
        self.player: PlayerRecord | None = None
        self.live: LiveMatch | None = None
        self.seat: int | None = None
        self.request_host: str | None = None
        self.rng = random.Random()
        # None: stop; CLOSE_TRY_AGAIN: the connection was closed for a resume (as a client would)
        self._inbox: asyncio.Queue[p.Outgoing | int | None] = asyncio.Queue()
        self._seq = 0
        self._ready_sent = False
        self._resuming = False
        self._alone = False  # every human's game has ended: nobody waits to see a human pace
        self._token = ""

    # ---------------------------------------------------------- peer side

    def send(self, message: p.Outgoing) -> None:
        self._inbox.put_nowait(message)

    def send_many(self, frames: Sequence[bytes]) -> None:
        for frame in frames:
            self.send(frame)

    def close(self, code: int, reason: str) -> None:
        self._inbox.put_nowait(code if code == CLOSE_TRY_AGAIN else None)

    # ---------------------------------------------------------- player side

    async def _command(self, message: p.ClientMessage) -> None:
        await self.ctx.dispatch(self, message)

    async def join(self, match: str) -> None:
        await self._command(p.Join(match=match, name=NAMES[self.strategy]))

    async def run(self) -> None:
        """Read what the seat receives and act on it, until the race is over."""
        try:
            while True:
                item = await self._inbox.get()
                if item is None:
                    return
                if isinstance(item, int):
                    await self._resume()
                    continue
                msg = p.as_message(item)
                if not await self._on(msg):
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bot %s failed", self.id)
        finally:
            await self._leave()

    async def _on(self, msg: Any) -> bool:
        """Act on one message; False when the bot is done."""
        if isinstance(msg, p.Seated):
            self._token = msg.token
        elif isinstance(msg, p.Lobby):
            others_ready = any(s.ready for s in msg.seats if s.seat != self.seat)
            if msg.status == "lobby" and others_ready and not self._ready_sent:
                self._ready_sent = True
                await self._command(p.Ready())
        elif isinstance(msg, p.Start | p.Ack) and msg.view is not None:
            await self._play(msg.view)
        elif isinstance(msg, p.Rejected):
            if msg.code in (p.ErrorCode.OUT_OF_ORDER, p.ErrorCode.UNAVAILABLE):
                await self._resume()  # out of step with the match: its snapshot says where it stands
                return True
            self._seq = msg.seq - 1
            if msg.view is not None and msg.code != p.ErrorCode.WRONG_PHASE:
                await self._play(msg.view)
        elif isinstance(msg, p.Finished) and msg.seat != self.seat:
            self._alone = True  # two seats: the human's game is over, the result waits for the bot's
        elif isinstance(msg, p.Result):
            await self._command(p.Rematch())
        elif isinstance(msg, p.Rematched):
            self._seq, self._ready_sent, self._alone = 0, False, False
            await self._command(p.Resume(match=msg.match, token=self._token, last_ev=0))
        elif isinstance(msg, p.Resumed):
            self._seq, self._resuming = msg.last_seq, False
            if msg.lobby.status == "playing" and msg.view is not None:
                await self._play(msg.view)
        elif isinstance(msg, p.Error) and msg.code in (p.ErrorCode.NOT_FOUND, p.ErrorCode.TAKEN_OVER):
            return False
        elif isinstance(msg, p.Error) and self._resuming and msg.code == p.ErrorCode.UNAVAILABLE:
            self._resuming = False
            await asyncio.sleep(RETRY_S)
            await self._resume()
        return True

    async def _play(self, view: p.View) -> None:
        if view.over:
            return
        if not self._alone:
            await asyncio.sleep(self.rng.uniform(*self.pace_s))
        # A strategy may search (lookahead solves the open stock): off the event loop's thread.
        move = await asyncio.to_thread(self.decide, view.model_dump())
        if move is None:
            await self._command(p.Finish())
            return
        self._seq += 1
        await self._command(p.MoveMsg(seq=self._seq, move=move))

    async def _resume(self) -> None:
        """Take the seat back (after a close that asks for it, ``Recovery.reload``), as a client would."""
        if self.live is not None and not self._resuming:
            self._resuming = True
            await self._command(p.Resume(match=self.live.match.id, token=self._token, last_ev=0))

    async def _leave(self) -> None:
        if self.live is not None:
            self.ctx.hub.detach(self.live, self)
            self.live, self.seat = None, None


async def seat_bot(ctx: Context, lm: LiveMatch, strategy: str) -> BotPeer:
    """Seat a bot in ``lm``'s free seat and let it play; the hub cancels it at shutdown."""
    bot = BotPeer(ctx, strategy)
    await bot.join(lm.match.id)
    ctx.hub.spawn(bot.run())
    return bot
