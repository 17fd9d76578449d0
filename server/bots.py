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
``PACE_S`` seconds, jittered, also once the human's game is over: the cost
of a bot race stays that of a person's), agrees to a rematch, and stops at
the result when no rematch follows, or when its match is dropped. Its moves
are decided in the solver's worker processes (``Solving.bot_move``, with a
time budget), never on the event loop's process.

A bot race nobody plays in or watches ends: once nobody has been there for
``WAIT_ALONE_S`` (a page reloading comes back sooner), the bot leaves a
lobby its human left, finishes its game if the human's is over (a human
gone in the race is ended by the match after its grace period), and goes
from a result nobody sees. ``BotRaces`` caps the races a connection, a
player and the whole process may have going (``Settings.bots_per_*``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import time
from collections.abc import Sequence
from typing import Protocol

from client.session import Session

from . import protocol as p
from .engine import IllegalMove, InvalidMove
from .errors import ErrorCode, Refused
from .hub import Hub
from .live import CLOSE_TRY_AGAIN, LiveMatch
from .liveness import connection_id
from .settings import Settings
from .solving import Solving
from .store import PlayerRecord

log = logging.getLogger(__name__)

PACE_S = (0.6, 1.6)  # seconds between moves, uniform: a brisk human
WAIT_ALONE_S = 30.0  # nobody there (a page reloading comes back): then the bot leaves or finishes
NAMES = {"greedy": "Greedy bot", "lookahead": "Lookahead bot"}


class Owner(Protocol):
    """Whoever made a bot race: a connection, with the player it speaks for."""

    id: str
    player: PlayerRecord | None


class Server(Protocol):
    """What a bot uses of its server process (``App``): given, not imported, as the handlers
    that seat bots are what the bot's commands run through."""

    settings: Settings
    hub: Hub
    solving: Solving
    instance: str

    async def dispatch(self, client: BotPeer, message: p.ClientMessage) -> None:
        """Run ``message`` as if ``client`` had sent it."""


class BotPeer:
    """A bot seat: a ``Client`` like a connection, with an inbox instead of a socket."""

    _ids = itertools.count(1)

    def __init__(
        self, ctx: Server, strategy: str, owner: Owner, pace_s: tuple[float, float] | None = None
    ) -> None:
        self.ctx = ctx
        self.strategy = strategy
        self.owner = owner.id, owner.player.id if owner.player is not None else None  # who made the race
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
        self._alone = False  # every human's game has ended
        self._met = False  # its human was seen connected in this match (a rematch's comes later)
        self._alone_since: float | None = None  # since when it waits with nobody there (monotonic)
        self._retry_at: float | None = None  # when the session retries what the store did not take

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
                try:
                    async with asyncio.timeout(self._wait()):
                        item = await self._inbox.get()
                except TimeoutError:  # a retry is due, or left alone for WAIT_ALONE_S
                    if self._retry_at is not None and time.monotonic() >= self._retry_at:
                        self._retry_at = None
                        self.session.retry()
                        await self._send()
                        self._arm_retry()
                        continue
                    if not self._company():
                        await self._give_up()
                        return
                    continue
                if item is None:
                    return
                if isinstance(item, int):
                    await self.resume()
                    continue
                if isinstance(item, bytes):
                    self.session.receive(item)
                else:
                    self.session.receive_message(item)
                self.session.answers_received()  # its requests' answers are events too
                for msg in self.session.events_received():
                    if not await self._on(msg):
                        return
                await self._send()
                self._arm_retry()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bot %s failed", self.id)
        finally:
            await self._leave()

    def _arm_retry(self) -> None:
        """Keep the pause the session asked for before it sends again what the store did not take."""
        delay = self.session.retry_timer()
        if delay is not None and self._retry_at is None:
            self._retry_at = time.monotonic() + delay

    async def _on(self, msg: p.Message) -> bool:
        """Act on one message; False when the bot is done."""
        if isinstance(msg, p.Lobby):
            others_ready = any(s.ready for s in msg.seats if s.seat != self.session.seat)
            company = self._company()
            self._met = self._met or company
            waiting = msg.status == "finished" or (msg.status == "lobby" and self._met)
            self._alone_since = (self._alone_since or time.monotonic()) if waiting and not company else None
            if msg.status == "lobby" and others_ready and not self._ready_sent:
                self._ready_sent = True
                self.session.command(p.Ready())
        elif isinstance(msg, p.Start | p.AckV2 | p.Resumed | p.RejectedV2):
            await self._play()
        elif isinstance(msg, p.Finished) and msg.seat != self.session.seat:
            self._alone = True  # two seats: the human's game is over, the result waits for the bot's
        elif isinstance(msg, p.Result):
            self.session.command(p.Rematch())
            if not self._company():
                self._alone_since = self._alone_since or time.monotonic()
        elif isinstance(msg, p.Rematched):
            self._ready_sent, self._alone, self._met = False, False, False  # the session takes the new seat
            self._alone_since = None
        elif isinstance(msg, p.Error) and msg.code in (p.ErrorCode.NOT_FOUND, p.ErrorCode.TAKEN_OVER):
            return False
        return True

    def _wait(self) -> float | None:
        """How long the bot waits for a message: until a retry is due, or its patience ends."""
        due = None if self._retry_at is None else max(0.0, self._retry_at - time.monotonic())
        return min((w for w in (self._patience(), due) if w is not None), default=None)

    def _patience(self) -> float | None:
        """How long the bot waits alone for company; None when it is not alone (for ever)."""
        if self._alone_since is None:
            return None
        return max(0.0, self._alone_since + WAIT_ALONE_S - time.monotonic())

    async def _give_up(self) -> None:
        """Nobody came back: leave a lobby (a result needs no leaving)."""
        if self.live is not None and self.live.match.status == "lobby":
            self.session.command(p.Leave())
            await self._send()

    def _company(self) -> bool:
        """Whether anyone else is there: a racer connected (to any process), or a spectator here."""
        lm = self.live
        if lm is None:
            return False
        seats = lm.match.seats
        racer = any(s is not None and s.conn is not None for n, s in enumerate(seats) if n != self.seat)
        return racer or len(lm.spectators) > 0

    async def _play(self) -> None:
        """The next move, once the last one is acknowledged (so no card is still to be revealed)."""
        s = self.session
        if s.game is None or s.game.is_over or s.trusting or not s.holding:
            return
        if self._alone and not self._company():
            self._alone_since = self._alone_since or time.monotonic()
            if time.monotonic() >= self._alone_since + WAIT_ALONE_S:
                s.command(p.Finish())  # nobody plays or watches, nor came back: the race ends now
                return
        elif self._alone_since is not None and self.live is not None and self.live.match.status == "playing":
            self._alone_since = None  # someone is back
        await asyncio.sleep(self.rng.uniform(*self.pace_s))
        if s.game is None or s.game.is_over or not s.holding:
            return  # ended meanwhile (its time ran out, or it finished)
        move = await self.ctx.solving.bot_move(self.strategy, s.game.player_view())
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


class BotRaces:
    """The bot races of this process, capped: each costs a worker's time a move, and a task here."""

    def __init__(self, ctx: Server) -> None:
        self._ctx = ctx
        self.bots: set[BotPeer] = set()

    def going(self) -> list[BotPeer]:
        """The bots whose race is not decided yet (one at a result waits for a rematch, and costs nothing)."""
        return [b for b in self.bots if b.live is not None and b.live.match.status != "finished"]

    def check(self, owner: Owner) -> None:
        """Refused if ``owner`` may not start another bot race now."""
        settings, going = self._ctx.settings, self.going()
        conn, player = owner.id, owner.player.id if owner.player is not None else None
        mine = [b for b in going if b.owner[0] == conn or (player is not None and b.owner[1] == player)]
        if len([b for b in mine if b.owner[0] == conn]) >= settings.bots_per_connection or (
            player is not None and len([b for b in mine if b.owner[1] == player]) >= settings.bots_per_player
        ):
            codes = ", ".join(sorted(b.live.match.id for b in mine if b.live is not None))
            raise Refused(ErrorCode.NOT_ALLOWED, f"you have bot races going ({codes}): finish one first")
        if len(going) >= settings.bots_total:
            raise Refused(
                ErrorCode.UNAVAILABLE, "the server races as many bots as it can now; try again soon"
            )

    async def seat(self, lm: LiveMatch, strategy: str, owner: Owner) -> None:
        """Seat a bot in ``lm``'s free seat and let it play; the hub cancels it at shutdown."""
        bot = BotPeer(self._ctx, strategy, owner)
        self.bots.add(bot)
        await bot.join(lm.match.id)  # a refusal is the bot's answer: its run() reads it and stops
        self._ctx.hub.spawn(self._run(bot))

    async def _run(self, bot: BotPeer) -> None:
        try:
            await bot.run()
        finally:
            self.bots.discard(bot)
