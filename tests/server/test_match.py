"""The match state machine, sans-I/O: commands in, events out, messages rendered."""

from __future__ import annotations

import typing

import pytest
from matchsim import CODE, SPECTATOR, T0, TOKENS, Sim, greedy_moves, rebuilt, snapshot

import server.match.state
from server import protocol as p
from server.engine import VARIANTS, Game
from server.errors import Refused
from server.match import Audience, Duplicate, Match
from server.match.events import (
    CountdownStarted,
    Decided,
    Ended,
    Moved,
    Readied,
    RematchAsked,
    RematchOpened,
    SeatTaken,
    Started,
)
from server.match.render import SPECTATORS_V1, ack_again, lobby, progress, resumed, watching
from server.match.state import COUNTDOWN_MS, race_winner


def code_of(exc: pytest.ExceptionInfo[Refused]) -> p.ErrorCode:
    return exc.value.code


def test_variant_names_match_engine() -> None:
    assert set(typing.get_args(p.VariantName)) == set(VARIANTS)


def test_lobby_join_and_full() -> None:
    sim = Sim()
    assert sim.match.status == "lobby" and sim.match.ev == 2
    sim.seat_two()
    lobby = sim.to(0)[-1]
    assert isinstance(lobby, p.Lobby)
    assert [(s.seat, s.name, s.ready) for s in lobby.seats] == [(0, "Ann", False), (1, "Bob", False)]
    with pytest.raises(Refused) as exc:
        sim.match.decide_join("Cy", "third-token-cccccccccccc", None, sim.now)
    assert code_of(exc) == p.ErrorCode.FULL
    assert sim.match.seat_of_token(TOKENS[1]) == 1
    with pytest.raises(Refused) as exc:
        sim.match.seat_of_token("made-up-token-dddddddddddd")
    assert code_of(exc) == p.ErrorCode.BAD_TOKEN


def test_a_lobby_everyone_left_takes_nobody_in() -> None:
    sim = Sim()
    sim.do("decide_leave", 0)  # the creator: nobody invites any more
    with pytest.raises(Refused) as exc:
        sim.match.decide_join("Bob", TOKENS[1], None, sim.now)
    assert code_of(exc) == p.ErrorCode.NOT_FOUND
    sim = Sim()
    sim.seat_two()
    sim.do("decide_leave", 0)  # the joiner is still there: the seat is free for another
    assert [type(e) for e in sim.match.decide_join("Cy", "third-token-cccccccccccc", None, sim.now)] == [
        SeatTaken
    ]


def test_ready_countdown_start_at_tick() -> None:
    sim = Sim()
    sim.seat_two()
    assert [type(e) for e in sim.do("decide_ready", 0)] == [Readied]
    assert sim.do("decide_ready", 0) == []  # ready twice: nothing new
    sim.now += 5
    events = sim.do("decide_ready", 1)
    assert [type(e) for e in events] == [Readied, CountdownStarted]
    assert sim.match.starts_at == sim.now + COUNTDOWN_MS
    assert isinstance(sim.to(1)[-1], p.Countdown)
    sim.now = sim.match.starts_at - 1
    assert sim.match.tick(sim.now) == []
    assert sim.match.next_deadline() == sim.match.starts_at
    sim.now = sim.match.starts_at + 7  # a late timer: the start is still at the announced time
    (started,) = sim.do("tick")
    assert isinstance(started, Started) and started.at == sim.match.starts_at
    assert sim.match.ends_at == started.at + 600_000
    for seat in (0, 1):
        start = sim.to(seat)[-1]
        assert isinstance(start, p.Start) and start.view is not None and start.boards is None
        assert start.view.stock is None and start.view.leftover == 72
    spectator = sim.to(SPECTATOR)[-1]
    assert isinstance(spectator, p.Start) and spectator.view is None
    assert spectator.boards is not None and len(spectator.boards) == 2
    with pytest.raises(Refused) as exc:
        sim.match.decide_ready(0, sim.now)
    assert code_of(exc) == p.ErrorCode.WRONG_PHASE
    with pytest.raises(Refused) as exc:
        sim.match.decide_join("Cy", "third-token-cccccccccccc", None, sim.now)
    assert code_of(exc) == p.ErrorCode.WRONG_PHASE


def test_move_renders_ack_progress_board() -> None:
    sim = Sim()
    sim.start()
    sim.move(1, 1, "T")  # Ann's turn then draws nothing beyond Bob's: spectators see it at once
    mark = len(sim.out)
    (moved,) = sim.move(0, 1, "T")  # type: ignore[misc]
    assert isinstance(moved, Moved)
    rendered = {a: m for a, m, _ in sim.out[mark:]}
    ack = rendered[Audience.mover(0, 1)]
    assert isinstance(ack, p.Ack) and (ack.seq, ack.ev, ack.move) == (1, moved.ev, "T")
    assert ack.view.stock_count == 69 and ack.view.moves == 1
    prog = rendered[Audience.all_but(0)]
    assert isinstance(prog, p.Progress) and (prog.seat, prog.ev, prog.moves, prog.leftover) == (
        0,
        moved.ev,
        1,
        72,
    )
    board = next(m for a, m, _ in sim.out[mark:] if a == SPECTATORS_V1)
    assert isinstance(board, p.Board) and board.view == ack.view and board.progress == prog
    # The opponent gets the numbers only.
    assert sim.to(1)[-1] == prog


def test_practice_starts_at_once() -> None:
    """Nobody to race: no countdown to wait through (the page shows none for practice either)."""
    sim = Sim(seats=1)
    events = sim.do("decide_ready", 0)
    assert [type(e) for e in events] == [Readied, CountdownStarted]
    assert sim.match.starts_at == sim.now and sim.match.next_deadline() == sim.now
    (started,) = sim.do("tick")
    assert isinstance(started, Started) and started.at == sim.now


@pytest.mark.parametrize("version", [1, 2])
def test_duplicate_seq_gets_the_same_ack(version: p.Version) -> None:
    sim = Sim(version=version)
    sim.start()
    acks = {}
    for seq in range(1, 13):  # turns, and plays that refill from the stock and the waste
        game = sim.match.seat(0).game
        assert game is not None
        sim.move(0, seq, greedy_moves(game) or "T")
        acks[seq] = sim.to(0)[-1]
    before = snapshot(sim.match)
    for seq in acks:
        again = sim.match.decide_move(0, seq, sim.match.seat(0).seq_moves[seq - 1], sim.now)
        assert again == Duplicate(0, seq)
        assert p.as_message(ack_again(sim.match, 0, seq, version), version) == acks[seq], f"seq {seq}"
    assert snapshot(sim.match) == before
    assert any(isinstance(a, p.AckV2) and a.reveal for a in acks.values()) or version == 1


def test_out_of_order_and_illegal_change_nothing() -> None:
    sim = Sim()
    sim.start()
    sim.move(0, 1, "T")
    before = snapshot(sim.match)
    with pytest.raises(Refused) as exc:
        sim.match.decide_move(0, 3, "T", sim.now)
    assert code_of(exc) == p.ErrorCode.OUT_OF_ORDER
    for bad in ("W>A1:9", "Z9>A1", "A1~A2", "C8:5>A1"):
        with pytest.raises(Refused) as exc:
            sim.match.decide_move(0, 2, bad, sim.now)
        assert code_of(exc) == p.ErrorCode.ILLEGAL, bad
    assert snapshot(sim.match) == before


def test_a_game_s_plays_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Piles may cycle without end; work that grows with the plays must not (``MAX_PLAYS``)."""
    monkeypatch.setattr(server.match.state, "MAX_PLAYS", 3)
    sim = Sim()
    sim.start()
    for seq in (1, 2, 3):
        sim.move(0, seq, "T")
    before = snapshot(sim.match)
    with pytest.raises(Refused) as exc:
        sim.match.decide_move(0, 4, "T", sim.now)
    assert code_of(exc) == p.ErrorCode.NOT_ALLOWED and "at most 3 moves" in exc.value.message
    assert snapshot(sim.match) == before
    assert isinstance(sim.match.decide_move(0, 3, "T", sim.now), Duplicate)  # a resend still acks
    sim.move(1, 1, "T")  # the other racer plays on


def test_move_before_start_and_after_end_is_wrong_phase() -> None:
    sim = Sim()
    sim.seat_two()
    with pytest.raises(Refused) as exc:
        sim.match.decide_move(0, 1, "T", sim.now)
    assert code_of(exc) == p.ErrorCode.WRONG_PHASE
    sim.do("decide_ready", 0)
    sim.do("decide_ready", 1)
    with pytest.raises(Refused) as exc:  # countdown
        sim.match.decide_move(0, 1, "T", sim.now)
    assert code_of(exc) == p.ErrorCode.WRONG_PHASE
    sim.now = sim.match.starts_at
    sim.do("tick")
    sim.do("decide_finish", 0)
    with pytest.raises(Refused) as exc:
        sim.match.decide_move(0, 1, "T", sim.now)
    assert code_of(exc) == p.ErrorCode.WRONG_PHASE
    sim.do("decide_finish", 1)
    assert sim.match.status == "finished"
    with pytest.raises(Refused) as exc:
        sim.match.decide_move(1, 1, "T", sim.now)
    assert code_of(exc) == p.ErrorCode.WRONG_PHASE


def play_out(sim: Sim, seat: int, limit: int = 400) -> int:
    """Greedy moves until this seat's game ends; returns the next seq."""
    seq = sim.match.seat(seat).last_seq + 1
    for _ in range(limit):
        if sim.match.seat(seat).ended is not None:
            return seq
        game = sim.match.seat(seat).game
        assert game is not None
        text = greedy_moves(game)
        assert text is not None
        sim.move(seat, seq, text)
        seq += 1
    raise AssertionError("game did not end")


def test_game_over_ends_the_seat_and_result_follows() -> None:
    sim = Sim()
    sim.start()
    play_out(sim, 0)
    ended = sim.match.seat(0).ended
    assert ended is not None and ended.reason == "over"
    assert isinstance(sim.to(1)[-1], p.Finished)
    sim.now += 1000
    play_out(sim, 1)
    assert sim.match.status == "finished" and sim.match.result is not None
    result = sim.to(0)[-1]
    assert isinstance(result, p.Result) and result == sim.to(1)[-1] == sim.to(SPECTATOR)[-1]
    assert result.seed == "12345" and [s.seat for s in result.seats] == [0, 1]
    # Both played the same greedy line on the same deal: same score, seat 0 ended first.
    assert result.seats[0].score == result.seats[1].score
    assert result.winner == 0 and not result.draw
    for seat in (0, 1):  # the move that ended the game is in the result, and scored
        final = sim.match.seat(seat).final  # a decided match keeps each board's last view, no Game
        assert final is not None and sim.match.seat(seat).game is None
        assert result.seats[seat].moves == list(final.moves) == sim.match.moves(seat)
        assert (result.seats[seat].score, result.seats[seat].on_grid) == (
            final.numbers.leftover,
            final.numbers.on_grid,
        )
        view = sim.match.view(seat)
        assert view is not None and view.leftover == result.seats[seat].score
    replayed = Game.replay("12345", "classic", result.seats[0].moves)
    assert replayed.leftover == result.seats[0].score


def test_a_decided_match_shows_the_boards_it_ended_with() -> None:
    sim = Sim()
    sim.start()
    play_out(sim, 0)
    game = sim.match.seat(1).game
    assert game is not None
    for seq in range(1, 20):
        sim.move(1, seq, greedy_moves(game) or "T")

    def boards() -> list[tuple[object, ...]]:
        m = sim.match
        return [
            (m.view(n), m.moves(n), progress(m, n, ev=0).model_dump(exclude={"finished"})) for n in (0, 1)
        ]

    before = boards()
    sim.do("decide_finish", 1)
    assert sim.match.status == "finished"
    assert all(s is not None and s.game is None for s in sim.match.seats)  # the Games are let go
    assert boards() == before
    shown = watching(sim.match, 0)
    assert [(b.view, b.moves) for b in shown.boards] == [(v, m) for v, m, _ in before]
    assert resumed(sim.match, 1, [], 0).view == before[1][0]


def test_finish_lower_score_wins() -> None:
    sim = Sim()
    sim.start()
    game = sim.match.seat(1).game
    assert game is not None
    seq = 1
    while game.leftover == 72:  # seat 1 gets at least one card down
        sim.move(1, seq, greedy_moves(game) or "T")
        seq += 1
    sim.do("decide_finish", 0)
    sim.now += 10
    events = sim.do("decide_finish", 1)
    assert [type(e) for e in events] == [Ended, Decided]
    result = sim.match.result
    assert result is not None and result.winner == 1 and result.seats[1].score < 72


def test_resign_loses_whatever_the_scores() -> None:
    sim = Sim()
    sim.start()
    game = sim.match.seat(0).game
    assert game is not None
    seq = 1
    while game.leftover == 72:
        sim.move(0, seq, greedy_moves(game) or "T")
        seq += 1
    sim.do("decide_finish", 1)  # seat 1 finishes with 72 left
    sim.now += 10
    sim.apply(sim.match.decide_finish(0, sim.now, "resign"))  # seat 0 is ahead but resigns
    result = sim.match.result
    assert result is not None and result.winner == 1 and not result.draw
    assert result.seats[0].reason == "resign" and result.seats[0].score < result.seats[1].score


def test_timeout_ends_everyone_open_at_the_limit_same_ms_is_a_draw() -> None:
    sim = Sim(time_limit_s=30)
    sim.start()
    sim.move(0, 1, "T")
    sim.now = sim.match.ends_at + 250
    events = sim.do("tick")
    assert [type(e) for e in events] == [Ended, Ended, Decided]
    assert all(
        isinstance(e, Ended) and e.reason == "timeout" and e.at == sim.match.ends_at for e in events[:2]
    )
    result = sim.match.result
    assert result is not None and result.draw and result.winner is None
    assert [s.moves for s in result.seats] == [["T"], []]


def test_abandon_after_grace() -> None:
    sim = Sim(grace_ms=1000)
    sim.start()
    sim.do("decide_connect", 0, "c0")
    sim.do("decide_connect", 1, "c1")
    sim.do("decide_disconnect", 1, "c1")
    assert sim.match.next_deadline() == sim.now + 1000
    sim.now += 999
    assert sim.match.tick(sim.now) == []
    sim.now += 1
    (ended,) = sim.do("tick")
    assert isinstance(ended, Ended) and ended.reason == "abandoned" and ended.seat == 1
    # A disconnect of an older, taken-over connection is nothing.
    assert sim.match.decide_disconnect(0, "c-old", sim.now) == []


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ((10, 100, "over"), (11, 50, "over"), (0, False)),  # lower score wins
        ((10, 100, "finish"), (10, 50, "over"), (1, False)),  # equal: earlier finish
        ((10, 100, "finish"), (10, 100, "timeout"), (None, True)),  # same ms: draw
        ((0, 100, "resign"), (50, 200, "finish"), (1, False)),  # resign loses
        ((40, 100, "abandoned"), (30, 200, "resign"), (0, False)),
        ((5, 100, "resign"), (9, 50, "resign"), (0, False)),  # both resigned: by score
    ],
)
def test_race_winner(a: tuple[int, int, str], b: tuple[int, int, str], want: tuple[int | None, bool]) -> None:
    ea = Ended(ev=10, at=a[1], seat=0, reason=a[2], score=a[0])  # type: ignore[arg-type]
    eb = Ended(ev=11, at=b[1], seat=1, reason=b[2], score=b[0])  # type: ignore[arg-type]
    assert race_winner([ea, eb]) == want
    assert race_winner([eb, ea]) == want


def test_rematch_from_both_opens_a_new_match_with_the_same_tokens() -> None:
    sim = Sim()
    with pytest.raises(Refused):
        sim.match.decide_rematch(0, "CCCCCCCC", sim.now)
    sim.start()
    sim.do("decide_finish", 0)
    sim.do("decide_finish", 1)
    with pytest.raises(Refused) as exc:
        sim.match.decide_move(0, 1, "T", sim.now)
    assert code_of(exc) == p.ErrorCode.WRONG_PHASE
    assert [type(e) for e in sim.do("decide_rematch", 0, "CCCCCCCC")] == [RematchAsked]
    assert sim.do("decide_rematch", 0, "CCCCCCCC") == []
    events = sim.do("decide_rematch", 1, "DDDDDDDD")
    assert [type(e) for e in events] == [RematchAsked, RematchOpened]
    assert sim.match.rematch_match == "DDDDDDDD"
    assert isinstance(sim.to(0)[-1], p.Rematched)
    new = Match.from_events(sim.match.rematch_log("DDDDDDDD", "other-seed", sim.now))
    assert new.status == "lobby" and new.seed == "other-seed"
    assert [new.seat_of_token(t) for t in TOKENS] == [0, 1]
    assert [s.name for s in new.seats if s] == ["Ann", "Bob"]


def test_leave_during_countdown_resigns_without_crashing() -> None:
    sim = Sim()
    sim.seat_two()
    sim.do("decide_ready", 0)
    sim.do("decide_ready", 1)
    events = sim.do("decide_leave", 0)
    assert [type(e) for e in events] == [Ended]
    assert events[0].reason == "resign" and events[0].score == 72  # type: ignore[union-attr]
    sim.now = sim.match.starts_at
    sim.do("tick")
    sim.do("decide_finish", 1)
    assert sim.match.result is not None and sim.match.result.winner == 1


def test_leave_in_lobby_frees_the_seat() -> None:
    sim = Sim()
    sim.seat_two()
    sim.do("decide_leave", 1)
    assert sim.match.seats[1] is None
    sim.do("decide_join", "Cy", "third-token-cccccccccccc", None)
    assert sim.match.seat_of_token("third-token-cccccccccccc") == 1


def test_solo_practice_undo() -> None:
    sim = Sim(seats=1)
    sim.start()
    sim.move(0, 1, "T")
    assert sim.match.seat(0).game.leftover == 72  # type: ignore[union-attr]
    sim.do("decide_undo", 0)
    assert sim.match.seat(0).game.moves == []  # type: ignore[union-attr]
    sim.do("decide_finish", 0)
    assert sim.match.result is not None and sim.match.result.winner is None


def test_racers_never_see_the_opponents_board_or_a_stock() -> None:
    sim = Sim()
    sim.start()
    seqs = [1, 1]
    for turn in range(30):
        seat = turn % 2
        game = sim.match.seat(seat).game
        assert game is not None
        sim.move(seat, seqs[seat], greedy_moves(game) or "T")
        seqs[seat] += 1
    sim.do("decide_finish", 0)
    sim.do("decide_finish", 1)
    for seat in (0, 1):
        for audience, message, event in sim.out:
            if not audience.has_seat(seat):
                continue
            assert not isinstance(message, p.Board)
            if isinstance(message, p.Start):
                assert message.boards is None
            if isinstance(message, p.Ack):
                assert isinstance(event, Moved) and event.seat == seat
            assert b'"stock":[' not in p.encode(message)


def test_fold_is_deterministic_and_matches_live() -> None:
    sim = Sim()
    sim.start()
    for seq in range(1, 6):
        sim.move(0, seq, "T")
    sim.do("decide_finish", 0)
    again = rebuilt(sim.log)
    assert snapshot(again) == snapshot(sim.match)
    assert lobby(again) == lobby(sim.match) and again.view(0) == sim.match.view(0)
    assert sim.log[0].at == T0 and again.id == CODE


def test_a_move_is_played_once_from_decision_to_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    sim = Sim()
    sim.start()
    plays, undos = [0], [0]
    real_play, real_undo = Game.play, Game.undo

    def play(game: Game, move: typing.Any) -> typing.Any:
        plays[0] += 1
        return real_play(game, move)

    def undo(game: Game) -> typing.Any:
        undos[0] += 1
        return real_undo(game)

    monkeypatch.setattr(Game, "play", play)
    monkeypatch.setattr(Game, "undo", undo)
    sim.move(0, 1, "T")
    assert (plays[0], undos[0]) == (1, 0)  # decided, folded and rendered: one play, no undo
    assert sim.match.moves(0) == ["T"] and sim.match.seat(0).plays[-1].move == "T"


def test_a_decided_move_not_yet_applied_is_seen_by_nobody() -> None:
    sim = Sim()
    sim.start()
    before = sim.match.view(0)
    spectators_before = watching(sim.match, T0)
    decision = sim.match.decide_move(0, 1, "T", sim.now)  # the append is awaited now
    assert sim.match.view(0) == before and sim.match.moves(0) == []
    assert watching(sim.match, T0) == spectators_before
    assert sim.match.game(1).drawn == sim.match.game(0).drawn  # the other racer's lag reads it too
    assert not isinstance(decision, Duplicate)
    sim.apply(decision)  # taken back by those reads, so played again when its event comes
    assert sim.match.moves(0) == ["T"] and snapshot(sim.match) == snapshot(rebuilt(sim.log))


def test_a_decided_move_that_is_never_applied_leaves_no_trace() -> None:
    sim = Sim()
    sim.start()
    sim.match.decide_move(0, 1, "T", sim.now)  # its append fails: no event
    sim.match.decide_move(0, 1, "T", sim.now)  # the hub decides again (a conflict's retry)
    sim.move(1, 1, "T")  # meanwhile the other racer's move
    assert sim.match.moves(0) == [] and sim.match.game(0).drawn == 0
    assert snapshot(sim.match) == snapshot(rebuilt(sim.log))
