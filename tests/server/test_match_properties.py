"""Property tests of the match state machine over random command sequences."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from matchsim import Sim, greedy_moves, rebuilt, receives, snapshot

from server import protocol as p
from server.errors import Refused
from server.match import Duplicate, Event, Match
from server.match.events import Moved
from server.match.render import progress

Command = tuple[str, int, int]  # (kind, seat, argument)

commands = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "join", "ready", "ready", "ready", "move", "move", "move", "move", "move", "dup",
                "gap", "junk", "finish", "resign", "leave", "connect", "disconnect", "tick",
                "tick", "rematch", "undo",
            ]
        ),
        st.integers(0, 1),
        st.integers(0, 700_000),
    ),
    max_size=60,
)  # fmt: skip


def decide(sim: Sim, cmd: Command) -> list[Event] | Duplicate:
    kind, seat, arg = cmd
    m, now = sim.match, sim.now
    if kind == "join":
        return m.decide_join(f"P{arg % 10}", f"token-{arg:020d}", None, now)
    if seat >= m.capacity or m.seats[seat] is None:
        raise Refused(p.ErrorCode.NOT_FOUND, "no such seat")
    s = m.seat(seat)
    if kind == "ready":
        return m.decide_ready(seat, now)
    if kind in ("move", "dup", "gap", "junk"):
        seq = {"move": s.last_seq + 1, "dup": max(1, s.last_seq), "gap": s.last_seq + 2}.get(
            kind, s.last_seq + 1
        )
        text = "Q9>Z1" if kind == "junk" else ((greedy_moves(s.game) if s.game else None) or "T")
        return m.decide_move(seat, seq, text, now)
    if kind == "finish":
        return m.decide_finish(seat, now)
    if kind == "resign":
        return m.decide_finish(seat, now, "resign")
    if kind == "leave":
        return m.decide_leave(seat, now)
    if kind == "connect":
        return m.decide_connect(seat, f"c{arg % 3}", now)
    if kind == "disconnect":
        return m.decide_disconnect(seat, f"c{arg % 3}", now)
    if kind == "tick":
        sim.now += arg % 5 * 1000 if arg % 2 else arg
        return m.tick(sim.now)
    if kind == "rematch":
        return m.decide_rematch(seat, "RRRRRRRR", now)
    if kind == "undo":  # v1's without a seq; v2's numbered next, or a resend of the last seq
        return m.decide_undo(seat, now, (None, s.last_seq + 1, max(1, s.last_seq))[arg % 3])
    raise AssertionError(kind)


def check_privacy(sim: Sim, start: int) -> None:
    """No racer ever gets the opponent's board, another seat's ack, or a stock order."""
    for audience, message, cause in sim.out[start:]:
        text = p.encode(message)
        assert b'"stock":[' not in text
        for seat in (0, 1):
            if not receives(audience, seat):
                continue
            assert not isinstance(message, p.Board)
            if isinstance(message, p.Start):
                assert message.boards is None
            if isinstance(message, p.Ack):
                assert isinstance(cause, Moved) and cause.seat == seat


def run(cmds: list[Command], seats: int, started: bool) -> Sim:
    sim = Sim(seats=seats)
    if started:
        sim.start()
    for cmd in cmds:
        before = snapshot(sim.match)
        ev = sim.match.ev
        try:
            decision = decide(sim, cmd)
        except Refused as exc:
            assert isinstance(exc.code, p.ErrorCode)
            decision = []
        assert snapshot(sim.match) == before, f"decide mutated the match on {cmd}"
        if isinstance(decision, Duplicate):
            assert decision.seq <= sim.match.seat(cmd[1]).last_seq
            continue
        assert [e.ev for e in decision] == list(range(ev + 1, ev + 1 + len(decision)))
        mark = len(sim.out)
        sim.apply(decision)
        assert sim.match.ev == ev + len(decision)
        check_privacy(sim, mark)
    return sim


def same(a: Match, b: Match) -> dict[str, Any]:
    assert snapshot(a) == snapshot(b)
    return snapshot(a)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commands, st.sampled_from([2, 2, 2, 1]), st.booleans())
def test_random_commands_keep_the_invariants(cmds: list[Command], seats: int, started: bool) -> None:
    sim = run(cmds, seats, started)
    event(f"status {sim.match.status}, moves {sum(len(s.seq_moves) for s in sim.match.seats if s) > 0}")
    # The log is gap-free, and folding it again (through JSON) gives the live state.
    assert [e.ev for e in sim.log] == list(range(1, len(sim.log) + 1))
    same(rebuilt(sim.log), sim.match)
    same(rebuilt(sim.log), rebuilt(sim.log))
    # Every prefix of the log folds to a valid state too (a resume can start anywhere).
    cut = len(sim.log) // 2 or 1
    partial = rebuilt(sim.log[:cut])
    for e in sim.log[cut:]:
        partial.apply(e)
    same(partial, sim.match)
    if sim.match.result is not None:
        assert sim.match.status == "finished"
        assert all(s is None or s.ended is not None for s in sim.match.seats)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=80))
def test_racing_moves_then_result(order: list[int]) -> None:
    """Two racers move in any interleaving; both finish; the result holds both move lists."""
    sim = Sim()
    sim.start()
    for seat in order:
        s = sim.match.seat(seat)
        if s.ended is None and s.game is not None:
            sim.move(seat, s.last_seq + 1, greedy_moves(s.game) or "T")
    for seat in (0, 1):
        if sim.match.seat(seat).ended is None:
            sim.apply(sim.match.decide_finish(seat, sim.now))
    result = sim.match.result
    assert result is not None
    for seat in (0, 1):
        assert result.seats[seat].moves == sim.match.moves(seat)
        assert result.seats[seat].score == progress(sim.match, seat).leftover
    same(rebuilt(sim.log), sim.match)
