"""A match's state: the fold of its events, and the commands decided on it.

``Match.decide_*`` turns a command into new events (or a ``Refused``)
without changing anything; the shell makes them durable (a conditional
append at the last ``ev``), then every process that holds the match calls
``apply`` for each, in ``ev`` order, and renders it (``render.py``).
Times are milliseconds since the epoch, always passed in (``now``), so tests
drive the clock.
"""

from __future__ import annotations

import hashlib
import hmac
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from .. import daily
from .. import protocol as p
from ..engine import Game, IllegalMove, InvalidMove, Move, get_variant, rating
from ..errors import ErrorCode, Refused
from ..protocol import Reason, Status
from .events import (
    UNDO,
    CalledOff,
    Connected,
    CountdownStarted,
    Decided,
    Disconnected,
    Ended,
    Event,
    Left,
    Moved,
    Numbers,
    Opened,
    Readied,
    RematchAsked,
    RematchOpened,
    SeatTaken,
    Started,
    TookBack,
)

COUNTDOWN_MS = 3000
#: A quick race's racers have this long from the pairing to be ready, or it is called off.
READY_WITHIN_MS = 15_000
DEFAULT_GRACE_MS = 60_000
#: Plays a racer may make in one game: games take tens to a few hundred, but piles may be
#: moved back and forth without end, and some work grows with a game's plays (an old seq's
#: ack is replayed, a spectator's lagging board is rebuilt): a cycling racer must not stall it.
MAX_PLAYS = 2000
#: Seats a match gives in all (its creator's, each join): a lobby is joined a few times, but joining
#: and leaving again and again grew its log without end, and a resume or a load reads it whole.
MAX_SEATINGS = 100


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class FinalBoard:
    """A decided seat's board as it is still shown (resume, spectators): its last view and moves.

    A live ``Game`` keeps indexes and an undo log for play; once the match is
    decided nothing plays again, and a server keeps decided matches for a
    while (the hub's FINISHED_TTL_MS): under a steady stream of quick games
    those would hold most of its memory (docs/benchmarks.md).
    """

    view_json: bytes
    moves: tuple[str, ...]
    numbers: Numbers

    @classmethod
    def of(cls, game: Game) -> FinalBoard:
        return cls(p.dumps(game.player_view()), tuple(m.text for m in game.moves), Numbers.of(game))


class Play(NamedTuple):
    """A play as a v2 ``board`` frame and a replay carry it: its move, the automatic swaps after it
    (a v1 frame's ``auto``), and its ``fields`` (``p.play_fields``: what it revealed, those swaps,
    the check) as the JSON those frames end with.

    ``Match.apply`` takes each play's fields off the game as it applies it,
    once: the racer's ack, the spectators' boards and, at the decision, the
    replay (``server/replay.py``) read them, and none asks the engine again.
    Kept as JSON, a play costs about half what a dict and an int would.
    """

    move: str
    auto: tuple[str, ...]
    fields: bytes

    @classmethod
    def of(cls, game: Game, recorded: list[Move]) -> Play:
        """The play ``game`` has just made (``recorded``: its moves, it then any automatic ones)."""
        auto = tuple([m.text for m in recorded[1:]]) if len(recorded) > 1 else ()  # swaps: after a win only
        return cls(recorded[0].text, auto, p.play_fields(game.revealed(), auto, game.check()))


@dataclass
class SeatState:
    name: str
    token_hash: str
    player: str | None
    rating: int | None = None  # shown in the lobby of a rated race
    queued_since: int | None = None  # a quick race: the racer's place in the queue
    ready: bool = False
    conn: str | None = None
    gone_since: int | None = None  # disconnected during play since (ms)
    _game: Game | None = field(default=None, repr=False)  # from the start until decided: read as ``game``
    final: FinalBoard | None = None  # from then on
    numbers: Numbers | None = None  # while playing: as of the last event applied (the list shows them)
    seq_moves: list[str] = field(default_factory=list)  # the move of each seq (or ``UNDO``), 1-based
    seq_evs: list[int] = field(default_factory=list)  # the ev of each seq's ack (or undone), 1-based
    # Every play applied, in order (an undo takes its play back): until the decision, which hands
    # them to the replay (``Match.take_plays``).
    plays: list[Play] = field(default_factory=list)
    # Practice: seq -> the seqless undos (v1's) made before the next.
    undos_after: dict[int, int] = field(default_factory=dict)
    # Spectator lag (``Match.release_held``): the cards drawn after each play not yet shown to
    # spectators, oldest first. Only the count: a v1 board is rebuilt when it is shown (v2's are
    # the kept ``plays``).
    held: list[int] = field(default_factory=list)
    # The board spectators were shown while plays are held, as ``render.watching`` rebuilt it: the
    # plays it shows (``last_seq - len(held)``), its view and moves. Rebuilt only when that changes.
    shown_board: tuple[int, p.View, list[str]] | None = field(default=None, repr=False)
    ended: Ended | None = None
    rematch: bool = False
    # A move decided and left on ``_game`` until its event is applied (``Match.decide_move``):
    # its seq and the moves it recorded. Only ``play`` sees it; ``game`` takes it back first.
    _decided: tuple[int, list[Move]] | None = field(default=None, repr=False)

    @property
    def last_seq(self) -> int:
        return len(self.seq_moves)

    @property
    def game(self) -> Game | None:
        """The game as its applied events left it: a decided play not applied yet is taken back first.

        So whatever reads the game while a decided move awaits the store (a
        spectator's snapshot, the other racer's event from another process,
        a conflict's retry) sees only applied plays.
        """
        if self._decided is not None:
            self._decided = None
            assert self._game is not None
            self._game.undo()
        return self._game

    @game.setter
    def game(self, game: Game | None) -> None:
        self._decided, self._game = None, game

    def keep_decided(self, seq: int, recorded: list[Move]) -> None:
        """Leave ``seq``'s play, just made on ``_game``, in place for its event (``play``)."""
        self._decided = (seq, recorded)

    def play(self, seq: int, text: str) -> list[Move]:
        """Apply the play of ``seq``; the moves recorded. A decided play still in place is not played again."""
        decided = self._decided
        if decided is not None and decided[0] == seq and decided[1][0].text == text:
            self._decided = None
            return decided[1]
        game = self.game
        assert game is not None
        return game.play(text)


@dataclass(frozen=True)
class QuickRacer:
    """A player the quick-race queue paired: their seat's token is known only to their connection."""

    player: str
    name: str
    rating: int
    since: int  # when they joined the queue
    token_hash: str


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A resent move (or v2 undo) already applied: answer as first (``render.ack_again``, ``undone_again``)."""

    seat: int
    seq: int


class Match:
    """One match's state, folded from its events."""

    def __init__(self, opened: Opened, grace_ms: int = DEFAULT_GRACE_MS, keep_plays: bool = True) -> None:
        self.id = opened.match
        self.variant = opened.variant
        self.seed = opened.seed
        self.capacity = opened.seats
        self.time_limit_s = opened.time_limit_s
        self.practice = opened.practice
        self.daily = opened.daily
        self.ranked = opened.ranked
        self.chosen = opened.chosen
        self.rated = opened.rated
        self.private = opened.private
        self.ready_by = opened.ready_by
        self.called_off: CalledOff | None = None
        self.created_at = opened.at
        self.grace_ms = grace_ms
        self.seats: list[SeatState | None] = [None] * opened.seats
        self.seatings = 0  # seats taken so far (``MAX_SEATINGS``)
        self.status: Status = "lobby"
        self.starts_at = 0
        self.started_at = 0
        self.ends_at = 0
        self.result: p.Result | None = None
        self.decided_at = 0
        self.rematch_match: str | None = None
        self.ev = opened.ev
        #: The last event applied: a copy whose ``ev`` the log reaches, but with another event
        #: there, is not in step (a store rolled back, then written by a process that had not
        #: applied the lost events): ``Recovery`` compares it with the log's.
        self.last_event: Event = opened
        # Both racers play the same stock, so a board shown live would show a racer (watching
        # as someone else) their own stock to come: spectators see boards with a lag (``release_held``).
        self.spectators_lag = opened.seats >= 2 and not get_variant(opened.variant).open_stock
        self.released: dict[int, int] = {}  # seat -> plays the last event applied showed to spectators
        # The result of the last ``Decided`` decided on this copy, and once it is applied, the seats'
        # plays for its replay (``take_plays``): only the process that decided builds the replay.
        self._deciding: p.Result | None = None
        self._decided_plays: dict[int, list[Play]] | None = None
        # Whether each play is kept (``SeatState.plays``): not in a copy folded only to tell a seat
        # what it missed (``render.missed_events``), which renders no ack, board or replay.
        self.keeps_plays = keep_plays

    # ------------------------------------------------------------ helpers

    @classmethod
    def from_events(
        cls, events: Iterable[Event], grace_ms: int = DEFAULT_GRACE_MS, keep_plays: bool = True
    ) -> Match:
        it = iter(events)
        first = next(it)
        if not isinstance(first, Opened):
            raise ValueError("a match log starts with 'opened'")
        match = cls(first, grace_ms, keep_plays)
        for event in it:
            match.apply(event)
        return match

    def seat(self, n: int) -> SeatState:
        s = self.seats[n]
        if s is None:
            raise Refused(ErrorCode.NOT_FOUND, f"seat {n} is empty")
        return s

    def seat_of_token(self, token: str) -> int:
        h = hash_token(token)
        for n, s in enumerate(self.seats):
            if s is not None and hmac.compare_digest(s.token_hash, h):
                return n
        raise Refused(ErrorCode.BAD_TOKEN, "that token holds no seat in this match")

    def _ends_at(self, start: int) -> int:
        end = start + self.time_limit_s * 1000
        day_end = daily.game_end(self.daily, self.ranked)
        return end if day_end is None else max(start, min(end, day_end))

    def _has_player(self, player: str | None) -> bool:
        """Whether the identity ``player`` (None: one that said no hello) holds a seat here."""
        return player is not None and any(s is not None and s.player == player for s in self.seats)

    def done_for(self, player: str) -> bool:
        """Whether nothing here can change ``player``'s score any more: decided, or their game ended.

        While they are not seated (they left the lobby) it is not: they may take a seat again.
        """
        if self.status == "finished":
            return True
        return any(s is not None and s.player == player and s.ended is not None for s in self.seats)

    def check_watcher(self, player: str | None, seat: int | None) -> None:
        """Refuse a racer who asks to watch their own race before its result.

        A spectator sees both boards, and the opponent's waste and refills
        would reveal the racer's own stock to come. ``seat`` is the one the
        asking connection holds here, ``player`` its identity (if it said
        hello): the same person on another connection is refused too.
        Identities are free, so a racer may still watch as a stranger: what
        keeps that harmless is the spectator lag (``release_held``).
        """
        if self.status == "finished" or len(self.seats) < 2:
            return
        if seat is not None or self._has_player(player):
            raise Refused(
                ErrorCode.NOT_ALLOWED, "you race in this match: racers see only each other's progress"
            )

    def game(self, n: int) -> Game:
        game = self.seat(n).game
        assert game is not None
        return game

    def game_or_deal(self, n: int) -> Game:
        """A seat's game, or the untouched deal when it ends before the start (countdown)."""
        return self.seat(n).game or Game.new(self.seed, self.variant)

    def view(self, seat: int) -> p.View | None:
        """A seat's own board: none before the start."""
        s = self.seat(seat)
        if s.final is not None:
            return p.View.model_validate_json(s.final.view_json)
        return None if s.game is None else p.View.model_validate(s.game.player_view())

    def moves(self, seat: int) -> list[str]:
        """The moves a seat has played, automatic swaps included."""
        s = self.seat(seat)
        if s.final is not None:
            return list(s.final.moves)
        return [] if s.game is None else [m.text for m in s.game.moves]

    def _next(self) -> _Counter:
        return _Counter(self.ev)

    def _playing_seat(self, n: int, now: int) -> SeatState:
        if self.status != "playing":
            raise Refused(ErrorCode.WRONG_PHASE, _NOT_PLAYING[self.status])
        s = self.seat(n)
        if s.ended is not None:
            raise Refused(ErrorCode.WRONG_PHASE, "your game has ended")
        if now >= self.ends_at:
            raise Refused(ErrorCode.WRONG_PHASE, "the time is up")
        return s

    # ----------------------------------------------------------- commands

    @staticmethod
    def open(
        match_id: str,
        *,
        variant: str,
        seed: str,
        seats: int,
        time_limit_s: int,
        name: str,
        token: str,
        player: str | None,
        now: int,
        practice: bool = False,
        daily: str | None = None,
        ranked: bool = False,
        chosen: bool = False,
        rated: bool = False,
        private: bool = False,
        rating: int | None = None,
    ) -> list[Event]:
        return [
            Opened(
                ev=1,
                at=now,
                match=match_id,
                variant=variant,
                seed=seed,
                seats=seats,
                time_limit_s=time_limit_s,
                practice=practice,
                daily=daily,
                ranked=ranked,
                chosen=chosen,
                rated=rated,
                private=private,
            ),
            SeatTaken(
                ev=2, at=now, seat=0, name=name, token_hash=hash_token(token), player=player, rating=rating
            ),
        ]

    @staticmethod
    def open_quick(
        match_id: str, *, variant: str, seed: str, time_limit_s: int, racers: list[QuickRacer], now: int
    ) -> list[Event]:
        """A quick race: both racers seated at once, rated, to be ready within ``READY_WITHIN_MS``."""
        opened = Opened(ev=1, at=now, match=match_id, variant=variant, seed=seed, seats=2,
                        time_limit_s=time_limit_s, rated=True, ready_by=now + READY_WITHIN_MS)  # fmt: skip
        seated = [
            SeatTaken(ev=n + 2, at=now, seat=n, name=r.name, token_hash=r.token_hash, player=r.player,
                      rating=r.rating, queued_since=r.since)
            for n, r in enumerate(racers)
        ]  # fmt: skip
        return [opened, *seated]

    def rematch_log(self, new_match: str, seed: str, now: int) -> list[Event]:
        """The opening events of the rematch: a new seed, the same seats and tokens."""
        events: list[Event] = [
            Opened(
                ev=1,
                at=now,
                match=new_match,
                variant=self.variant,
                seed=seed,
                seats=self.capacity,
                time_limit_s=self.time_limit_s,
                practice=self.practice,
                rated=self.rated,
                private=self.private,
            )
        ]
        for n, s in enumerate(self.seats):
            if s is not None:
                events.append(
                    SeatTaken(
                        ev=len(events) + 1,
                        at=now,
                        seat=n,
                        name=s.name,
                        token_hash=s.token_hash,
                        player=s.player,
                    )
                )
        return events

    def decide_join(
        self, name: str, token: str, player: str | None, now: int, rating: int | None = None
    ) -> list[Event]:
        if self.status != "lobby":
            raise Refused(ErrorCode.WRONG_PHASE, "this match has already started")
        if self.called_off is not None:
            raise Refused(ErrorCode.NOT_FOUND, "this race was called off")
        if self.rated and player is None:
            raise Refused(ErrorCode.NOT_ALLOWED, "this race is rated: say hello first, to be rated")
        if self._has_player(player):
            raise Refused(ErrorCode.NOT_ALLOWED, "you already hold a seat in this match: resume it")
        free = [n for n, s in enumerate(self.seats) if s is None]
        if not free:
            raise Refused(ErrorCode.FULL, "both seats are taken")
        if len(free) == len(self.seats):  # its creator (and anyone since) left: nobody invites now
            raise Refused(ErrorCode.NOT_FOUND, "everyone left this race: it was called off")
        if self.seatings >= MAX_SEATINGS:
            raise Refused(ErrorCode.NOT_ALLOWED, "this lobby was joined too many times: create another")
        c = self._next()
        return [
            SeatTaken(
                ev=c(),
                at=now,
                seat=free[0],
                name=name,
                token_hash=hash_token(token),
                player=player,
                rating=rating if self.rated else None,
            )
        ]

    def decide_connect(self, seat: int, conn: str, now: int) -> list[Event]:
        self.seat(seat)
        return [Connected(ev=self.ev + 1, at=now, seat=seat, conn=conn)]

    def decide_disconnect(self, seat: int, conn: str, now: int) -> list[Event]:
        s = self.seats[seat]
        if s is None or s.conn != conn:
            return []  # an older connection, already taken over
        return [Disconnected(ev=self.ev + 1, at=now, seat=seat, conn=conn)]

    def decide_leave(self, seat: int, now: int) -> list[Event]:
        if self.status == "lobby" and self.ready_by is not None:  # a quick race: called off, not reopened
            return [] if self.called_off is not None else [CalledOff(ev=self.ev + 1, at=now, absent=[seat])]
        if self.status == "lobby":
            return [Left(ev=self.ev + 1, at=now, seat=seat)]
        if self.status in ("countdown", "playing") and self.seat(seat).ended is None:
            return self._end([seat], "resign", now)
        return []

    def decide_replaced(self, now: int) -> list[Event]:
        """Its creator opened another match: one open lobby, one practice game being played, each.

        A lobby never starts. A practice game being played ends as it stands
        (``finish``, its score stored as for a ``finish``): the player went to
        a new game, as "New game" means, and a game left so used to be held a
        minute or two (the grace period, then a decided match's minute) while
        its creator could start the next one at their frame rate. A race
        never ends so: another racer's game is in it (nor a ranked daily
        attempt, which is not practice).
        """
        if self.status == "lobby":
            return [] if self.called_off is not None else [CalledOff(ev=self.ev + 1, at=now, absent=[0])]
        creator = self.seats[0]
        if self.practice and self.status in ("countdown", "playing") and creator and creator.ended is None:
            return self._end([0], "finish", now)
        return []

    def decide_ready(self, seat: int, now: int) -> list[Event]:
        if self.status != "lobby":
            raise Refused(ErrorCode.WRONG_PHASE, "the match is not in its lobby")
        if self.called_off is not None:
            raise Refused(ErrorCode.WRONG_PHASE, "this race was called off")
        daily.check_ready(self.daily, self.ranked, now)
        if self.seat(seat).ready:
            return []
        c = self._next()
        events: list[Event] = [Readied(ev=c(), at=now, seat=seat)]
        others_ready = all(s is not None and (s.ready or n == seat) for n, s in enumerate(self.seats))
        if others_ready:  # practice: nobody to race, nothing to get ready for; the game starts at once
            countdown = 0 if self.practice else COUNTDOWN_MS
            events.append(CountdownStarted(ev=c(), at=now, starts_at=now + countdown))
        return events

    def _numbered(self, seat: int, seq: int, sent: str, now: int) -> SeatState | Duplicate:
        """The playing seat that ``sent`` (a move's text, or ``UNDO``) takes ``seq`` of; Duplicate for a resend.

        A seq the seat holds already is a resend if it holds the same there
        (answered again, applied once); with something else, or a seq that
        skips ahead, the client lost count (``out_of_order``).
        """
        s = self.seat(seat)
        if 1 <= seq <= s.last_seq:
            had = s.seq_moves[seq - 1]
            if not (had == sent if UNDO in (had, sent) else _same_move(sent, had)):
                raise Refused(
                    ErrorCode.OUT_OF_ORDER, f"seq {seq} was {had}, not {sent}: the next is {s.last_seq + 1}"
                )
            return Duplicate(seat, seq)
        s = self._playing_seat(seat, now)
        if seq != s.last_seq + 1:
            raise Refused(ErrorCode.OUT_OF_ORDER, f"expected seq {s.last_seq + 1}, got {seq}")
        return s

    def decide_move(self, seat: int, seq: int, text: str, now: int) -> list[Event] | Duplicate:
        s = self._numbered(seat, seq, text, now)
        if isinstance(s, Duplicate):
            return s
        if s.last_seq >= MAX_PLAYS:
            raise Refused(ErrorCode.NOT_ALLOWED, f"a game has at most {MAX_PLAYS} moves: finish it")
        game = self.game(seat)
        try:
            move = Move.parse(text)
            recorded = game.play(move)
        except (InvalidMove, IllegalMove) as exc:
            raise Refused(ErrorCode.ILLEGAL, str(exc)) from None
        try:  # the game as it stands after the move: its end is scored on it
            c = self._next()
            events: list[Event] = [
                Moved(ev=c(), at=now, seat=seat, seq=seq, move=move.text, numbers=Numbers.of(game))
            ]
            if game.is_over:
                events += self._end([seat], "over", now, c)
        except BaseException:
            game.undo()
            raise
        # Played once: the play stays for its event's apply, hidden from every other reader
        # (``SeatState.game``), so a move is not played, taken back and played again.
        s.keep_decided(seq, recorded)
        return events

    def decide_undo(self, seat: int, now: int, seq: int | None = None) -> list[Event] | Duplicate:
        """Take the seat's last play back; ``seq`` (v2): the undo numbered among its moves, a resend answered again."""
        if not self.practice:
            raise Refused(ErrorCode.NOT_ALLOWED, "undo is for practice games only")
        if seq is None:
            self._playing_seat(seat, now)
        elif isinstance(numbered := self._numbered(seat, seq, UNDO, now), Duplicate):
            return numbered
        game = self.game(seat)
        if not game.moves:
            raise Refused(ErrorCode.ILLEGAL, "there is no move to undo")
        undone = game.undo()
        numbers = Numbers.of(game)
        for m in undone:
            game.play(m)
        return [
            TookBack(
                ev=self.ev + 1, at=now, seat=seat, moves=[str(m) for m in undone], numbers=numbers, seq=seq
            )
        ]

    def decide_finish(self, seat: int, now: int, reason: Reason = "finish") -> list[Event]:
        self._playing_seat(seat, now)
        return self._end([seat], reason, now)

    def decide_rematch(self, seat: int, new_match: str, now: int) -> list[Event]:
        if self.status != "finished":
            raise Refused(ErrorCode.WRONG_PHASE, "a rematch comes after the result")
        if self.rematch_match is not None:
            return []
        if self.seat(seat).rematch:
            return []
        c = self._next()
        events: list[Event] = [RematchAsked(ev=c(), at=now, seat=seat)]
        if all(s is not None and (s.rematch or n == seat) for n, s in enumerate(self.seats)):
            events.append(RematchOpened(ev=c(), at=now, match=new_match))
        return events

    def tick(self, now: int) -> list[Event]:
        """Events that are due by ``now``: start after the countdown, time-outs, abandonment."""
        if self._ready_due(now):
            absent = [n for n, s in enumerate(self.seats) if s is None or not s.ready]
            return [CalledOff(ev=self.ev + 1, at=now, absent=absent)]
        if self.status == "countdown" and now >= self.starts_at:
            start = self.starts_at
            return [Started(ev=self.ev + 1, at=start, ends_at=self._ends_at(start))]
        if self.status != "playing":
            return []
        if now >= self.ends_at:
            return self._end(self._open_seats(), "timeout", self.ends_at)
        gone = [
            n
            for n in self._open_seats()
            if (s := self.seats[n]) is not None
            and s.gone_since is not None
            and now >= s.gone_since + self.grace_ms
        ]
        if gone:
            return self._end(gone, "abandoned", now)
        return []

    def next_deadline(self) -> int | None:
        """When ``tick`` next has something to do (ms), if ever."""
        if self.status == "lobby" and self.ready_by is not None and self.called_off is None:
            return self.ready_by
        if self.status == "countdown":
            return self.starts_at
        if self.status != "playing":
            return None
        times = [self.ends_at]
        for n in self._open_seats():
            s = self.seats[n]
            if s is not None and s.gone_since is not None:
                times.append(s.gone_since + self.grace_ms)
        return min(times)

    def _ready_due(self, now: int) -> bool:
        """Whether a quick race's time to get ready is up before it started."""
        return (
            self.status == "lobby"
            and self.ready_by is not None
            and self.called_off is None
            and now >= self.ready_by
        )

    def _open_seats(self) -> list[int]:
        return [n for n, s in enumerate(self.seats) if s is not None and s.ended is None]

    def _end(self, seats: list[int], reason: Reason, now: int, c: _Counter | None = None) -> list[Event]:
        c = c or self._next()
        events: list[Event] = []
        ended: dict[int, Ended] = {}
        for n in seats:
            e = Ended(ev=c(), at=now, seat=n, reason=reason, score=self.game_or_deal(n).leftover)
            events.append(e)
            ended[n] = e
        for n, s in enumerate(self.seats):
            if s is not None and s.ended is not None:
                ended[n] = s.ended
        if len(ended) == sum(s is not None for s in self.seats):
            ev = c()
            self._deciding = self._result(ended, ev)  # its apply here keeps the plays (``take_plays``)
            events.append(Decided(ev=ev, at=now, result=self._deciding))
        return events

    def _result(self, ended: dict[int, Ended], ev: int) -> p.Result:
        seats = []
        for n in sorted(ended):
            s, e = self.seat(n), ended[n]
            game = self.game_or_deal(n)
            seats.append(
                p.SeatResult(
                    seat=n,
                    player=s.player,
                    name=s.name,
                    score=e.score,
                    rating=rating(e.score),
                    on_grid=game.on_grid,
                    complete=game.complete,
                    reason=e.reason,
                    finished_at=e.at,
                    moves=[str(m) for m in game.moves],
                )
            )
        winner, draw = race_winner(list(ended.values())) if len(ended) == 2 else (None, False)
        return p.Result(
            ev=ev,
            match=self.id,
            variant=self.variant,
            seed=self.seed,
            started_at=self.started_at,
            decided_at=max(e.at for e in ended.values()),
            seats=seats,
            winner=winner,
            draw=draw,
            daily=self.daily,
            ranked=self.ranked,
            practice=self.practice,
            rated=self.rated,
        )

    # --------------------------------------------------------------- fold

    def apply(self, e: Event) -> None:
        if e.ev != self.ev + 1:
            raise ValueError(f"match {self.id}: event {e.ev} does not follow {self.ev}")
        self.ev = e.ev
        self.last_event = e
        if isinstance(e, SeatTaken):
            self.seats[e.seat] = SeatState(e.name, e.token_hash, e.player, e.rating, e.queued_since)
            self.seatings += 1
        elif isinstance(e, Left):
            self.seats[e.seat] = None
        elif isinstance(e, Readied):
            self.seat(e.seat).ready = True
        elif isinstance(e, Connected):
            seat = self.seat(e.seat)
            seat.conn, seat.gone_since = e.conn, None
        elif isinstance(e, Disconnected):
            seat = self.seat(e.seat)
            seat.conn = None
            if self.status in ("countdown", "playing"):
                seat.gone_since = e.at
        elif isinstance(e, CountdownStarted):
            self.status, self.starts_at = "countdown", e.starts_at
            for s in self.seats:
                if s is not None and s.conn is None:
                    s.gone_since = e.at
        elif isinstance(e, Started):
            self.status, self.started_at, self.ends_at = "playing", e.at, e.ends_at
            for s in self.seats:
                if s is not None:
                    s.game = Game.new(self.seed, self.variant)
                    s.numbers = Numbers.of(s.game)
        elif isinstance(e, Moved):
            mover = self.seat(e.seat)
            recorded = mover.play(e.seq, e.move)
            game = self.game(e.seat)
            if self.keeps_plays:
                mover.plays.append(Play.of(game, recorded))
            mover.numbers = e.numbers
            mover.seq_moves.append(e.move)
            mover.seq_evs.append(e.ev)
            mover.held.append(game.drawn)
            self.release_held()
        elif isinstance(e, TookBack):
            self.game(e.seat).undo()
            undoer = self.seat(e.seat)
            if self.keeps_plays:
                undoer.plays.pop()
            undoer.numbers = e.numbers
            if e.seq is None:
                undoer.undos_after[undoer.last_seq] = undoer.undos_after.get(undoer.last_seq, 0) + 1
            else:  # numbered: a resend of its seq is answered again (``render.undone_again``)
                undoer.seq_moves.append(UNDO)
                undoer.seq_evs.append(e.ev)
        elif isinstance(e, Ended):
            self.seat(e.seat).ended = e
            self.release_held()  # its racer learns nothing more: the others' boards need not wait for them
        elif isinstance(e, Decided):
            self.status, self.result, self.decided_at = "finished", e.result, e.at
            plays = {}
            for n, s in enumerate(self.seats):
                if s is not None:
                    plays[n], s.plays = s.plays, []
                    if s.game is not None:
                        s.final, s.game = FinalBoard.of(s.game), None
            # Kept only where it was decided, for its replay; elsewhere no replay is built from them.
            self._decided_plays = plays if e.result is self._deciding else None
            self._deciding = None
        elif isinstance(e, RematchAsked):
            self.seat(e.seat).rematch = True
        elif isinstance(e, RematchOpened):
            self.rematch_match = e.match
        elif isinstance(e, CalledOff):
            self.called_off = e

    def take_plays(self) -> dict[int, list[Play]] | None:
        """Each seat's plays, by seat, as this copy applied them up to the decision, once; None where
        the decision was applied but not decided (another process's: its replay is built there).

        The replay is built from them (``server/replay.py``) where the match is decided, without
        replaying the logs through the engine; taken, they are dropped.
        """
        plays, self._decided_plays = self._decided_plays, None
        return plays

    def release_held(self) -> None:
        """Show spectators every held play that no racer still playing can learn from any more.

        Both racers play the same stock, so a spectator (maybe one of the
        racers, watching under another identity) who saw a board drawn further
        into the stock than the other racer would know that racer's stock to
        come. So a play is shown once every other racer whose game goes on has
        drawn at least as many stock cards as its racer had after it. Draw
        counts only grow, so a seat's plays come out in order; most plays draw
        nothing beyond that and come out at once. A racer whose game ended
        holds nothing back any more, so once every game has ended all is shown.
        """
        self.released.clear()
        for n, s in enumerate(self.seats):
            if s is None or not s.held:
                continue
            limit = self._draw_limit(n)
            shown = len(s.held) if limit is None else bisect_right(s.held, limit)
            if shown:
                del s.held[:shown]
                self.released[n] = shown

    def _draw_limit(self, n: int) -> int | None:
        """How far into the stock seat ``n``'s shown board may be: as far as every other playing racer (None: any)."""
        if not self.spectators_lag:
            return None
        limit = None  # a loop, not min() over a generator: asked after every play
        for t, s in enumerate(self.seats):
            if t != n and s is not None and s.ended is None:
                drawn = self.game(t).drawn
                if limit is None or drawn < limit:
                    limit = drawn
        return limit


def _same_move(text: str, played: str) -> bool:
    """Whether ``text`` writes the move ``played`` (its canonical text) was: a resend, not another move."""
    try:
        return text == played or Move.parse(text).text == played
    except InvalidMove:
        return False


def race_winner(ended: list[Ended]) -> tuple[int | None, bool]:
    """RULES.md "Race result": resigning loses; then lower score; then earlier finish."""
    a, b = sorted(ended, key=lambda e: e.seat)
    if (a.reason == "resign") != (b.reason == "resign"):
        return (b.seat if a.reason == "resign" else a.seat), False
    ka, kb = (a.score, a.at), (b.score, b.at)
    if ka == kb:
        return None, True
    return (a.seat if ka < kb else b.seat), False


_NOT_PLAYING = {
    "lobby": "the race has not started",
    "countdown": "the race has not started yet",
    "finished": "the race is over",
}


class _Counter:
    """Hands out the ev numbers of a batch of events."""

    def __init__(self, last: int) -> None:
        self._last = last

    def __call__(self) -> int:
        self._last += 1
        return self._last
