"""What people are told of a match: each event rendered per audience, and the snapshots.

Rendering reads the state after an event was applied and never changes it
(bar the engine's undo and replay of a lagging board, which leaves the game
as it was). A racer sees their own board and the others' numbers; spectators
see the boards, during a race only as far as every racer has drawn
(``Match.release_held``; docs/protocol.md, "What spectators see of a live
race"). The per-move messages are built straight to JSON (``p.ack_frame`` and
kin say why).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .. import daily
from .. import protocol as p
from ..engine import Game, Move
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
    Readied,
    RematchAsked,
    RematchOpened,
    SeatTaken,
    Started,
    TookBack,
)
from .state import DEFAULT_GRACE_MS, Match, Play


@dataclass(frozen=True, slots=True)
class Audience:
    """Who receives a message: everyone, one racer, everyone but one racer, or the spectators.

    ``mover`` is one racer too, the one whose command the message answers
    (an ack, an undone): a resume never replays those (the snapshot holds
    their outcome). ``version`` is the protocol version the message is for
    (0: every version): an ack, a rejected move and a board differ between v1
    and v2 (``server/protocol.py``).
    """

    kind: Literal["all", "seat", "mover", "others", "spectators"]
    seat: int | None = None
    version: int = 0

    @classmethod
    def of_seat(cls, seat: int) -> Audience:
        """The racer in ``seat`` alone."""
        return cls("seat", seat)

    @staticmethod
    def mover(seat: int, version: int) -> Audience:
        """The racer in ``seat``, answered about their own command, if they speak ``version``."""
        return _MOVERS[seat, version]

    @staticmethod
    def all_but(seat: int) -> Audience:
        """The racer's opponents and the spectators."""
        return _OTHERS[seat]

    @staticmethod
    def spectators(version: int = 0) -> Audience:
        """The spectators who speak ``version`` (0: every one)."""
        return _SPECTATORS[version]

    def has_seat(self, seat: int) -> bool:
        """Whether the racer in ``seat`` is in this audience."""
        if self.kind in ("seat", "mover"):
            return self.seat == seat
        return self.kind == "all" or (self.kind == "others" and self.seat != seat)

    @property
    def has_spectators(self) -> bool:
        return self.kind not in ("seat", "mover")

    @property
    def racer(self) -> int | None:
        """The seat, when this audience is that one racer alone."""
        return self.seat if self.kind in ("seat", "mover") else None

    def speaks(self, version: int) -> bool:
        """Whether a receiver speaking ``version`` is meant by this audience."""
        return self.version in (0, version)


SEATS = (0, 1)  # a match has at most two
# Made once: every move renders for some of them.
_MOVERS: dict[tuple[int, int], Audience] = {
    (seat, v): Audience("mover", seat, v) for seat in SEATS for v in p.PROTOCOL_VERSIONS
}
_SPECTATORS = {v: Audience("spectators", None, v) for v in (0, *p.PROTOCOL_VERSIONS)}
_OTHERS = {seat: Audience("others", seat) for seat in SEATS}
ALL = Audience("all")
SPECTATORS = Audience.spectators()
SPECTATORS_V1 = Audience.spectators(1)
SPECTATORS_V2 = Audience.spectators(2)
Rendered = list[tuple[Audience, p.Outgoing]]


@dataclass(frozen=True, slots=True)
class Present:
    """Who is there to receive what an event renders: nothing is built for nobody.

    A board view costs more than the rest of a move together, so nobody's
    view is built for nobody (a process without the mover's connection, a
    race with no spectators). ``racers``: each seat whose racer is there, with
    the protocol versions the answers to their own commands (acks, undos) are
    for, in ``PROTOCOL_VERSIONS`` order; none for a racer who takes no answers
    (a resume's missed messages: the snapshot holds their outcome).
    ``spectators``: the versions spectators there speak, in the same order.
    """

    racers: Mapping[int, tuple[int, ...]]
    spectators: tuple[int, ...]

    @classmethod
    def speaking(cls, *versions: int) -> Present:
        """Every racer (answered in ``versions``) and spectators speaking ``versions``."""
        return cls({seat: versions for seat in SEATS}, versions)

    def answered(self, seat: int) -> tuple[int, ...]:
        """The versions in which the racer in ``seat`` is there to be answered."""
        return self.racers.get(seat, ())


EVERYONE = Present.speaking(*p.PROTOCOL_VERSIONS)


def lobby(m: Match, ev: int | None = None) -> p.Lobby:
    return p.Lobby(
        ev=m.ev if ev is None else ev,
        match=m.id,
        variant=m.variant,
        solo=m.capacity == 1,
        time_limit_s=m.time_limit_s,
        status=m.status,
        seats=[
            p.SeatInfo(
                seat=n,
                name=s.name,
                ready=s.ready,
                connected=s.conn is not None,
                rematch=s.rematch,
                rating=s.rating,
            )
            for n, s in enumerate(m.seats)
            if s is not None
        ],
        daily=m.daily,
        ranked=m.ranked,
        chosen_deal=m.chosen,
        boards_lag=m.spectators_lag,
        rated=m.rated,
        quick=m.ready_by is not None,
        ready_by=m.ready_by,
        called_off=m.called_off is not None,
    )


def progress(m: Match, seat: int, ev: int | None = None) -> p.Progress:
    s = m.seat(seat)
    numbers = s.final.numbers if s.final else Numbers.of(m.game_or_deal(seat))
    return p.Progress(
        ev=m.ev if ev is None else ev,
        seat=seat,
        leftover=numbers.leftover,
        on_grid=numbers.on_grid,
        complete=numbers.complete,
        moves=numbers.moves,
        finished=s.ended is not None,
    )


def render(m: Match, e: Event, present: Present = EVERYONE) -> Rendered:
    """What each audience receives for an event just applied, for those ``present`` only where it costs."""
    if type(e) is Moved:  # nearly every event
        return _render_move(m, e, present)
    if isinstance(e, SeatTaken | Left | Readied | Connected | Disconnected | RematchAsked | CalledOff):
        return [(ALL, lobby(m, e.ev))]
    if isinstance(e, CountdownStarted):
        return [(ALL, lobby(m, e.ev)), (ALL, p.Countdown(ev=e.ev, starts_at=e.starts_at))]
    if isinstance(e, Started):
        return _render_start(m, e, present)
    if isinstance(e, Moved | TookBack):
        return _render_move(m, e, present)
    if isinstance(e, Ended):
        finished = p.Finished(ev=e.ev, seat=e.seat, score=e.score, reason=e.reason, at=e.at)
        watchers = present.spectators
        return [(ALL, finished), *(_released_boards(m, e.ev, watchers, {}) if watchers else [])]
    if isinstance(e, Decided):
        return [(ALL, lobby(m, e.ev)), (ALL, daily.public_result(e.result, e.at))]  # status: finished
    if isinstance(e, RematchOpened):
        return [(ALL, p.Rematched(ev=e.ev, match=e.match))]
    return []


def _render_start(m: Match, e: Started, present: Present) -> Rendered:
    out: Rendered = [(ALL, lobby(m, e.ev))]  # its status: playing
    watchers = bool(present.spectators)
    boards = []
    v = None  # every seat's board is the same deal, fresh: built once
    for n, s in enumerate(m.seats):
        if s is not None and (watchers or n in present.racers):
            v = v or m.view(n)
            boards.append(v)
            out.append((Audience.of_seat(n), p.Start(ev=e.ev, started_at=e.at, ends_at=e.ends_at, view=v)))
    if watchers:
        spectators = p.Start(ev=e.ev, started_at=e.at, ends_at=e.ends_at, boards=[b for b in boards if b])
        out.append((SPECTATORS, spectators))
    return out


def _render_move(m: Match, e: Moved | TookBack, present: Present) -> Rendered:
    """Every move renders: built straight to JSON (``p.ack_frame`` and kin say why).

    What a message needs is computed only for those there to receive it: a
    v1 view. A v2 reveal and check are the play's as ``Match.apply`` kept it.
    """
    numbers = e.numbers.as_dict()
    s = m.seat(e.seat)
    finished = s.ended is not None
    out: Rendered = [(_OTHERS[e.seat], p.progress_frame(e.ev, e.seat, numbers, finished))]
    movers = present.answered(e.seat)
    watchers = present.spectators
    if not (movers or watchers):
        return out
    game = m.game(e.seat)
    if isinstance(e, TookBack):  # practice: one racer, nothing held back; the board comes whole
        whole = game.player_view()
        model = p.View.model_validate(whole)
        for v in movers:
            out.insert(0, (Audience.mover(e.seat, v), p.Undone(ev=e.ev, moves=e.moves, view=model)))
        if 1 in watchers:
            out.append((SPECTATORS_V1, p.board_frame(e.ev, e.seat, "undo", [], whole, numbers, finished)))
        if 2 in watchers:
            board = p.BoardV2(ev=e.ev, seat=e.seat, move="undo", check=game.check(), view=model)
            out.append((SPECTATORS_V2, board))
        return out
    view = game.player_view() if 1 in movers else None
    for v in movers:
        out.insert(0, (Audience.mover(e.seat, v), _ack(game, s.plays[-1], v, e.seq, e.ev, view)))
    if watchers:
        out += _released_boards(m, e.ev, watchers, {e.seat: view} if view is not None else {})
    return out


def _ack(game: Game, play: Play, version: int, seq: int, ev: int, view: dict[str, Any] | None) -> bytes:
    """A racer's ack of the ``play`` ``game`` has just made: v1 with the whole ``view``, v2 with what it revealed."""
    if version == 1:
        return p.ack_frame(seq, ev, play.move, play.auto, game.player_view() if view is None else view)
    return p.ack_v2_frame(seq, ev, play.fields)


def ack_again(m: Match, seat: int, seq: int, version: int) -> bytes:
    """The ack of an applied seq again (a resend), as first sent."""
    game, recorded = _replayed(m, seat, seq)
    return _ack(game, Play.of(game, recorded), version, seq, m.seat(seat).seq_evs[seq - 1], None)


def undone_again(m: Match, seat: int, seq: int) -> p.Undone:
    """The ``undone`` of an applied undo's seq again (a resend), as first sent."""
    game, undone = _replayed(m, seat, seq)
    view = p.View.model_validate(game.player_view())
    return p.Undone(ev=m.seat(seat).seq_evs[seq - 1], moves=[str(move) for move in undone], view=view)


def _replayed(m: Match, seat: int, seq: int) -> tuple[Game, list[Move]]:
    """The seat's game as its ``seq`` left it, replaying its moves and undos, and what that seq recorded.

    (Its play with any automatic swaps, or what its undo took back.)
    """
    s = m.seat(seat)
    game = Game.new(m.seed, m.variant)
    recorded: list[Move] = []
    for n, text in enumerate(s.seq_moves[:seq], 1):
        for _ in range(s.undos_after.get(n - 1, 0)):
            game.undo()
        recorded = game.undo() if text == UNDO else game.play(text)
    return game, recorded


def _released_boards(
    m: Match, ev: int, versions: Sequence[int], built: Mapping[int, dict[str, Any]]
) -> Rendered:
    """A board frame, per version in ``versions``, for each play the event ``ev`` showed spectators, in order.

    (``Match.release_held``.) A frame shown late carries the ``ev`` that
    showed it, so a spectator's ``ev`` still only grows; a v1 frame's
    ``progress`` is the racer's as of ``ev``, like the live ``progress``
    frames. ``built``: views already built, by seat (the mover's, for its
    ack): most plays are shown at once.
    """
    out: Rendered = []
    v1, v2 = 1 in versions, 2 in versions
    for n, count in m.released.items():
        s = m.seat(n)
        numbers, finished = Numbers.of(m.game(n)).as_dict(), s.ended is not None
        for play, view in _shown_plays(m, n, count, v1, built.get(n)):
            if view is not None:
                out.append(
                    (SPECTATORS_V1, p.board_frame(ev, n, play.move, play.auto, view, numbers, finished))
                )
            if v2:
                out.append((SPECTATORS_V2, p.board_v2_frame(ev, n, play.move, play.fields)))
    return out


def _shown_plays(
    m: Match, n: int, count: int, v1: bool, current: dict[str, Any] | None
) -> list[tuple[Play, dict[str, Any] | None]]:
    """Seat ``n``'s ``count`` plays just shown, each as kept (``SeatState.plays``), with its board
    after it as a v1 view when ``v1`` (``current``: the game's view).

    Only a v1 view is built here: the game has gone on by the plays still
    held; it steps back over those and the shown ones (the engine's undo)
    and plays them again, taking each shown play's view on the way. So a
    held play keeps no board, and costs nothing where nobody watches.
    """
    s = m.seat(n)
    end = len(s.plays) - len(s.held)
    shown = s.plays[end - count : end]
    if not v1:
        return [(play, None) for play in shown]
    game = m.game(n)
    if count == 1 and not s.held:  # most plays: shown as they are made
        return [(shown[0], game.player_view() if current is None else current)]
    views = []
    for i, play in enumerate(_take_back(game, count + len(s.held))):
        game.play(play[0])
        if i < count:
            views.append(game.player_view())
    return list(zip(shown, views, strict=True))


def _shown_board(m: Match, n: int) -> tuple[p.View | None, list[str]]:
    """Seat ``n``'s board and moves as spectators have been shown them (``Match.release_held``).

    With plays held, the game steps back over them and plays them again: up to
    2,000 plays each way, 10 ms, so the board is kept until a play is shown
    (``SeatState.shown_board``), not rebuilt for each ``watch`` of the race.
    """
    s = m.seat(n)
    if not s.held:
        return m.view(n), m.moves(n)
    shown = s.last_seq - len(s.held)
    if s.shown_board is None or s.shown_board[0] != shown:
        game = m.game(n)
        held = _take_back(game, len(s.held))
        s.shown_board = shown, p.View.model_validate(game.player_view()), [move.text for move in game.moves]
        for play in held:
            game.play(play[0])
    return s.shown_board[1], s.shown_board[2]


def _take_back(game: Game, plays: int) -> list[list[Move]]:
    """Undo ``game``'s last ``plays`` plays; return them oldest first, each to play again with its first move."""
    undone = [game.undo() for _ in range(plays)]
    undone.reverse()
    return undone


def watching(m: Match, now: int) -> p.Watching:
    """A spectator's snapshot, as of the last event applied (``now``: when it is sent)."""
    boards = []
    for n, s in enumerate(m.seats):
        if s is None:
            continue
        view, moves = _shown_board(m, n)
        boards.append(p.SeatSnapshot(seat=n, progress=progress(m, n), view=view, moves=moves))
    return p.Watching(
        match=m.id,
        ev=m.ev,
        now=now,
        started_at=m.started_at or None,
        ends_at=m.ends_at or None,
        lobby=lobby(m),
        boards=boards,
        result=daily.public_result(m.result, now),
    )


def resumed(m: Match, seat: int, missed: list[p.Message], now: int) -> p.Resumed:
    """A racer's snapshot on ``resume``, with the messages it ``missed``."""
    return p.Resumed(
        match=m.id,
        seat=seat,
        ev=m.ev,
        now=now,
        started_at=m.started_at or None,
        ends_at=m.ends_at or None,
        last_seq=m.seat(seat).last_seq,
        lobby=lobby(m),
        view=m.view(seat),
        opponents=[progress(m, n) for n, s in enumerate(m.seats) if s is not None and n != seat],
        result=daily.public_result(m.result, now),
        missed=missed,  # type: ignore[arg-type]
    )


def missed_events(
    events: Sequence[Event], seat: int, after: int, grace_ms: int = DEFAULT_GRACE_MS
) -> list[p.Message]:
    """Replay a log and keep what ``seat`` would have received after ``after``, in order.

    Events up to ``after`` are only folded, and nothing is rendered for the
    seat's own moves (their acks): the ``resumed`` snapshot holds their
    outcome (its ``view`` and ``last_seq``), and building an ack's view for
    each of a long game's moves was most of a resume's cost. Nor are the
    plays kept (``Match.keeps_plays``): no ack, spectator's board or replay
    is built from this copy, and a play's check would be a third of its fold.
    """
    match = Match.from_events(events[:1], grace_ms, keep_plays=False)
    out: list[p.Message] = []
    present = Present({seat: ()}, ())  # the racer, answered in no version
    for e in events[1:]:
        match.apply(e)
        if e.ev <= after:
            continue
        for audience, message in render(match, e, present):
            if audience.has_seat(seat):
                out.append(p.as_message(message))
    return out
