"""Spectator lag, sans-I/O: a spectator never sees a board drawn further into the stock than a racer still playing.

Both racers get the same deal, so a racer watching their own race under
another identity would learn their own stock to come from the other's board.
A play is shown to spectators once every other racer still playing has drawn
at least as many stock cards (``Match.release_held``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matchsim import SPECTATOR, Sim, rebuilt, receives, snapshot
from race import MakeAppT, client, start_race
from wsclient import Msg, WsClient

from server import protocol as p
from server.engine import VARIANTS, Game, get_variant
from server.match import Event, Match, Present
from server.match.render import lobby, progress, render, watching

HIDDEN_STOCK = sorted(name for name, v in VARIANTS.items() if not v.open_stock)


def boards(sim: Sim, since: int) -> list[p.Board]:
    return [m for a, m, _ in sim.out[since:] if receives(a, SPECTATOR) and isinstance(m, p.Board)]


def acks(sim: Sim, seat: int) -> list[p.Ack]:
    return [m for m in sim.to(seat) if isinstance(m, p.Ack)]


def play(sim: Sim, seat: int, *moves: str) -> int:
    """Play ``moves`` for ``seat``; return the ev of the last."""
    for text in moves:
        events = sim.move(seat, sim.match.seat(seat).last_seq + 1, text)
        assert isinstance(events, list)
    return sim.match.ev


def shown(board: p.Board) -> tuple[int, str, int]:
    return board.seat, board.move, board.view.moves


def test_a_play_drawn_ahead_is_held_until_the_other_racer_draws_as_far() -> None:
    sim = Sim()
    sim.start()
    mark = len(sim.out)
    play(sim, 0, "T")  # 3 stock cards out; Bob has none: his stock's top three would show
    assert boards(sim, mark) == []
    assert [m.type for m in sim.to(SPECTATOR)[-1:]] == ["progress"]  # the numbers stay live
    mark = len(sim.out)
    ev = play(sim, 1, "T")  # Bob has drawn as far: Ann's turn shows now, then his own
    released = boards(sim, mark)
    assert [shown(b) for b in released] == [(0, "T", 1), (1, "T", 1)]
    assert all(b.ev == ev for b in released)  # the ev of the event that showed it
    assert released[0].view == acks(sim, 0)[0].view
    assert released[0].progress == progress(sim.match, 0, ev)


def test_plays_drawing_nothing_beyond_the_other_show_at_once() -> None:
    sim = Sim()
    sim.start()
    play(sim, 1, "T", "T")
    mark = len(sim.out)
    play(sim, 0, "A1~B1")  # a swap draws nothing: Ann is behind Bob
    assert [shown(b) for b in boards(sim, mark)] == [(0, "A1~B1", 1)]
    mark = len(sim.out)
    play(sim, 0, "T")  # 3 drawn: as far as Bob's first turn, which shows with it
    assert [shown(b) for b in boards(sim, mark)] == [(0, "T", 2), (1, "T", 1)]


def test_each_play_shown_late_is_its_own_frame_in_order() -> None:
    sim = Sim()
    sim.start()
    play(sim, 0, "T", "A1~B1", "T")  # drawn 3, 3, 6: all held
    mark = len(sim.out)
    ev = play(sim, 1, "T")  # Bob at 3: Ann's first two show, one frame each
    assert [shown(b) for b in boards(sim, mark)] == [(0, "T", 1), (0, "A1~B1", 2), (1, "T", 1)]
    assert [b.view for b in boards(sim, mark)[:2]] == [a.view for a in acks(sim, 0)[:2]]
    assert {b.ev for b in boards(sim, mark)} == {ev}
    mark = len(sim.out)
    play(sim, 1, "T")
    assert [shown(b) for b in boards(sim, mark)] == [(0, "T", 3), (1, "T", 2)]
    assert boards(sim, mark)[0].view == acks(sim, 0)[2].view


def test_a_racer_whose_game_ended_holds_nothing_back() -> None:
    sim = Sim()
    sim.start()
    play(sim, 0, "T", "T")
    mark = len(sim.out)
    (ended,) = sim.do("decide_finish", 1)  # Bob learns nothing more: Ann's plays show
    assert [shown(b) for b in boards(sim, mark)] == [(0, "T", 1), (0, "T", 2)]
    assert {b.ev for b in boards(sim, mark)} == {ended.ev}
    mark = len(sim.out)
    play(sim, 0, "T")  # and from now on at once
    assert [shown(b) for b in boards(sim, mark)] == [(0, "T", 3)]


def test_a_racer_who_ended_ahead_stays_held_while_the_other_plays() -> None:
    sim = Sim()
    sim.start()
    play(sim, 0, "T", "T")
    mark = len(sim.out)
    sim.do("decide_finish", 0)  # Ann's board would still tell Bob his stock
    assert boards(sim, mark) == []
    play(sim, 1, "T", "T")
    assert [shown(b) for b in boards(sim, mark)] == [(0, "T", 1), (1, "T", 1), (0, "T", 2), (1, "T", 2)]


def test_at_the_decision_every_board_is_shown() -> None:
    sim = Sim(time_limit_s=60)
    sim.start()
    play(sim, 0, "T", "T", "T")
    play(sim, 1, "T")
    mark = len(sim.out)
    sim.now = sim.match.ends_at
    sim.do("tick")  # both time out together
    assert sim.match.status == "finished"
    assert [shown(b) for b in boards(sim, mark)] == [(0, "T", 2), (0, "T", 3)]
    assert boards(sim, mark)[-1].view == sim.match.view(0)


def test_the_snapshot_shows_the_boards_as_shown_live() -> None:
    sim = Sim()
    sim.start()
    dealt = Game.new("12345").player_view()
    play(sim, 0, "T", "T")
    play(sim, 1, "A1~B1")
    before = snapshot(sim.match)
    shown = watching(sim.match, sim.now)
    assert snapshot(sim.match) == before  # stepping back and forth left the game as it was
    ann, bob = shown.boards
    assert ann.view == p.View.model_validate(dealt) and ann.moves == []
    assert ann.progress == progress(sim.match, 0)  # the numbers are live: moves 2, 6 cards out
    assert ann.progress.moves == 2
    assert bob.view == sim.match.view(1) and bob.moves == ["A1~B1"]
    play(sim, 1, "T")
    ann, _ = watching(sim.match, sim.now).boards
    assert ann.view == acks(sim, 0)[0].view and ann.moves == ["T"]


@pytest.mark.parametrize("version", [1, 2])
def test_every_process_folds_the_same_lag_from_the_log(version: p.Version) -> None:
    sim = Sim(version=version)
    sim.start()
    play(sim, 0, "T", "A1~B1", "T")
    elsewhere = rebuilt(sim.log)  # another process loads the match from the store
    assert snapshot(elsewhere) == snapshot(sim.match)
    mark = len(sim.out)
    (moved,) = sim.move(1, 1, "T")  # type: ignore[misc]
    elsewhere.apply(moved)
    rendered = render(elsewhere, moved, Present.speaking(version))
    there = [p.as_message(m, version) for a, m in rendered if receives(a, SPECTATOR) and a.speaks(version)]
    assert there == [m for a, m, _ in sim.out[mark:] if receives(a, SPECTATOR)]
    assert len(there) == 4  # Bob's progress, then the three boards of Ann's his turn let through


def test_open_and_practice_show_every_play_at_once() -> None:
    assert lobby(Sim().match).boards_lag  # the lobby tells the clients, so they can say so
    sim = Sim(variant="open")  # the stock's order is shown anyway
    sim.start()
    assert not lobby(sim.match).boards_lag
    mark = len(sim.out)
    play(sim, 0, "T", "T")
    assert [shown(b) for b in boards(sim, mark)] == [(0, "T", 1), (0, "T", 2)]
    assert watching(sim.match, sim.now).boards[0].view == sim.match.view(0)
    practice = Sim(seats=1)
    practice.start()
    assert not lobby(practice.match).boards_lag
    mark = len(practice.out)
    play(practice, 0, "T")
    practice.do("decide_undo", 0)
    assert [shown(b) for b in boards(practice, mark)] == [(0, "T", 1), (0, "undo", 0)]


# ------------------------------------------------------------------ property


@dataclass
class Spectator:
    """What a spectator has been shown, kept from the frames as the clients keep it."""

    ev: int
    views: dict[int, p.View]
    moves: dict[int, list[str]]
    frames: dict[int, list[p.Board]] = field(default_factory=lambda: {0: [], 1: []})

    @classmethod
    def joining(cls, match: Match, now: int) -> Spectator:
        w = watching(match, now)
        return cls(
            w.ev, {b.seat: b.view for b in w.boards if b.view}, {b.seat: b.moves or [] for b in w.boards}
        )

    def see(self, message: p.Message) -> None:
        ev = getattr(message, "ev", None)
        if ev is not None:
            assert ev >= self.ev, "a spectator's ev goes back"
            self.ev = ev
        if isinstance(message, p.Board):
            self.views[message.seat] = message.view
            self.moves[message.seat] += [message.move, *message.auto]
            self.frames[message.seat].append(message)


def drawn_on(view: p.View) -> int:
    """Stock cards out, as a board shows them: after a redeal every one came out before."""
    v = get_variant(view.variant)
    stock = v.cards - v.spots
    return stock if view.redeals_left < v.redeals else stock - view.stock_count


def apply_one_by_one(sim: Sim, events: list[Event], spectator: Spectator) -> None:
    """Apply a decision event by event, checking after each what the spectator has been shown."""
    for e in events:
        mark = len(sim.out)
        sim.apply([e])
        for a, m, _ in sim.out[mark:]:
            if receives(a, SPECTATOR):
                spectator.see(m)
        m = sim.match
        if m.status == "finished":
            continue
        for n in (0, 1):
            for t in (0, 1):
                game = m.seat(t).game
                if t != n and m.seat(t).ended is None and game is not None:
                    assert drawn_on(spectator.views[n]) <= game.drawn, (
                        f"seat {n}'s board shows seat {t}'s stock"
                    )


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(HIDDEN_STOCK),
    seed=st.integers(0, 10**6).map(str),
    steps=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 10**6)), max_size=100),
    join_after=st.integers(0, 100),
    timeout=st.booleans(),
)
def test_a_spectator_never_sees_beyond_a_racer_still_playing(
    variant: str, seed: str, steps: list[tuple[int, int]], join_after: int, timeout: bool
) -> None:
    """Random legal plays in any interleaving, a spectator joining at any point; then the decision."""
    sim = Sim(variant=variant, seed=seed)
    sim.start()
    spectator: Spectator | None = None
    for i, (seat, pick) in enumerate(steps):
        if i == join_after:
            spectator = Spectator.joining(sim.match, sim.now)
        s = sim.match.seat(seat)
        if s.ended is not None or s.game is None:
            continue
        legal = s.game.legal_texts()
        if pick % 40 == 0 or not legal:
            events = sim.match.decide_finish(seat, sim.now)
        else:
            decision = sim.match.decide_move(seat, s.last_seq + 1, legal[pick % len(legal)], sim.now)
            assert isinstance(decision, list)
            events = decision
        if spectator is None:
            sim.apply(events)
        else:
            apply_one_by_one(sim, events, spectator)
            joining = Spectator.joining(sim.match, sim.now)  # one who comes now sees the same boards
            assert (joining.views, joining.moves) == (spectator.views, spectator.moves)
    if spectator is None:
        spectator = Spectator.joining(sim.match, sim.now)
    if timeout:
        sim.now = max(sim.now, sim.match.ends_at)
        end = sim.match.tick(sim.now)
        apply_one_by_one(sim, end, spectator)
    for n in (0, 1):
        if sim.match.status != "finished" and sim.match.seat(n).ended is None:
            apply_one_by_one(sim, sim.match.decide_finish(n, sim.now), spectator)
    assert sim.match.status == "finished"
    for n in (0, 1):  # at the decision the boards shown are the real final ones
        assert spectator.views[n] == sim.match.view(n)
        assert spectator.moves[n] == sim.match.moves(n)
        # Each play shown in its own frame, in order, with the board its racer had after it.
        later = acks(sim, n)[len(acks(sim, n)) - len(spectator.frames[n]) :]
        assert [b.view for b in spectator.frames[n]] == [a.view for a in later]


# ------------------------------------------------------------- real sockets


async def test_a_racer_watching_as_a_stranger_sees_only_what_they_drew(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """Over real sockets: Ann watches her own race from a second connection under no identity."""
    app = await make_app(**backend)
    race = await start_race(app)
    ann_watching = await client(app)
    await ann_watching.request({"type": "watch", "match": race.code}, "watching")
    bob = [await race.move(1, "T") for _ in range(2)]  # 6 cards out of Bob's stock: Ann's to come
    swap = await race.move(0, "A1~B1")  # Ann draws nothing: her board shows at once
    board = await ann_watching.expect("board", seat=0)
    assert board["ev"] == swap["ev"]
    assert [m["type"] for m in ann_watching.received if m.get("seat") == 1] == ["progress", "progress"]
    turn = await race.move(0, "T")  # 3 out: as far as Bob's first turn
    shown = await boards_after(ann_watching, 2)
    assert [(m["seat"], m["view"]["moves"], m["ev"]) for m in shown] == [
        (0, 2, turn["ev"]),
        (1, 1, turn["ev"]),
    ]
    assert shown[1]["view"] == bob[0]["view"]
    late = await client(app)
    watching = await late.request({"type": "watch", "match": race.code}, "watching")
    assert [(b["view"], b["moves"], b["progress"]["moves"]) for b in watching["boards"]] == [
        (turn["view"], ["A1~B1", "T"], 2),
        (bob[0]["view"], ["T"], 2),  # the numbers are live, the board as far as Ann has drawn
    ]
    await race.players[0].send({"type": "finish"})  # Ann is out: Bob's board need not wait for her
    finished = await ann_watching.expect("finished", seat=0)
    (board,) = await boards_after(ann_watching, 1)
    assert (board["seat"], board["view"], board["ev"]) == (1, bob[1]["view"], finished["ev"])


async def boards_after(spectator: WsClient, count: int) -> list[Msg]:
    """The next ``count`` board frames, skipping other frames."""
    return [await spectator.expect("board") for _ in range(count)]
