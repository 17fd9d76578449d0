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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .. import daily
from .. import protocol as p
from ..engine import Game, Move
from .events import (
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
from .state import DEFAULT_GRACE_MS, Match


@dataclass(frozen=True, slots=True)
class Audience:
    """Who receives a message: everyone, one racer, everyone but one racer, or the spectators."""

    kind: Literal["all", "seat", "others", "spectators"]
    seat: int | None = None

    @classmethod
    def of_seat(cls, seat: int) -> Audience:
        """The racer in ``seat`` alone."""
        return cls("seat", seat)

    @classmethod
    def all_but(cls, seat: int) -> Audience:
        """The racer's opponents and the spectators."""
        return cls("others", seat)

    def has_seat(self, seat: int) -> bool:
        """Whether the racer in ``seat`` is in this audience."""
        if self.kind == "seat":
            return self.seat == seat
        return self.kind == "all" or (self.kind == "others" and self.seat != seat)

    @property
    def has_spectators(self) -> bool:
        return self.kind != "seat"

    @property
    def racer(self) -> int | None:
        """The seat, when this audience is that one racer alone."""
        return self.seat if self.kind == "seat" else None


ALL = Audience("all")
SPECTATORS = Audience("spectators")
Rendered = list[tuple[Audience, p.Outgoing]]


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


def render(m: Match, e: Event, wanted: Callable[[Audience], bool] = lambda _: True) -> Rendered:
    """What each audience receives for an event just applied.

    ``wanted`` says which audiences are there to receive: a board view costs
    more than the rest of a move together, so nobody's view is built for
    nobody (a process without the mover's connection, a race with no
    spectators).
    """
    if isinstance(e, SeatTaken | Left | Readied | Connected | Disconnected | RematchAsked | CalledOff):
        return [(ALL, lobby(m, e.ev))]
    if isinstance(e, CountdownStarted):
        return [(ALL, lobby(m, e.ev)), (ALL, p.Countdown(ev=e.ev, starts_at=e.starts_at))]
    if isinstance(e, Started):
        return _render_start(m, e, wanted)
    if isinstance(e, Moved | TookBack):
        return _render_move(m, e, wanted)
    if isinstance(e, Ended):
        finished = p.Finished(ev=e.ev, seat=e.seat, score=e.score, reason=e.reason, at=e.at)
        return [(ALL, finished), *(_released_boards(m, e.ev, {}) if wanted(SPECTATORS) else [])]
    if isinstance(e, Decided):
        return [(ALL, lobby(m, e.ev)), (ALL, daily.public_result(e.result, e.at))]  # status: finished
    if isinstance(e, RematchOpened):
        return [(ALL, p.Rematched(ev=e.ev, match=e.match))]
    return []


def _render_start(m: Match, e: Started, wanted: Callable[[Audience], bool]) -> Rendered:
    out: Rendered = [(ALL, lobby(m, e.ev))]  # its status: playing
    watchers = wanted(SPECTATORS)
    boards = []
    for n, s in enumerate(m.seats):
        if s is not None and (watchers or wanted(Audience.of_seat(n))):
            v = m.view(n)
            boards.append(v)
            out.append((Audience.of_seat(n), p.Start(ev=e.ev, started_at=e.at, ends_at=e.ends_at, view=v)))
    if watchers:
        spectators = p.Start(ev=e.ev, started_at=e.at, ends_at=e.ends_at, boards=[b for b in boards if b])
        out.append((SPECTATORS, spectators))
    return out


def _render_move(m: Match, e: Moved | TookBack, wanted: Callable[[Audience], bool]) -> Rendered:
    """Every move renders: built straight to JSON (``p.ack_frame`` and kin say why)."""
    numbers = vars(e.numbers)  # dict() would ask the model for keys() first, a slow miss
    finished = m.seat(e.seat).ended is not None
    out: Rendered = [(Audience.all_but(e.seat), p.progress_frame(e.ev, e.seat, numbers, finished))]
    mover, watchers = wanted(Audience.of_seat(e.seat)), wanted(SPECTATORS)
    if not (mover or watchers):
        return out
    game = m.game(e.seat)
    view = game.player_view() if mover or isinstance(e, TookBack) else None
    if mover:
        assert view is not None
        if isinstance(e, Moved):
            auto = [str(move) for move in m.seat(e.seat).last_recorded[1:]]
            mine: p.Outgoing = p.ack_frame(e.seq, e.ev, e.move, auto, view)
        else:
            mine = p.Undone(ev=e.ev, moves=e.moves, view=p.View.model_validate(view))
        out.insert(0, (Audience.of_seat(e.seat), mine))
    if watchers and isinstance(e, TookBack):  # practice: one racer, nothing held back
        assert view is not None
        out.append((SPECTATORS, p.board_frame(e.ev, e.seat, "undo", [], view, numbers, finished)))
    elif watchers:
        out += _released_boards(m, e.ev, {e.seat: view} if view is not None else {})
    return out


def _released_boards(m: Match, ev: int, built: Mapping[int, dict[str, Any]]) -> Rendered:
    """A board frame for each play the event ``ev`` showed spectators (``Match.release_held``), in order.

    A frame shown late carries the ``ev`` that showed it, so a spectator's
    ``ev`` still only grows; its ``progress`` is the racer's as of ``ev``,
    like the live ``progress`` frames. ``built``: views already built, by
    seat (the mover's, for its ack): most plays are shown at once.
    """
    out: Rendered = []
    for n, count in m.released.items():
        s, game = m.seat(n), m.game(n)
        numbers, finished = vars(Numbers.of(game)), s.ended is not None
        for recorded, view in _shown_plays(m, n, count, built.get(n)):
            move, auto = recorded[0].text, [played.text for played in recorded[1:]]
            out.append((SPECTATORS, p.board_frame(ev, n, move, auto, view, numbers, finished)))
    return out


def _shown_plays(
    m: Match, n: int, count: int, current: dict[str, Any] | None
) -> list[tuple[list[Move], dict[str, Any]]]:
    """Seat ``n``'s ``count`` plays just shown, each with its board after it (``current``: the game's view).

    The game has gone on by the plays still held; it steps back over those
    and the shown ones (the engine's undo) and plays them again, taking
    each shown play's view on the way. So a held play keeps nothing but
    its draw count, and costs nothing where nobody watches.
    """
    s, game = m.seat(n), m.game(n)
    if count == 1 and not s.held:  # most plays: shown as they are made
        return [(s.last_recorded, game.player_view() if current is None else current)]
    shown = []
    for i, play in enumerate(_take_back(game, count + len(s.held))):
        recorded = game.play(play[0])
        if i < count:
            shown.append((recorded, game.player_view()))
    return shown


def _shown_board(m: Match, n: int) -> tuple[p.View | None, list[str]]:
    """Seat ``n``'s board and moves as spectators have been shown them (``Match.release_held``)."""
    s = m.seat(n)
    if not s.held:
        return m.view(n), m.moves(n)
    game = m.game(n)
    held = _take_back(game, len(s.held))
    shown = p.View.model_validate(game.player_view()), [move.text for move in game.moves]
    for play in held:
        game.play(play[0])
    return shown


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
    """Replay a log and keep what ``seat`` would have received after ``after``, in order."""
    match = Match.from_events(events[:1], grace_ms)
    out: list[p.Message] = []
    for e in events[1:]:
        match.apply(e)
        if e.ev <= after:
            continue
        for audience, message in render(match, e, lambda a: a.has_seat(seat)):
            if audience.has_seat(seat) and not isinstance(msg := p.as_message(message), p.Ack | p.Undone):
                out.append(msg)
    return out
