"""Protocol v2 shows nobody more than v1, and nothing earlier: sans-I/O, every variant, random races.

Each racer and a spectator is there twice, once per protocol version, each a
client ``Session`` fed exactly what the server renders for it. After every
event, the v2 client's board (rebuilt by its own engine from reveals) must be
the v1 client's board (sent whole), and no v2 message may hold a card the v1
message of the same event did not show. A spectator also joins late, from the
``watching`` snapshot. So the spectator lag, and every "who gets what" rule,
holds in v2 exactly as in v1.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matchsim import CODE, TOKENS, Sim

from client.session import Session
from server import protocol as p
from server.engine import VARIANTS
from server.match.render import Audience, render, watching

SPECTATOR = "spectator"
Who = int | str


def cards_in(message: p.Outgoing, version: int) -> set[str]:
    """Every card text a message holds (in a view, a board, a reveal)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str) and len(value) == 2 and value[1] in "CDHS":
            found.add(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key not in ("legal", "moves", "auto", "move"):  # move texts, not cards
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(p.as_message(message, version).model_dump())
    return found


class Audiences:
    """Two clients for each racer and for one spectator: v1 and v2, each fed what it is sent.

    Made once the race has started: each racer's client gets its ``start``.
    """

    def __init__(self, sim: Sim) -> None:
        self.sim = sim
        self.clients: dict[tuple[Who, int], Session] = {}
        m = sim.match
        for seat in range(m.capacity):
            start = p.Start(ev=m.ev, started_at=m.started_at, ends_at=m.ends_at, view=m.view(seat))
            for v in (1, 2):
                session = Session(version=v, greet=False)  # type: ignore[arg-type]
                session.match, session.seat, session.token, session.holding = CODE, seat, TOKENS[seat], True
                session.receive_message(start)
                self.clients[seat, v] = session
        self.watch()

    def watch(self) -> None:
        """A spectator (of each version) starts watching now, from the snapshot."""
        snapshot = watching(self.sim.match, self.sim.now)
        for v in (1, 2):
            spectator = Session(version=v, greet=False)  # type: ignore[arg-type]
            spectator.receive_message(snapshot)
            self.clients[SPECTATOR, v] = spectator

    def move(self, seat: int, text: str) -> None:
        """The racer plays (the v2 client on its own engine at once), then what the server decides reaches everyone."""
        self.clients[seat, 2].move(text)
        self.clients[seat, 1].move(text)
        m = self.sim.match
        decision = m.decide_move(seat, m.seat(seat).last_seq + 1, text, self.sim.now)
        assert isinstance(decision, list)
        self.deliver(decision)

    def do(self, command: str, seat: int) -> None:
        self.deliver(getattr(self.sim.match, command)(seat, self.sim.now))

    def deliver(self, events: Iterable[Any]) -> None:
        """Apply each event, and hand each client what it renders for it (as the hub does)."""
        for e in events:
            self.sim.match.apply(e)
            shown: dict[tuple[Who, int], set[str]] = {key: set() for key in self.clients}
            for audience, message in render(self.sim.match, e):
                for (who, v), client in self.clients.items():
                    if not _receives(audience, who) or not audience.speaks(v):
                        continue
                    if isinstance(message, bytes):
                        client.receive(message)
                    else:
                        client.receive_message(message)
                    shown[who, v] |= cards_in(message, v)
            self.check(shown)

    def check(self, shown: dict[tuple[Who, int], set[str]]) -> None:
        for who in {who for who, _ in self.clients}:
            old, new = self.clients[who, 1], self.clients[who, 2]
            assert shown[who, 2] <= shown[who, 1], (
                f"{who}: v2 was shown {shown[who, 2] - shown[who, 1]} first"
            )
            assert new.divergences == 0
            if who == SPECTATOR:
                for seat in range(self.sim.match.capacity):
                    assert new.board(seat) == old.board(seat), f"spectator's board {seat}"
            else:
                assert new.view == old.view, f"racer {who}'s board"


def _receives(audience: Audience, who: Who) -> bool:
    return audience.has_spectators if who == SPECTATOR else audience.has_seat(who)  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    variant=st.sampled_from(sorted(VARIANTS)),
    seed=st.integers(0, 10**6),
    plays=st.integers(20, 120),
    late=st.integers(0, 100),
)
def test_v2_clients_know_what_v1_clients_know_event_by_event(
    variant: str, seed: int, plays: int, late: int
) -> None:
    sim = Sim(variant=variant, seed=str(seed))
    rng = random.Random(seed)
    sim.start()
    clients = Audiences(sim)
    for turn in range(plays):
        if turn == late:
            clients.watch()  # a spectator who comes in the middle of the race
        open_seats = [n for n in (0, 1) if sim.match.seat(n).ended is None]
        if not open_seats:
            break
        seat = rng.choice(open_seats)
        game = sim.match.game(seat)
        legal = game.legal_texts()
        # mostly moves that draw (refills, turns) so that the lag holds boards back and lets them go
        drawing = [m for m in legal if m == "T" or ":0>" in m or m.startswith("W")]
        clients.move(seat, rng.choice(drawing if drawing and rng.random() < 0.8 else legal))
    for seat in (0, 1):
        if sim.match.seat(seat).ended is None:
            clients.do("decide_finish", seat)
    assert sim.match.status == "finished"


def test_practice_undo_shows_the_same_board_in_both_versions() -> None:
    sim = Sim(seats=1, seed="7")
    sim.start()
    clients = Audiences(sim)
    for text in ("T", "T"):
        clients.move(0, text)
    clients.do("decide_undo", 0)
    clients.move(0, "T")
    assert clients.clients[0, 2].view == clients.clients[0, 1].view
