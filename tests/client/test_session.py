"""The sans-I/O Session on its own: fed server messages made by a real ``Game``, read back what it sends.

No socket: each test plays the server's part with the engine (the ack of a
play is its ``revealed()`` and ``check()``, as ``server/match/render.py`` makes it).
"""

from __future__ import annotations

import random

import pytest

from client.session import (
    REMATCH_TRIES,
    RETRY_FIRST_S,
    RETRY_LONGEST_S,
    RETRY_TRIES,
    Answer,
    ClientError,
    MoveRejected,
    Session,
)
from server import protocol as p
from server.engine import Game, IllegalMove

MATCH = "ACDEFGHJ"
TOKEN = "seat-token-aaaaaaaaaaaaaaaaaaaa"


class Server:
    """One seat's game as the server has it, and the messages it would send about it."""

    def __init__(self, seed: str = "12345", version: p.Version = 2) -> None:
        self.game = Game(seed)
        self.ev = 9
        self.last_seq = 0
        self.version = version

    def view(self) -> p.View:
        return p.View.model_validate(self.game.player_view())

    def start(self) -> p.Start:
        return p.Start(ev=self.ev, started_at=1, ends_at=2, view=self.view())

    def ack(self, text: str) -> p.AckV2 | p.Ack:
        recorded = self.game.play(text)
        self.ev += 1
        self.last_seq += 1
        auto = [m.text for m in recorded[1:]]
        if self.version == 1:
            return p.Ack(seq=self.last_seq, ev=self.ev, move=recorded[0].text, auto=auto, view=self.view())
        return p.AckV2(
            seq=self.last_seq, ev=self.ev, reveal=self.game.revealed(), auto=auto, check=self.game.check()
        )

    def undo(self) -> p.Undone:
        """Take the last play back, as an undo (v2: numbered with the moves) the server applied."""
        undone = self.game.undo()
        self.ev += 1
        self.last_seq += self.version != 1
        return p.Undone(ev=self.ev, moves=[m.text for m in undone], view=self.view())

    def rejected(self, seq: int, code: p.ErrorCode = p.ErrorCode.ILLEGAL) -> p.RejectedV2:
        return p.RejectedV2(seq=seq, code=code, message="no", view=self.view(), last_seq=self.last_seq)

    def resumed(self) -> p.Resumed:
        lobby = p.Lobby(
            ev=self.ev,
            match=MATCH,
            variant="classic",
            solo=False,
            time_limit_s=600,
            status="playing",
            seats=[],
        )
        return p.Resumed(
            match=MATCH, seat=0, ev=self.ev, now=3, last_seq=self.last_seq, lobby=lobby, view=self.view(),
            opponents=[], missed=[],
        )  # fmt: skip


def seated(server: Server) -> Session:
    session = Session(version=server.version)
    session.receive_message(p.Seated(type="created", match=MATCH, seat=0, token=TOKEN))
    session.receive_message(server.start())
    session.data_to_send()
    return session


def moves_sent(session: Session) -> list[tuple[int, str]]:
    return [(m.seq, m.move) for m in session.data_to_send() if isinstance(m, p.MoveMsg)]


def test_moves_played_on_trust_are_confirmed_by_their_acks_in_turn() -> None:
    server = Server()
    session = seated(server)
    line = ["T", "T", "T"]
    for text in line:
        session.move(text)  # played here at once, on trust: the turned cards are still face down
    assert session.trusting and "??" in session.game.position_text()  # type: ignore[union-attr]
    assert moves_sent(session) == [(1, "T"), (2, "T"), (3, "T")]
    for text in line:
        session.receive_message(
            server.ack(text)
        )  # each confirmed with the later plays taken back and replayed
    assert not session.trusting and session.divergences == 0 and not session.unacked
    assert session.view == server.view()
    assert [seq for seq, outcome in session.outcomes_received() if isinstance(outcome, p.AckV2)] == [1, 2, 3]


def test_a_check_that_disagrees_resumes_the_seat_at_once() -> None:
    server = Server()
    session = seated(server)
    session.move("T")
    session.data_to_send()
    ack = server.ack("T")
    session.receive_message(ack.model_copy(update={"check": (ack.check + 1) % (1 << 32)}))
    assert session.divergences == 1 and session.resuming and not session.holding
    (resume,) = session.data_to_send()
    assert isinstance(resume, p.Resume) and resume.last_ev == ack.ev
    session.move("T")  # waits for the seat: nothing goes on a game that is not the server's
    assert session.data_to_send() == []
    session.receive_message(server.resumed())
    assert session.view is not None and session.view.moves == 2  # the snapshot, and the move made meanwhile
    assert moves_sent(session) == [(2, "T")]


def test_a_wrong_reveal_is_a_divergence() -> None:
    server = Server()
    session = seated(server)
    session.move("T")
    ack = server.ack("T")
    session.receive_message(ack.model_copy(update={"reveal": {"B4": ack.reveal["W"]}}))  # B4 was not refilled
    assert session.divergences == 1 and session.resuming


def test_a_rejected_move_rebuilds_the_game_from_the_server_s_and_voids_the_later_ones() -> None:
    server = Server()
    session = seated(server)
    session.receive_message(server.ack(_play(session, "T")))
    for text in ("T", "T"):
        session.move(text)
    assert moves_sent(session) == [(2, "T"), (3, "T")]
    session.receive_message(server.rejected(2))
    outcomes = session.outcomes_received()
    assert [(seq, type(o)) for seq, o in outcomes[1:]] == [(2, MoveRejected), (3, MoveRejected)]
    assert session.next_seq == 2 and not session.unacked and not session.trusting
    assert session.view == server.view()
    session.move("T")  # seq 2 again
    session.receive_message(server.rejected(3, p.ErrorCode.OUT_OF_ORDER))  # the old seq 3's, still on its way
    assert session.unacked == {2: "T"} and session.outcomes_received() == []  # stale: dropped


def _play(session: Session, text: str) -> str:
    session.move(text)
    session.data_to_send()
    return text


def test_out_of_order_with_an_older_last_seq_goes_on_from_the_server_s_seq() -> None:
    server = Server()
    session = seated(server)
    session.receive_message(server.ack(_play(session, "T")))
    session.receive_message(server.ack(_play(session, "T")))
    server.game.undo()  # the server lost its move 2 (a store rolled back)
    server.last_seq = 1
    session.move("T")
    session.receive_message(server.rejected(3, p.ErrorCode.OUT_OF_ORDER))
    assert session.next_seq == 2 and session.view == server.view()


def test_unavailable_resumes_and_sends_the_move_again() -> None:
    server = Server()
    session = seated(server)
    session.move("T")
    session.data_to_send()
    session.receive_message(server.rejected(1, p.ErrorCode.UNAVAILABLE))  # maybe applied, maybe not
    assert session.resuming and session.unacked == {1: "T"}
    assert session.data_to_send() == []  # not at once: the store is away, the wrapper waits a pause
    pause = session.retry_timer()
    assert pause is not None and 0 < pause <= RETRY_FIRST_S and session.retry_timer() is None
    session.retry()
    (resume,) = session.data_to_send()
    assert isinstance(resume, p.Resume)
    session.receive_message(server.resumed())  # it was not: sent again
    assert moves_sent(session) == [(1, "T")] and session.trusting


def test_a_resume_keeps_the_moves_the_server_has_and_plays_the_others_again() -> None:
    server = Server()
    session = seated(server)
    session.move("T")
    session.move("T")
    session.move("T")
    server.ack("T")  # the server applied move 1; its ack and the rest went down with the line
    session.disconnected()
    session.connected()
    assert [type(m) for m in session.data_to_send()] == [p.Hello, p.Resume]
    session.receive_message(server.resumed())
    assert moves_sent(session) == [(1, "T"), (2, "T"), (3, "T")]  # 1 for its ack again; 2, 3 to play
    assert (
        session.game is not None and session.game.move_count == 3
    )  # the snapshot (1), then 2 and 3 on trust
    session.receive_message(p.AckV2(seq=1, ev=10, check=0))  # move 1's ack again (a resend)
    assert session.divergences == 0  # its move is in the snapshot: nothing to confirm
    for text in ("T", "T"):
        session.receive_message(server.ack(text))
    assert session.view == server.view() and not session.unacked


def test_a_move_the_snapshot_refuses_is_voided() -> None:
    """The seat was played elsewhere meanwhile (taken over): a move chosen on this board may not fit that one."""
    server = Server("1")
    after_turn = Game("1")
    after_turn.play("T")
    # a move of this client's after its turn, which the server's other seq 1 (that same move) makes illegal
    move = next(
        m for m in after_turn.legal_texts() if ":0>" in m and m not in _after(Game("1"), m).legal_texts()
    )
    session = seated(server)
    session.move("T")
    session.move(move)
    server.ack(move)  # seq 1 on the server: the move, played from another connection of the seat
    session.disconnected()
    session.connected()
    session.data_to_send()
    session.receive_message(server.resumed())
    (outcome,) = session.outcomes_received()
    assert outcome[0] == 2 and isinstance(outcome[1], ClientError) and "is void" in str(outcome[1])
    assert session.unacked == {1: "T"} and session.next_seq == 2  # 1 goes again, for its (other) ack
    assert session.game is not None and session.game.position_text() == server.game.position_text()


def _after(game: Game, move: str) -> Game:
    game.play(move)
    return game


def test_a_move_the_rules_refuse_is_never_sent() -> None:
    session = seated(Server())
    with pytest.raises(IllegalMove):
        session.move("A1:0>A1")
    assert session.data_to_send() == [] and session.next_seq == 1


def test_a_spectator_rebuilds_the_boards_and_watches_again_when_they_disagree() -> None:
    servers = [Server("3"), Server("3")]
    spectator = Session()
    snapshot = p.Watching(
        match=MATCH, ev=9, now=1,
        lobby=p.Lobby(ev=9, match=MATCH, variant="classic", solo=False, time_limit_s=600, status="playing", seats=[]),
        boards=[p.SeatSnapshot(seat=n, progress=p.Progress(ev=9, seat=n, leftover=72, on_grid=24, complete=0, moves=0,
                finished=False), view=s.view(), moves=[]) for n, s in enumerate(servers)],
    )  # fmt: skip
    spectator.receive_message(snapshot)
    for seat, text in ((0, "T"), (1, "T"), (0, "T")):
        ack = servers[seat].ack(text)
        spectator.receive_message(
            p.BoardV2(ev=ack.ev, seat=seat, move=text, reveal=ack.reveal, auto=ack.auto, check=ack.check)
        )
    assert [spectator.board(n) for n in (0, 1)] == [s.view() for s in servers]
    assert spectator.divergences == 0
    spectator.receive_message(p.BoardV2(ev=20, seat=1, move="T", reveal={"W": "2C"}, check=1))
    assert spectator.divergences == 1
    assert [type(m) for m in spectator.data_to_send()] == [p.Watch]


def test_a_finish_written_into_a_dead_line_goes_again_after_the_resume() -> None:
    server = Server()
    session = seated(server)
    session.command(p.Finish())
    assert [type(m) for m in session.data_to_send()] == [p.Finish]
    session.disconnected()
    session.connected()
    session.data_to_send()
    session.receive_message(server.resumed())
    assert [type(m) for m in session.data_to_send()] == [p.Finish]


def unavailable() -> p.Error:
    return p.Error(code=p.ErrorCode.UNAVAILABLE, message="the store did not answer")


@pytest.mark.parametrize("command", [p.Finish(), p.Resign()])
def test_a_seat_command_the_store_did_not_take_goes_again_after_a_growing_jittered_pause(
    command: p.Finish | p.Resign,
) -> None:
    session = seated(Server())
    session.rng = random.Random(7)
    session.events_received()
    session.command(command)
    assert session.data_to_send() == [command]
    pauses = []
    for _ in range(3):
        session.receive_message(unavailable())
        assert session.events_received() == []  # not news while it is tried again
        pause = session.retry_timer()
        assert pause is not None
        pauses.append(pause)
        assert session.data_to_send() == []
        session.retry()
        assert session.data_to_send() == [command]
    bases = [RETRY_FIRST_S * 2**n for n in range(3)]
    assert all(base / 2 <= pause <= base for pause, base in zip(pauses, bases, strict=True))
    # it landed this time: the finished event settles it, and a late refusal of a repeat is no news
    session.receive_message(p.Finished(ev=10, seat=0, score=70, reason=command.type, at=5))
    session.receive_message(p.Error(code=p.ErrorCode.WRONG_PHASE, message="your game has ended"))
    assert [type(e) for e in session.events_received()] == [p.Finished]
    session.retry()
    assert session.data_to_send() == []


def test_a_seat_command_is_given_up_with_a_message_after_the_last_try() -> None:
    session = seated(Server())
    session.events_received()
    session.command(p.Finish())
    session.data_to_send()
    pauses = []
    for _ in range(RETRY_TRIES):
        session.receive_message(unavailable())
        pauses.append(session.retry_timer())
        session.retry()
        assert session.data_to_send() == [p.Finish()]
    assert max(p for p in pauses if p is not None) <= RETRY_LONGEST_S
    session.receive_message(unavailable())
    (gave_up,) = session.events_received()
    assert isinstance(gave_up, p.Error) and gave_up.code == p.ErrorCode.UNAVAILABLE
    assert "gave up" in gave_up.message and "finish" in gave_up.message
    assert session.retry_timer() is None
    session.disconnected()
    session.connected()
    session.data_to_send()
    session.receive_message(Server().resumed())
    assert not any(isinstance(m, p.Finish) for m in session.data_to_send())  # given up: not sent again


def test_a_resume_the_store_did_not_answer_is_asked_again_after_a_pause() -> None:
    server = Server()
    session = seated(server)
    session.move("T")
    session.data_to_send()
    session.receive_message(server.rejected(1, p.ErrorCode.UNAVAILABLE))
    session.retry_timer()
    session.retry()
    assert [type(m) for m in session.data_to_send()] == [p.Resume]
    session.events_received()
    session.receive_message(unavailable())  # the resume's answer: the store is still away
    assert session.events_received() == [] and session.retry_timer() is not None
    session.retry()
    assert [type(m) for m in session.data_to_send()] == [p.Resume]
    session.receive_message(server.resumed())
    assert moves_sent(session) == [(1, "T")]


def rematched(server: Server, session: Session) -> str:
    """Both asked for a rematch: the session moves to the new code and resumes it."""
    new = "KMNPQRTU"
    session.receive_message(p.Rematched(ev=20, match=new))
    (resume,) = session.data_to_send()
    assert isinstance(resume, p.Resume) and resume.match == new
    return new


def test_a_rematch_that_cannot_be_found_is_asked_for_again_then_left_for_the_old_result() -> None:
    server = Server()
    session = seated(server)
    new = rematched(server, session)
    session.events_received()
    not_found = p.Error(code=p.ErrorCode.NOT_FOUND, message="no such match")
    for _ in range(REMATCH_TRIES):
        session.receive_message(not_found)
        assert session.events_received() == [] and session.retry_timer() is not None
        session.retry()
        (resume,) = session.data_to_send()
        assert isinstance(resume, p.Resume) and resume.match == new
    session.receive_message(not_found)
    (told,) = session.events_received()
    assert isinstance(told, p.Error) and new in told.message and MATCH in told.message
    (resume,) = session.data_to_send()
    assert isinstance(resume, p.Resume) and (resume.match, resume.last_ev) == (MATCH, 20)
    session.receive_message(server.resumed())
    assert session.match == MATCH and session.holding


def test_a_rematch_found_on_a_later_try_seats_the_session_there() -> None:
    server = Server()
    session = seated(server)
    new = rematched(server, session)
    session.receive_message(p.Error(code=p.ErrorCode.NOT_FOUND, message="no such match"))
    session.retry_timer()
    session.retry()
    session.data_to_send()
    resumed = server.resumed().model_copy(update={"match": new, "ev": 3, "last_seq": 0})
    session.receive_message(resumed)
    assert session.match == new and session.holding
    session.receive_message(p.Error(code=p.ErrorCode.NOT_FOUND, message="late"))  # no fall back now
    assert session.match == new


def practising(server: Server) -> Session:
    """Seated alone, with one move played and acknowledged: there is a play to take back."""
    session = seated(server)
    session.move("T")
    session.data_to_send()
    session.receive_message(server.ack("T"))
    session.events_received()
    return session


def sent_types(session: Session) -> list[type]:
    return [type(m) for m in session.data_to_send()]


def refused_undo_resumed(server: Server, session: Session) -> int:
    """An undo the store did not answer, the pause, and the resume sent: the undo's request id."""
    asked = session.undo()
    assert sent_types(session) == [p.UndoRequest]
    session.receive_message(unavailable())
    assert session.events_received() == [] and session.answers_received() == []  # not news: retried
    with pytest.raises(ClientError, match="undo is on its way"):
        session.move("T")  # a move would change the count of moves that tells whether the undo landed
    assert session.retry_timer() is not None and session.data_to_send() == []
    session.retry()
    assert sent_types(session) == [p.Resume]
    return asked


def test_a_v1_undo_the_store_took_after_all_is_answered_from_the_snapshot_not_sent_again() -> None:
    """v1's undo has no seq: the resume's count of moves says whether it landed."""
    server = Server(version=1)
    session = practising(server)
    before = server.view()
    asked = refused_undo_resumed(server, session)
    server.undo()  # the write landed after all: a second undo would take back one more play
    session.receive_message(server.resumed())
    assert p.UndoRequest not in sent_types(session)
    undone = {a.request: a.message for a in session.answers_received()}[asked]
    assert (
        isinstance(undone, p.Undone) and undone.view == server.view() != before
    )  # (v1 has no game to name the moves)
    assert session.view == server.view() and not session.retrying
    assert [type(e) for e in session.events_received()] == [p.Undone, p.Resumed]
    session.move("T")  # moves go on, numbered after the server's last
    assert moves_sent(session) == [(2, "T")]


def test_a_v1_undo_the_store_did_not_take_is_sent_once_more_after_the_resume() -> None:
    server = Server(version=1)
    session = practising(server)
    asked = refused_undo_resumed(server, session)
    session.receive_message(server.resumed())  # the board still has the play: it did not land
    assert session.data_to_send() == [p.UndoRequest()]
    session.answers_received()
    session.receive_message(server.undo())
    (answer,) = session.answers_received()
    assert answer.request == asked and isinstance(answer.message, p.Undone)
    assert session.view == server.view() and not session.retrying


def test_a_numbered_undo_the_store_did_not_answer_is_sent_again_with_its_seq() -> None:
    """v2: the undo takes the next seq, so it goes again after the pause, like a hint, with no resume."""
    server = Server()
    session = practising(server)
    asked = session.undo()
    assert session.data_to_send() == [p.UndoRequest(seq=2)]
    session.receive_message(unavailable())
    assert session.events_received() == [] and session.answers_received() == []  # not news: retried
    with pytest.raises(ClientError, match="undo is on its way"):
        session.move("T")
    assert session.retry_timer() is not None and session.data_to_send() == []
    session.retry()
    assert session.data_to_send() == [p.UndoRequest(seq=2)]
    session.receive_message(server.undo())  # the first landed, or this one: the server applies seq 2 once
    (answer,) = session.answers_received()
    assert answer.request == asked and isinstance(answer.message, p.Undone) and not session.retrying
    assert session.view == server.view()
    session.move("T")
    assert moves_sent(session) == [(3, "T")]


@pytest.mark.parametrize("landed", [True, False])
def test_a_numbered_undo_on_a_line_that_dropped_goes_again_after_the_resume(landed: bool) -> None:
    """Its answer lost with the line, or the undo itself: either way it goes again, with its seq, and is answered."""
    server = Server()
    session = practising(server)
    asked = session.undo()
    assert session.data_to_send() == [p.UndoRequest(seq=2)]
    assert asked not in session.disconnected()  # still waits: it goes again
    session.connected()
    assert sent_types(session) == [p.Hello, p.Resume]
    undone = server.undo() if landed else None
    session.receive_message(server.resumed())
    assert session.data_to_send() == [p.UndoRequest(seq=2)]
    assert asked not in [a.request for a in session.answers_received()]  # only the resume is answered
    session.receive_message(undone or server.undo())  # applied once: a resend is answered as first
    (answer,) = session.answers_received()
    assert answer.request == asked and isinstance(answer.message, p.Undone)
    assert answer.message == undone or not landed
    assert session.view == server.view() and session.game is not None
    session.move("T")
    assert moves_sent(session) == [(3, "T")]


def test_an_undo_waits_for_the_moves_on_their_way() -> None:
    session = practising(Server())
    session.move("T")
    with pytest.raises(ClientError, match="still on their way"):
        session.undo()


def test_a_hint_the_server_could_not_give_is_asked_again_under_its_id() -> None:
    session = practising(Server())
    asked = session.request(p.HintRequest())
    assert sent_types(session) == [p.HintRequest]
    session.receive_message(unavailable())
    assert session.answers_received() == [] and session.events_received() == [] and session.retrying
    assert session.retry_timer() is not None
    session.retry()
    assert sent_types(session) == [p.HintRequest]
    session.receive_message(p.Hint(move="T"))
    assert session.answers_received() == [Answer(asked, p.Hint(move="T"))] and not session.retrying


def test_a_hint_given_up_is_answered_with_the_refusal() -> None:
    session = practising(Server())
    asked = session.request(p.HintRequest())
    session.data_to_send()
    for _ in range(RETRY_TRIES):
        session.receive_message(unavailable())
        session.retry()
        assert sent_types(session) == [p.HintRequest]
    session.receive_message(unavailable())
    (answer,) = session.answers_received()
    assert (
        answer.request == asked
        and isinstance(answer.message, p.Error)
        and "gave up" in answer.message.message
    )
    assert not session.retrying


def test_a_leave_the_store_did_not_take_goes_again_until_the_seat_is_seen_gone() -> None:
    session = Session()
    session.receive_message(p.Seated(type="joined", match=MATCH, seat=1, token=TOKEN))
    session.events_received()
    session.leave()
    assert sent_types(session) == [p.Leave]
    session.receive_message(unavailable())
    assert session.events_received() == [] and session.retry_timer() is not None
    session.retry()
    assert sent_types(session) == [p.Leave]
    seat = p.SeatInfo(seat=0, name="Ann", ready=False, connected=True)
    lobby = p.Lobby(
        ev=3, match=MATCH, variant="classic", solo=False, time_limit_s=600, status="lobby", seats=[seat]
    )
    session.receive_message(lobby)  # seat 1 gone: left
    assert not session.retrying
    session.retry()
    assert session.data_to_send() == []
