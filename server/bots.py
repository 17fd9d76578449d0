""" "Race a bot": a bot the server seats in a match, playing like a person would.

A ``BotPeer`` is an in-process client: the hub sends it the same messages as
a player's connection (it sits in ``LiveMatch.seats`` like one), and it sends
its commands through ``App.dispatch``, the very path a WebSocket frame takes
after parsing: join, ready, move, rematch. It speaks protocol v2 through the
client's ``Session`` (``client/session.py``), which numbers its moves, plays
them on its own ``ClientGame``, checks every ack, resumes when needed and
follows a rematch, as it does for every Python client. So its moves are
decided and validated by the match like anyone's, and it decides them only
from what a racer knows (its own game and the opponent's ``progress``), with
``engine.view_players``.

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

from client.session import Session

from . import protocol as p
from .dispatch import Context
from .engine import IllegalMove, InvalidMove
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
        self.version = 2  # in process, it needs no hello to speak v2
        self.live: LiveMatch | None = None
        self.seat: int | None = None
        self.request_host: str | None = None
        self.rng = random.Random()
        self.session = Session(version=2, name=NAMES[strategy], greet=False)
        # None: stop; CLOSE_TRY_AGAIN: the connection was closed for a resume (as a client would)
        self._inbox: asyncio.Queue[p.Outgoing | int | None] = asyncio.Queue()
        self._ready_sent = False
        self._alone = False  # every human's game has ended: nobody waits to see a human pace

    # ---------------------------------------------------------- peer side

    def send(self, message: p.Outgoing) -> None:
        self._inbox.put_nowait(message)

    def send_many(self, frames: Sequence[bytes]) -> None:
        for frame in frames:
            self.send(frame)

    def close(self, code: int, reason: str) -> None:
        self._inbox.put_nowait(code if code == CLOSE_TRY_AGAIN else None)

    # ---------------------------------------------------------- player side

    async def _send(self) -> None:
        """Carry out what the session has to send, as the server would have parsed it."""
        for message in self.session.data_to_send():
            await self.ctx.dispatch(self, message)

    async def join(self, match: str) -> None:
        self.session.request(p.Join(match=match, name=NAMES[self.strategy]))
        await self._send()

    async def resume(self) -> None:
        """Take the seat back (after a close that asks for it, ``Recovery.reload``), as a client would."""
        if self.session.match is not None and not self.session.resuming:
            self.session.disconnected()
            self.session.connected()
            await self._send()

    async def run(self) -> None:
        """Read what the seat receives and act on it, until the race is over."""
        try:
            while True:
                item = await self._inbox.get()
                if item is None:
                    return
                if isinstance(item, int):
                    await self.resume()
                    continue
                if isinstance(item, bytes):
                    self.session.receive(item)
                else:
                    self.session.receive_message(item)
                for answer in self.session.answers_received():
                    await self._answered(answer.message)
                for msg in self.session.events_received():
                    if not await self._on(msg):
                        return
                await self._send()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bot %s failed", self.id)
        finally:
            await self._leave()

    async def _answered(self, reply: p.Message) -> None:
        if isinstance(reply, p.Error) and reply.code == p.ErrorCode.UNAVAILABLE and not self.session.holding:
            await asyncio.sleep(RETRY_S)  # the store did not answer the resume: again, later
            await self.resume()

    async def _on(self, msg: p.Message) -> bool:
        """Act on one message; False when the bot is done."""
        if isinstance(msg, p.Lobby):
            others_ready = any(s.ready for s in msg.seats if s.seat != self.session.seat)
            if msg.status == "lobby" and others_ready and not self._ready_sent:
                self._ready_sent = True
                self.session.command(p.Ready())
        elif isinstance(msg, p.Start | p.AckV2 | p.Resumed | p.RejectedV2):
            await self._play()
        elif isinstance(msg, p.Finished) and msg.seat != self.session.seat:
            self._alone = True  # two seats: the human's game is over, the result waits for the bot's
        elif isinstance(msg, p.Result):
            self.session.command(p.Rematch())
        elif isinstance(msg, p.Rematched):
            self._ready_sent, self._alone = False, False  # the session takes the seat in the new match
        elif isinstance(msg, p.Error) and msg.code in (p.ErrorCode.NOT_FOUND, p.ErrorCode.TAKEN_OVER):
            return False
        return True

    async def _play(self) -> None:
        """The next move, once the last one is acknowledged (so no card is still to be revealed)."""
        s = self.session
        if s.game is None or s.game.is_over or s.trusting or not s.holding:
            return
        if not self._alone:
            await asyncio.sleep(self.rng.uniform(*self.pace_s))
        # A strategy may search (lookahead solves the open stock): off the event loop's thread.
        move = await asyncio.to_thread(self.decide, s.game.player_view())
        if move is not None:
            try:
                s.move(move)
                return
            except (IllegalMove, InvalidMove) as exc:
                log.warning("bot %s: its strategy chose a move the rules refuse: %s", self.id, exc)
        s.command(p.Finish())

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
