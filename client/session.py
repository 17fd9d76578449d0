"""One client's side of the race protocol, without I/O: what to send, what came, where the game stands.

In the manner of the websockets library's ``protocol.py``: the I/O layer
feeds in what happens (``connected``, ``receive``, ``disconnected``), the
application asks for what it wants (``request``, ``move``, ``command``), and
both read back what to send (``data_to_send``) and what came of it
(``events_received``, ``answers_received``, ``outcomes_received``). No
sockets, no asyncio, no clock. The Python client (``client/api.py``), the
server's bots (``server/bots.py``) and the load bench (``bench/load.py``)
wrap it, so the bookkeeping below exists once:

- **Moves** are numbered 1, 2, 3, ... per match (``seq``) and kept until
  acknowledged. After a drop the seat is resumed from ``last_ev`` and every
  unacknowledged move is sent again with its own seq: the server answers an
  applied seq with its original ack and applies it only once. A practice
  ``undo`` (v2) takes the next seq too, and goes again the same way until
  answered (an applied one is answered with its original ``undone``).
- **The game** (protocol v2) is the client's own ``ClientGame``: a move is
  played on it at once, before the server answers, and its ack brings only
  the cards the play revealed and the check of the position after it
  (docs/client-engine.md). A check that disagrees means the engines have
  diverged: the seat is resumed at once, and the ``resumed`` snapshot
  replaces the game. A ``rejected`` move carries the seat's state as the
  server has it (its view and ``last_seq``): the game is rebuilt from it.
  In v1 the game is the server's view, sent with every ack.
- **Seat commands** (``ready``, ``finish``, ``resign``, ``rematch``,
  ``leave``) are kept until the server is seen to apply them (a ``lobby``, a
  ``finished``, a ``result``) or refuses them: one written into a line that had already died is sent again
  after the resume unless the ``resumed`` snapshot shows it took effect, and
  the refusal of such a repeat (the game ended meanwhile) is not news.
- **Refusals in flight**: a refusal answers the oldest move still on the
  wire (a connection's frames are answered in order). After one, the moves
  sent behind it are void, and their own ``out_of_order`` refusals, still to
  come, are dropped, so they cannot void the moves that take their seqs next.
- **A rematch** is followed: the seat is resumed in the new match with the
  same token, and moves are numbered from 1 again. A new match the server
  cannot find (``not_found``) is asked for again a few times; then the seat
  goes back to the old match's result, with a message.
- **The server's store away** (``unavailable``): a kept command, a
  ``hint`` or a (v2, numbered) ``undo`` refused so is sent again; a move or a
  v1 ``undo`` so refused (it may have landed) or a resume so answered resumes
  the seat again, each after a
  pause that grows (with jitter: many clients refused at once do not come
  back at once), up to ``RETRY_TRIES`` times; then the session gives up with
  an ``error`` event that says what was not done (and a request still
  waiting is answered with the refusal). A dropped connection is dialed again
  after pauses of the same kind (``reconnect_delay``). The pauses are the wrapper's to keep: after
  feeding the session it asks ``retry_timer()`` for a delay, and calls
  ``retry()`` once it has passed. Every repeat is safe on the server: a seq
  applied is acknowledged again, a ``ready`` or ``rematch`` given twice
  changes nothing, a second ``finish`` or ``resign`` is refused
  ``wrong_phase`` (and, for a repeat, not told), a second ``leave`` leaves
  nothing more, a hint changes nothing, an undo's seq counts once. A v1
  undo is the one command the server would apply twice (it has no seq): it
  is never sent again blindly. The resume's snapshot says whether it landed
  (the board has fewer moves than when it was sent; no move may be sent
  while an undo waits): then its answer is made from the snapshot, else it
  is sent again.
- **Spectators** (v2) rebuild each racer's board from the ``watching``
  snapshot and every ``board`` after it; a check that disagrees asks for a
  new snapshot (``watch`` again).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pydantic import ValidationError

from server import protocol as p
from server.engine import ClientGame, IllegalMove, InvalidMove, InvalidView, Move, RevealMismatch

#: Seat commands kept until they are seen to take effect; a repeat of one is harmless.
Kept = p.Ready | p.Finish | p.Resign | p.Rematch | p.Leave
#: Requests an ``unavailable`` refusal does not end: asked again (``retry``), by type.
RETRIED: dict[str, type[p.HintRequest | p.UndoRequest]] = {"hint": p.HintRequest, "undo": p.UndoRequest}
#: Tries of a command (or of taking the seat back) refused ``unavailable`` before giving up.
RETRY_TRIES = 8
#: The pause before the first retry, doubled each time up to the longest (seconds, before jitter).
RETRY_FIRST_S = 0.25
RETRY_LONGEST_S = 4.0
#: Dialing again after a drop: the first pause, doubled each try up to the longest (before jitter),
#: for as long as the server keeps a dropped racer's seat by default (its grace, 60 s): a server
#: restarted by a deploy may take many seconds to listen again, and a client that gave up sooner
#: lost a race it could have resumed.
RECONNECT_FIRST_S = 0.1
RECONNECT_LONGEST_S = 5.0
RECONNECT_FOR_S = 60.0
#: Tries of resuming a rematch's new match the server says it cannot find, before going back.
REMATCH_TRIES = 4
RESUME = "resume"  # what ``retry`` does for the seat itself
LATER = "later"  # what ``_answer`` says of a refusal that does not end its request: it is asked again
REFUSED_AGAIN = ("finish", "resign")  # kept commands whose repeat, once one took effect, is refused
Ack = p.Ack | p.AckV2
Rejected = p.Rejected | p.RejectedV2
#: The answer each request waits for (an ``error`` answers any of them).
ANSWERS: dict[type[p.Message], str] = {
    p.Hello: "welcome",
    p.Create: "created",
    p.Join: "joined",
    p.Watch: "watching",
    p.Resume: "resumed",
    p.HintRequest: "hint",
    p.UndoRequest: "undone",
    p.DailyRequest: "daily",
    p.LeaderboardRequest: "leaderboard",
    p.DaysRequest: "days",
    p.ReplayRequest: "replay",
    p.StatsRequest: "stats",
    p.HistoryRequest: "history",
    p.QuickRace: "queued",
    p.LiveRequest: "live",
    p.RatingsRequest: "ratings",
    p.RatingBoardRequest: "rating_board",
}


class ClientError(Exception):
    """Base of every error of the client side."""


class ServerError(ClientError):
    """The server answered a request with ``error``; ``code`` is its ErrorCode."""

    def __init__(self, code: p.ErrorCode, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message


class MoveRejected(ServerError):
    """A move was refused (``rejected``, or by the client's own engine before it was sent: ``seq`` 0).

    ``view`` is the board as the server has it (as the client has it, for a
    move its engine refused).
    """

    def __init__(self, code: p.ErrorCode, message: str, seq: int, view: p.View | None) -> None:
        super().__init__(code, message)
        self.seq = seq
        self.view = view

    @classmethod
    def of(cls, rejected: Rejected) -> MoveRejected:
        return cls(rejected.code, rejected.message, rejected.seq, rejected.view)


class NotARaceServer(ClientError):
    """A frame that is no race server's message: the other end is something else."""


@dataclass(frozen=True, slots=True)
class Answer:
    """The answer to request ``request`` (``Session.request``): its message, or the ``error`` refusing it."""

    request: int
    message: p.Message


#: A move's outcome: its seq, and its ack, or why it has none (refused, lost with the server's store).
Outcome = tuple[int, Ack | ClientError]


class Session:
    """A client's state in its match and what it has to send, fed with what the server says.

    ``version`` is the protocol spoken (2: moves travel, boards don't).
    ``greet``: say ``hello`` on each new connection (needed for v2, and to be
    recognised); a bot the server seats is in process and needs none.
    """

    def __init__(
        self,
        *,
        version: p.Version = 2,
        name: str | None = None,
        player: str | None = None,
        key: str | None = None,
        greet: bool = True,
        rng: random.Random | None = None,
    ) -> None:
        self.version = version
        self.rng = rng or random.Random()
        self.name, self.player, self.key = name, player, key
        self.greet = greet
        # where we sit (or watch)
        self.match: str | None = None
        self.seat: int | None = None
        self.token: str | None = None
        self.watching = False
        self.last_ev = 0
        # moves: seq -> text, in seq order, until acknowledged
        self.next_seq = 1
        self.unacked: dict[int, str] = {}
        #: v2: the racer's own game: the server's last snapshot, every move acknowledged since,
        #: then the moves played on trust (``_trusted``). v1: the last view the server sent.
        self.game: ClientGame | None = None
        self._view: p.View | None = None
        self._confirmed = 0  # the seq up to which ``game`` is as the server has it
        self._trusted: list[tuple[int, list[Move]]] = []  # (seq, what playing it recorded), in order
        #: spectators: each racer's board (v2 a ClientGame, v1 the last view).
        self.boards: dict[int, ClientGame] = {}
        self._board_views: dict[int, p.View] = {}
        #: times the server's check disagreed with the game here (each time, it was rebuilt)
        self.divergences = 0
        #: a reason no reconnect can help with (the seat taken over, not a race server)
        self.fatal: str | None = None
        # this connection
        self.holding = False  # the seat is held on it; until then, moves and seat commands wait
        self.resuming = False  # a resume is on the way: the refusals before its answer are stale
        self._sent_seq = 0  # the highest seq sent on this connection
        self._held: list[p.ClientMessage] = []  # other seat commands waiting for the seat (``leave``)
        # Kept commands by type until seen to take effect or refused: a resume sends them again.
        self._unconfirmed: dict[str, Kept] = {}
        self._settled: set[str] = set()  # took effect in this match: a repeat is not kept
        # Kept commands sent on this connection and not yet answered, in order: (type, a resend?).
        self._awaiting: list[tuple[str, bool]] = []
        # Resends seen to take effect before their answer came: their refusal (the first send
        # took effect, late: the store ran it after all) is still to come, and is no news.
        self._late = 0
        self._stale: list[int] = []  # seqs of voided moves on the wire whose refusals are yet to come
        self._requests: list[tuple[int, str, str]] = []  # (id, its type, its answer's) sent here, in order
        self._request_ids = 0
        # Requests refused ``unavailable`` (RETRIED), by type: their ids, until sent again or answered.
        self._asking: dict[str, int] = {}
        self._undo_from: int | None = None  # v1: the board's move count when the undo waiting was sent
        self._undo_seq: int | None = None  # v2: the seq of the undo waiting for its answer
        self._leaving: int | None = None  # the seat a kept ``leave`` left, until the server shows it
        # retrying what the server's store did not take: tries so far by kind (a kept command's
        # type, or RESUME), the kinds due at the next ``retry()``, the pause asked of the wrapper
        self._tries: dict[str, int] = {}
        self._due: set[str] = set()
        self._timer: float | None = None
        #: the match a rematch left, while its new one is not resumed yet: the seat goes back there
        #: if the new one cannot be found
        self.rematched_from: str | None = None
        self._rematched_ev = 0  # the ``rematched`` event's: going back asks for what came after it
        # what comes out
        self._out: list[p.ClientMessage] = []
        self._events: list[p.Message] = []
        self._answers: list[Answer] = []
        self._outcomes: list[Outcome] = []

    # ------------------------------------------------------------------ outputs

    def data_to_send(self) -> list[p.ClientMessage]:
        """The messages to write, in order (each call hands them over once)."""
        out, self._out = self._out, []
        return out

    def events_received(self) -> list[p.Message]:
        """What the server said, for the application, in order (``resumed`` followed by what it missed)."""
        events, self._events = self._events, []
        return events

    def answers_received(self) -> list[Answer]:
        answers, self._answers = self._answers, []
        return answers

    def outcomes_received(self) -> list[Outcome]:
        outcomes, self._outcomes = self._outcomes, []
        return outcomes

    def retry_timer(self) -> float | None:
        """Seconds to wait before calling ``retry()``, if a retry was asked for since the last call.

        Handed over once, like ``data_to_send``: the wrapper (re)arms one timer
        with it. A retry asked while one is armed keeps the earlier delay's
        place: ``retry()`` does everything due then.
        """
        timer, self._timer = self._timer, None
        return timer

    def retry(self) -> None:
        """The pause asked by ``retry_timer`` has passed: send again what the store did not take."""
        due, self._due = self._due, set()
        if RESUME in due and self.match is not None and self.token is not None and not self.holding:
            if not any(kind == RESUME for _, kind, _ in self._requests):  # else one is on its way
                self.resume()
            return  # the kept commands go again after the answer (``_flush``)
        if not self.holding:
            return
        sent = {kind for kind, _ in self._awaiting}
        for kind in sorted(due - {RESUME}):
            command = self._unconfirmed.get(kind)
            if command is not None and kind not in sent:
                self._awaiting.append((kind, True))
                self._out.append(command)
            elif kind in self._asking:
                self._ask_again(kind)

    def _again(self, kind: str, what: str) -> bool:
        """Ask for ``kind`` to be retried after a pause; False (and an ``error`` event) once tried enough.

        Giving up answers the requests waiting for it (all of them, for the seat's resume) with that error.
        """
        tries = self._tries.get(kind, 0) + 1
        if tries > RETRY_TRIES:
            self._tries.pop(kind, None)
            gave_up = p.Error(
                code=p.ErrorCode.UNAVAILABLE,
                message=f"gave up: {what} after {RETRY_TRIES} tries, the server's store did not answer",
            )
            self._events.append(gave_up)
            for asked in [k for k in self._asking if kind in (k, RESUME)]:
                self._give(self._asking.pop(asked), asked, gave_up)
            return False
        self._tries[kind] = tries
        self._due.add(kind)
        self._timer = self._backoff(tries, RETRY_FIRST_S, RETRY_LONGEST_S)
        return True

    def reconnect_delay(self, tries: int) -> float:
        """Seconds to wait before dialing again, the ``tries``-th time (1, 2, ...) since the drop.

        The wrapper that dials keeps the clock: it stops once the next dial
        would come past ``RECONNECT_FOR_S`` after the drop.
        """
        return self._backoff(tries, RECONNECT_FIRST_S, RECONNECT_LONGEST_S)

    def _backoff(self, tries: int, first: float, longest: float) -> float:
        """A pause doubling from ``first`` up to ``longest``, half of it drawn at random ("equal jitter").

        Clients refused or dropped at once (the store away, a server
        restarted under thousands of racers) would otherwise come back at
        the same instants, each try a burst, however long the pauses.
        """
        base: float = min(first * 2 ** (tries - 1), longest)
        return base / 2 + self.rng.uniform(0, base / 2)

    # -------------------------------------------------------------------- state

    @property
    def view(self) -> p.View | None:
        """The racer's own board as it stands here (v2: with the moves played on trust)."""
        if self.version == 1:
            return self._view
        return None if self.game is None else p.View.model_validate(self.game.player_view())

    def board(self, seat: int) -> p.View | None:
        """A spectator's board of ``seat``, as shown so far."""
        if self.version == 1:
            return self._board_views.get(seat)
        game = self.boards.get(seat)
        return None if game is None else p.View.model_validate(game.player_view())

    @property
    def retrying(self) -> bool:
        """Whether something the server's store did not take waits to be tried again (``retry``)."""
        return bool(self._tries)

    @property
    def trusting(self) -> bool:
        """Whether moves wait for their acks: the game's legal moves are then provisional (a card to be revealed)."""
        return bool(self._trusted)

    # ------------------------------------------------------------- the line

    def connected(self) -> list[int]:
        """A new connection is open: say hello, take the seat (or the watch) back; the ids of those requests."""
        self._new_connection()
        asked = []
        if self.greet and (self.version != 1 or self.player is not None):
            asked.append(self.hello())
        if self.match is not None and self.watching:
            asked.append(self.watch(self.match))
        elif self.match is not None and self.token is not None:
            asked.append(self.resume())
        return asked

    def disconnected(self) -> list[int]:
        """The connection is gone: the ids of the requests that will never be answered (a numbered undo goes again)."""
        undo = self._numbered_undo()
        lost = [rid for rid, _, _ in self._requests] + list(self._asking.values())
        self._new_connection()
        return [rid for rid in lost if rid != undo]

    def _new_connection(self) -> None:
        """Nothing is asked, held, sent or awaited on the connection to come; what the old one did
        not write is dropped (the moves, kept commands and a numbered undo go again once the seat is held)."""
        undo = self._numbered_undo()
        self._requests, self._out = [], []
        for asked in self._asking:
            self._tries.pop(asked, None)
        self._asking, self._undo_from = {} if undo is None else {"undo": undo}, None
        self._new_line()

    def _numbered_undo(self) -> int | None:
        """The request id of the (v2) undo waiting with its seq, sent or to be sent again; None if none."""
        if self._undo_seq is None:
            return None
        asked = [rid for rid, kind, _ in self._requests if kind == "undo"]
        return self._asking.get("undo", asked[0] if asked else None)

    def _new_line(self) -> None:
        """The seat is not held (yet): nothing sent so far is awaited any more, everything goes again."""
        self.holding, self.resuming = False, False
        self._sent_seq, self._awaiting, self._stale, self._late = 0, [], [], 0

    # --------------------------------------------------------- the application

    def request(self, message: p.ClientMessage) -> int:
        """Send a request (``hello``, ``create``, ``join``, ``watch``, ``resume``, ...); its id for ``answers_received``."""
        self._request_ids += 1
        self._requests.append((self._request_ids, getattr(message, "type", ""), ANSWERS[type(message)]))
        self._out.append(message)
        return self._request_ids

    def asked(self, request: int) -> str:
        """The type of request ``request`` (``hello``, ``resume``, ...), while it waits for its answer."""
        return next((kind for rid, kind, _ in self._requests if rid == request), "request")

    def forget(self, request: int) -> None:
        """Its caller gave up waiting: a late answer goes to the next request instead."""
        self._requests = [r for r in self._requests if r[0] != request]
        for asked in [k for k, rid in self._asking.items() if rid == request]:
            self._give(self._asking.pop(asked), asked, None)

    def _ask_again(self, asked: str) -> None:
        """Send again a request the store did not take (``RETRIED``), or a numbered undo, under its first id."""
        self._requests.append((self._asking.pop(asked), asked, ANSWERS[RETRIED[asked]]))
        self._out.append(p.UndoRequest(seq=self._undo_seq) if asked == "undo" else RETRIED[asked]())

    def _give(self, request: int, asked: str, msg: p.Message | None) -> None:
        """Request ``request`` (of type ``asked``) is over: answered with ``msg`` (None: forgotten)."""
        if msg is not None:
            self._answers.append(Answer(request, msg))
        if asked in RETRIED:
            self._tries.pop(asked, None)
        if asked == "undo":
            refused = isinstance(msg, p.Error) and msg.code != p.ErrorCode.UNAVAILABLE
            if refused and self._undo_seq == self.next_seq - 1:
                self.next_seq -= 1  # the server refused it: its seq numbers the next move
            self._undo_from = self._undo_seq = None

    def hello(self) -> int:
        return self.request(p.Hello(v=self.version, name=self.name, player=self.player, key=self.key))

    def resume(self, match: str | None = None, token: str | None = None) -> int:
        """Take a seat back (this session's own unless given); moves and seat commands wait for the answer."""
        match, token = match or self.match, token or self.token
        if match is None or token is None:
            raise ClientError("nothing to resume: no match and seat token")
        if (match, token) != (self.match, self.token):
            self.match, self.token, self.watching = match, token, False
            self._new_match()
        self._new_line()  # what waits is sent after the answer, and what was sent goes again
        self.resuming = True
        return self.request(p.Resume(match=match, token=token, last_ev=self.last_ev))

    def move(self, text: str) -> int:
        """Number a move and send it (now, or once the seat is held); its seq.

        In v2 it is played on the game here at once: ``IllegalMove`` or
        ``InvalidMove`` (nothing sent) for a move the rules refuse. While
        ``trusting``, a refusal may be lifted by a card still to be revealed.
        """
        if self._undo_from is not None or self._undo_seq is not None:
            raise ClientError("an undo is on its way; play once it is answered")
        if self.version != 1 and self.game is not None:
            recorded = self.game.play(text)
            text = recorded[0].text
            self._trusted.append((self.next_seq, recorded))
        seq = self.next_seq
        self.next_seq += 1
        self.unacked[seq] = text
        if self.token is None or self.holding:
            self._sent_seq = max(self._sent_seq, seq)
            self._out.append(p.MoveMsg(seq=seq, move=text))
        return seq

    def command(self, message: p.ClientMessage) -> None:
        """A seat's command (``ready``, ``finish``, ``resign``, ``rematch``, ``leave``): sent now, or once the seat is held.

        A kept command stays unconfirmed even once written: a socket that is
        already dead takes the write without complaint, and only the server's
        answer shows the command arrived.
        """
        kept: Kept | None = None
        if isinstance(message, Kept) and self.token is not None and message.type not in self._settled:
            kept = message
            self._unconfirmed[kept.type] = kept
        if self.token is None or self.holding:
            if kept is not None:
                self._awaiting.append((kept.type, False))
            self._out.append(message)
        elif kept is None:
            self._held.append(message)

    def undo(self) -> int:
        """Practice: take back the last play (with its automatic moves); the request's id.

        v2 numbers it with the moves (the next seq), so it is sent again like
        them until answered: after a drop, or a pause when the store did not
        answer. v1's has no seq: whether one the store may have missed landed
        is read off the board's count of moves. ClientError while the seat is
        being taken back, or while moves or another undo wait for their
        answers (nothing else may change the board meanwhile).
        """
        if self.token is not None and not self.holding:
            raise ClientError("the seat is being resumed; undo again once it is back")
        if self.unacked or self._undo_from is not None or self._undo_seq is not None:
            raise ClientError("moves or an undo are still on their way; undo once they are answered")
        if self.version != 1:
            self._undo_seq = self.next_seq
            self.next_seq += 1
            return self.request(p.UndoRequest(seq=self._undo_seq))
        view = self.view
        self._undo_from = None if view is None else view.moves
        return self.request(p.UndoRequest())

    def leave(self) -> None:
        """Leave the seat: kept like a seat command until the server shows the seat gone."""
        self._leaving = self.seat
        self.command(p.Leave())
        self.match = self.token = None
        self.seat = None

    # ---------------------------------------------------------------- receiving

    def receive(self, frame: str | bytes) -> None:
        """A frame from the server; ``NotARaceServer`` (and ``fatal`` set) if it is no race server's message."""
        self.receive_message(self.parse(frame))

    def parse(self, frame: str | bytes) -> p.Message:
        """The server message in ``frame``, of this session's version; ``NotARaceServer`` if there is none."""
        try:
            return p.parse_server(frame) if self.version == 1 else p.parse_server_v2(frame)
        except ValidationError:
            text = frame if isinstance(frame, str) else repr(frame)
            self.fatal = f"a message that is no race server's: {text[:60]!r}"
            raise NotARaceServer(self.fatal) from None

    def receive_message(self, msg: p.Message) -> None:
        """A message from the server, already parsed."""
        if isinstance(msg, p.Resumed):
            self._on_resumed(msg)
            return
        ev = getattr(msg, "ev", None)
        if isinstance(ev, int) and ev > self.last_ev:
            self.last_ev = ev
        if isinstance(msg, p.Welcome):
            self.player, self.key = msg.player, msg.key
        elif isinstance(msg, p.Seated):
            self.match, self.seat, self.token, self.watching = msg.match, msg.seat, msg.token, False
            self._new_match()
            self.holding, self._held = True, []
        elif isinstance(msg, p.Watching):
            self._on_watching(msg)
        elif isinstance(msg, p.Rematched):
            self._on_rematched(msg)
        elif isinstance(msg, p.Start):
            self._on_start(msg)
        elif isinstance(msg, Ack):
            self._on_ack(msg)
        elif isinstance(msg, p.Board | p.BoardV2):
            self._on_board(msg)
        elif isinstance(msg, p.Undone):
            self._snapshot(msg.view, self._undo_seq or self._confirmed)
        elif isinstance(msg, Rejected) and not self._on_rejected(msg):
            return
        elif isinstance(msg, p.Error) and msg.code == p.ErrorCode.TAKEN_OVER:
            self.fatal = "the seat was taken over by another connection"
        self._observe(msg)
        answered = self._answer(msg)
        if answered == LATER:
            return
        if isinstance(msg, p.Error):
            if answered == "resumed" and self._resume_refused(msg):
                return
            if answered is None and not self._on_refused(msg):
                return
        self._events.append(msg)

    def _answer(self, msg: p.Message) -> str | None:
        """Give ``msg`` to the oldest request it answers: the answer that request awaited; None if none."""
        kind = getattr(msg, "type", None)
        for i, (rid, asked, answer) in enumerate(self._requests):
            if kind == answer or isinstance(msg, p.Error):
                del self._requests[i]
                if isinstance(msg, p.Error) and self._ask_later(rid, asked, msg):
                    return LATER
                self._give(rid, asked, msg)
                if isinstance(msg, p.Error) and answer in ("resumed", "watching"):
                    self.resuming = False  # the seat (or the watch) is still to be taken back
                return answer
        return None

    def _ask_later(self, request: int, asked: str, refused: p.Error) -> bool:
        """A request refused: True when it is to be asked again (``RETRIED``, refused ``unavailable``).

        A hint, or an undo with its seq, goes again after a pause. A v1 undo
        may have landed all the same: the seat is resumed after a pause, and
        its snapshot says (``_undo_landed``); until then later moves wait, as
        after a move so refused.
        """
        if refused.code != p.ErrorCode.UNAVAILABLE or asked not in RETRIED or self.token is None:
            return False
        self._asking[asked] = request
        if asked != "undo" or self._undo_seq is not None:
            self._again(asked, f"the {asked}")
        else:
            self._new_line()
            self.resuming = self._again(RESUME, "the undo")
        return True

    def _undo_landed(self, view: p.View | None, ev: int) -> None:
        """v1: a snapshot came while an undo refused ``unavailable`` waits: answer it if the store took it after all.

        It did if the board has fewer moves than when the undo was sent; the
        moves it took back are the last ones played here.
        """
        request, before = self._asking.get("undo"), self._undo_from
        if request is None or before is None or view is None or view.moves >= before:
            return
        del self._asking["undo"]
        played = [m.text for m in self.game.moves] if self.game is not None else []
        taken = before - view.moves
        undone = p.Undone(ev=ev, moves=played[-taken:] if taken <= len(played) else [], view=view)
        self._give(request, "undo", undone)
        self._events.append(undone)

    def _resume_refused(self, refused: p.Error) -> bool:
        """A resume refused: try it again later if that can help; True when the refusal is no news.

        ``unavailable``: the store did not answer, ask again after a pause. A
        rematch's new match ``not_found``: it may be a moment behind its
        announcement, so ask again a few times, then go back to the old
        match (its result), saying so.
        """
        if refused.code == p.ErrorCode.UNAVAILABLE:
            self._again(RESUME, "taking the seat back")
            return True
        old = self.rematched_from
        if refused.code != p.ErrorCode.NOT_FOUND or old is None or self.token is None:
            return False
        if self._tries.get(RESUME, 0) < REMATCH_TRIES:
            self._again(RESUME, "taking the seat in the rematch")
            return True
        new, self.rematched_from = self.match, None
        self._events.append(
            p.Error(
                code=p.ErrorCode.NOT_FOUND,
                message=f"the rematch {new} could not be found; back to the result of {old}",
            )
        )
        self.match = old
        self._new_match()
        self.last_ev = self._rematched_ev  # not the rematch again: it would send us back there
        self.resume()
        return True

    def _new_match(self) -> None:
        """A match (first seat, other seat, rematch) starts from nothing: no event, move or command."""
        self._void_undo("the seat is in another match now: the undo is not sent again")
        self.last_ev, self.next_seq, self.unacked = 0, 1, {}
        self.game, self._view, self._confirmed, self._trusted = None, None, 0, []
        self._unconfirmed, self._settled, self._held = {}, set(), []
        self._tries, self._due, self._leaving = {}, set(), None
        self._new_line()

    # ----------------------------------------------------------- the racer

    def _on_start(self, msg: p.Start) -> None:
        if msg.view is not None:
            self._snapshot(msg.view, self._confirmed)
        elif msg.boards is not None:  # spectators: every seat's board, in seat order
            for seat, view in enumerate(msg.boards):
                self._set_board(seat, view)

    def _on_resumed(self, msg: p.Resumed) -> None:
        seen = self.last_ev
        self.match, self.seat, self.watching = msg.match, msg.seat, False
        # The snapshot's ev, even below ours: the store may have lost events (a rolled-back Redis),
        # and a later resume asking after ours would skip the new events numbered up to it.
        self.last_ev = msg.ev
        self.resuming = False
        if msg.match == self.rematched_from or msg.match == self.match:
            self.rematched_from = None  # seated in the rematch (or back in the old match)
        acked = min(self.unacked, default=self._undo_seq or self.next_seq) - 1
        if msg.last_seq < acked:
            self._lost_moves(msg.last_seq, acked)
        else:
            self.next_seq = max(self.next_seq, msg.last_seq + 1)
        self._undo_landed(msg.view, msg.ev)
        self._snapshot(msg.view, msg.last_seq)
        self._observe(msg.lobby)
        self._answer(msg)
        self._events.append(msg)
        for missed in msg.missed:
            if getattr(missed, "ev", 0) <= seen:
                continue  # had live, on this connection, before the resume was answered
            self._events.append(missed)
            self._observe(missed)
            if isinstance(missed, p.Rematched):  # it happened while we were away
                self._on_rematched(missed)
        if not self.unacked:  # else the moves sent again may meet the same store: tries go on counting
            self._tries.pop(RESUME, None)
        if self.match == msg.match:  # else a rematch in ``missed`` moved us on: its resume flushes
            self._flush()

    def _flush(self) -> None:
        """The seat is held again: send the unacked moves by seq, then kept commands, then held ones."""
        for seq in sorted(self.unacked):
            if seq > self._sent_seq:
                self._sent_seq = seq
                self._out.append(p.MoveMsg(seq=seq, move=self.unacked[seq]))
        sent = {kind for kind, _ in self._awaiting}
        for kind, command in self._unconfirmed.items():
            if kind not in sent:
                self._awaiting.append((kind, True))
                self._out.append(command)
        for asked in list(self._asking):
            self._ask_again(asked)
        self._out += self._held
        self._held = []
        self.holding = True

    def _lost_moves(self, last_seq: int, acked: int) -> None:
        """The server lost moves it had acknowledged (its store was rolled back): go on from its board.

        The moves sent after them were chosen on a board that no longer is:
        they are voided, not resent, and numbering starts again after the
        server's last seq.
        """
        lost = ClientError(f"the server lost moves {last_seq + 1}..{acked}; play on from its board")
        self._outcomes += [(seq, lost) for seq in sorted(self.unacked)]
        self.unacked.clear()
        self.next_seq, self._sent_seq = last_seq + 1, last_seq
        self._void_undo(f"{lost}: the undo is not sent again")

    def _void_undo(self, why: str) -> None:
        """A numbered undo waiting to go again whose seq is not the seat's next any more: answered ``out_of_order``."""
        undo = self._asking.pop("undo", None) if self._undo_seq is not None else None
        if undo is not None:
            self._give(undo, "undo", p.Error(code=p.ErrorCode.OUT_OF_ORDER, message=why))
        self._undo_seq = None

    def _snapshot(self, view: p.View | None, seq: int) -> None:
        """The server's board as of ``seq``; the later unacked moves are played on it again, on trust.

        A later move the rules now refuse (the server lost moves, the board is
        not the one it was chosen on) is voided, with every move after it.
        """
        self._confirmed, self._trusted = seq, []
        if self.version == 1:
            self._view = view or self._view
            return
        self.game = None if view is None else ClientGame.from_view(view.model_dump())
        if self.game is None:
            return
        for later in sorted(s for s in self.unacked if s > seq):
            try:
                self._trusted.append((later, self.game.play(self.unacked[later])))
            except (IllegalMove, InvalidMove) as exc:
                self._void_from(later, ClientError(f"move {later} ({self.unacked[later]}) is void: {exc}"))
                break

    def _void_from(self, seq: int, why: ClientError) -> None:
        """Drop move ``seq`` and every later one (never applied); they are numbered again from ``seq``."""
        voided = sorted(s for s in self.unacked if s >= seq)
        for s in voided:
            del self.unacked[s]
            self._outcomes.append((s, why))
        self.next_seq = min(self.next_seq, seq)
        self._sent_seq = min(self._sent_seq, seq - 1)

    def _on_ack(self, msg: Ack) -> None:
        if msg.seq not in self.unacked:
            return  # an ack again (a resend of an applied seq) whose move was settled already
        for seq in [s for s in self.unacked if s < msg.seq]:
            del self.unacked[seq]  # acknowledged before, their acks lost with a line
        del self.unacked[msg.seq]
        self._tries.pop(RESUME, None)  # the store takes moves again
        if isinstance(msg, p.Ack):
            self._view, self._confirmed = msg.view, msg.seq
        elif msg.seq > self._confirmed:
            self._confirm(msg)
        self._outcomes.append((msg.seq, msg))

    def _confirm(self, ack: p.AckV2) -> None:
        """Take back the plays made on trust after this one, put in what it revealed, compare, play them again."""
        game, trusted = self.game, self._trusted
        if game is None or not trusted or trusted[0][0] != ack.seq:
            self._resync()  # an ack of a play not made here: nothing here can be trusted
            return
        later = [game.undo()[0] for _ in trusted[1:]]
        agrees = [m.text for m in trusted[0][1][1:]] == ack.auto
        try:
            game.reveal(ack.reveal)
        except RevealMismatch:
            agrees = False
        agrees = agrees and game.check() == ack.check
        self._confirmed = ack.seq
        del trusted[0]
        try:
            for i, move in enumerate(reversed(later)):
                trusted[i] = (trusted[i][0], game.play(move))
        except (IllegalMove, InvalidMove):  # no move offered may depend on a hidden card: diverged
            agrees = False
        if not agrees:
            self._resync()

    def _resync(self) -> None:
        """The game here differs from the server's: resume the seat (or watch again) for a snapshot."""
        self.divergences += 1
        if self.resuming or self.match is None:
            return  # a snapshot is on its way
        if self.watching:
            self.watch(self.match)
        elif self.token is not None:
            self.resume()

    def _on_rejected(self, msg: Rejected) -> bool:
        """Void the refused move and every later one; False for a refusal not worth telling.

        The refusal answers the oldest move on the wire. The moves sent behind it are
        refused too (out of order), each before any move sent from now on is answered:
        those refusals are about these voided moves, not about the next moves that
        reuse their seqs (voiding those would number a move with a seq already applied).
        """
        if self.resuming:
            return False  # the snapshot on its way says what was applied
        if self._stale and msg.seq == self._stale[0]:
            self._stale.pop(0)
            return False
        if msg.seq not in self.unacked:  # acknowledged (applied) or voided already
            return False
        if msg.code == p.ErrorCode.UNAVAILABLE:
            # Not known to be applied or not: after a pause, the snapshot of a resume says, and the
            # rest goes again. Until then later moves wait, and refusals of those on the wire are past.
            self._new_line()
            self.resuming = self._again(
                RESUME, f"move {msg.seq} ({self.unacked[msg.seq]}) and those after it"
            )
            return True
        voided = sorted(s for s in self.unacked if s >= msg.seq)
        self._stale = [s for s in voided if msg.seq < s <= self._sent_seq]
        refused = MoveRejected.of(msg)
        for seq in voided:
            del self.unacked[seq]
            self._outcomes.append((seq, refused))
        self.next_seq = min(self.next_seq, msg.seq)
        self._sent_seq = min(self._sent_seq, msg.seq - 1)
        if isinstance(msg, p.RejectedV2) and msg.last_seq is not None:  # v2: the seat as the server has it
            self.next_seq, self._sent_seq = msg.last_seq + 1, min(self._sent_seq, msg.last_seq)
            self._snapshot(msg.view, msg.last_seq)
        elif msg.view is not None:
            self._snapshot(msg.view, msg.seq - 1)
        return True

    def _on_rematched(self, msg: p.Rematched) -> None:
        if self.token is None:  # a spectator: the old match stays what it watches
            return
        self.rematched_from, self._rematched_ev = self.match, msg.ev
        self.match = msg.match
        self._new_match()
        self.resume()  # the same token holds the same seat in the new match

    # ------------------------------------------------------------ spectators

    def watch(self, match: str) -> int:
        """Watch ``match``: a snapshot, then every event; the request's id."""
        self.resuming = True  # boards before the snapshot are not this watch's
        return self.request(p.Watch(match=match))

    def _on_watching(self, msg: p.Watching) -> None:
        self.match, self.seat, self.token, self.watching = msg.match, None, None, True
        self.last_ev, self.resuming = msg.ev, False
        self.boards, self._board_views = {}, {}
        for snap in msg.boards:
            if snap.view is not None:
                self._set_board(snap.seat, snap.view)

    def _set_board(self, seat: int, view: p.View) -> None:
        if self.version == 1:
            self._board_views[seat] = view
        else:
            self.boards[seat] = ClientGame.from_view(view.model_dump())

    def _on_board(self, msg: p.Board | p.BoardV2) -> None:
        if isinstance(msg, p.Board):
            self._board_views[msg.seat] = msg.view
            return
        if self.resuming:
            return  # a new snapshot is on its way
        if msg.view is not None:  # an undo (practice): the board comes whole
            self._set_board(msg.seat, msg.view)
            return
        game = self.boards.get(msg.seat)
        try:
            if game is None:
                raise InvalidView(f"no board of seat {msg.seat} here")
            recorded = game.play(msg.move)
            game.reveal(msg.reveal)
        except (IllegalMove, InvalidMove, InvalidView, RevealMismatch):
            self._resync()
            return
        if [m.text for m in recorded[1:]] != msg.auto or game.check() != msg.check:
            self._resync()

    # ------------------------------------------------------- kept commands

    def _observe(self, msg: p.Message) -> None:
        """Settle the kept commands this event (or the ``resumed`` snapshot's lobby) shows to have taken effect."""
        if isinstance(msg, p.Lobby) and msg.match == self.match:
            mine = next((s for s in msg.seats if s.seat == self.seat), None)
            if msg.status != "lobby" or (mine is not None and mine.ready):
                self._settle("ready")
            if mine is not None and mine.rematch:
                self._settle("rematch")
            if msg.status == "finished":
                self._settle("finish", "resign")
        elif isinstance(msg, p.Finished) and msg.seat == self.seat:
            self._settle("finish", "resign")
        if self._leaving is not None and (
            isinstance(msg, p.Result)
            or (isinstance(msg, p.Finished) and msg.seat == self._leaving)
            or (isinstance(msg, p.Lobby) and all(s.seat != self._leaving for s in msg.seats))
        ):
            self._leaving = None
            self._settle("leave")

    def _settle(self, *kinds: str) -> None:
        self._settled.update(kinds)
        for kind in kinds:
            self._unconfirmed.pop(kind, None)
            self._tries.pop(kind, None)
        # a repeated ready or rematch is not answered; a repeated finish or resign is refused
        self._late += sum(again for kind, again in self._awaiting if kind in kinds and kind in REFUSED_AGAIN)
        self._awaiting = [(kind, again) for kind, again in self._awaiting if kind not in kinds]

    def _on_refused(self, msg: p.Error) -> bool:
        """An error no request waits for refuses the oldest kept command sent here; False to drop it.

        Kept commands are refused with ``wrong_phase``, or ``unavailable`` when the
        store did not answer: that one is sent again after a pause (``_again``). The
        refusal of a resend is dropped: the command was repeated because the line died
        under it (or the store did not answer it), and what it asked for either happened
        meanwhile or no longer can (the game ended, the race started).
        """
        if msg.code == p.ErrorCode.WRONG_PHASE and not self._awaiting and self._late:
            self._late -= 1
            return False
        if msg.code not in (p.ErrorCode.WRONG_PHASE, p.ErrorCode.UNAVAILABLE) or not self._awaiting:
            return True
        kind, again = self._awaiting.pop(0)
        if msg.code == p.ErrorCode.UNAVAILABLE:
            if kind in self._unconfirmed and not self._again(kind, f"{kind} was not taken"):
                self._unconfirmed.pop(kind, None)
            return False
        self._unconfirmed.pop(kind, None)
        return not again


__all__ = [
    "Answer",
    "ClientError",
    "MoveRejected",
    "NotARaceServer",
    "Outcome",
    "ServerError",
    "Session",
]
