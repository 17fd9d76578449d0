"""Drive a Match sans-I/O the way the hub does: decide, apply, render."""

from __future__ import annotations

from typing import Any

from fakeclock import T0

from server import protocol as p
from server.engine import Game
from server.match import Audience, Duplicate, Event, Match, Present, decode_events, encode_events
from server.match.render import render

CODE = "ACDEFGHJ"
SPECTATOR = None  # ``to`` and ``receives``: a spectator rather than a seat

TOKENS = ("seat0-token-aaaaaaaaaaaaaaaa", "seat1-token-bbbbbbbbbbbbbbbb")


class Sim:
    """One match, a log, a clock, and what each audience received."""

    def __init__(
        self,
        seats: int = 2,
        seed: str = "12345",
        time_limit_s: int = 600,
        grace_ms: int = 60_000,
        variant: str = "classic",
        version: p.Version = 1,
    ):
        self.now = T0
        self.version = version  # every receiver's protocol version
        self.grace_ms = grace_ms
        self.log: list[Event] = Match.open(
            CODE,
            variant=variant,
            seed=seed,
            seats=seats,
            time_limit_s=time_limit_s,
            name="Ann",
            token=TOKENS[0],
            player=None,
            now=self.now,
            practice=seats == 1,
        )
        self.match = Match.from_events(self.log, grace_ms)
        self.out: list[tuple[Audience, p.Message, Event]] = []

    def apply(self, events: list[Event]) -> list[Event]:
        for e in events:
            self.match.apply(e)
            self.log.append(e)
            for audience, message in render(self.match, e, Present.speaking(self.version)):
                if audience.speaks(self.version):
                    self.out.append((audience, p.as_message(message, self.version), e))
        return events

    def do(self, name: str, *args: Any) -> list[Event]:
        decision = getattr(self.match, name)(*args, self.now) if name != "tick" else self.match.tick(self.now)
        assert not isinstance(decision, Duplicate)
        return self.apply(decision)

    def move(self, seat: int, seq: int, text: str) -> list[Event] | Duplicate:
        decision = self.match.decide_move(seat, seq, text, self.now)
        if isinstance(decision, Duplicate):
            return decision
        return self.apply(decision)

    def to(self, who: int | None) -> list[p.Message]:
        """What the racer in seat ``who`` (or a ``SPECTATOR``) received, in order."""
        return [m for a, m, _ in self.out if receives(a, who)]

    def seat_two(self) -> None:
        self.do("decide_join", "Bob", TOKENS[1], None)

    def start(self) -> None:
        """Seat both, ready both, run the countdown: the race is on."""
        if self.match.capacity == 2:
            self.seat_two()
        for n in range(self.match.capacity):
            self.do("decide_ready", n)
        self.now = self.match.starts_at
        self.do("tick")
        assert self.match.status == "playing"


def greedy_moves(game: Game) -> str | None:
    """A move that makes progress and never cycles: waste plays, whole piles, then turn."""
    legal = game.legal_texts()
    for pick in (lambda t: t.startswith("W"), lambda t: ":0>" in t, lambda t: t in ("T", "R")):
        for text in legal:
            if pick(text):
                return text
    return None


def snapshot(m: Match) -> dict[str, Any]:
    """Every observable part of a match's state, for equality checks.

    Not what a decision hands its replay, only where it was decided (``Match.take_plays``).
    """
    hand_over = ("_deciding", "_decided_plays")
    out: dict[str, Any] = {k: v for k, v in vars(m).items() if k != "seats" and k not in hand_over}
    if m.result is not None:
        out["result"] = m.result.model_dump()
    seats: list[Any] = []
    for s in m.seats:
        if s is None:
            seats.append(None)
            continue
        # The game and its end as below; shown_board is no state, only a snapshot's board kept.
        skip = ("_game", "_decided", "ended", "shown_board")
        d = {k: v for k, v in vars(s).items() if k not in skip}
        d["ended"] = None if s.ended is None else s.ended.model_dump()
        if s.game is not None:
            d["game"] = {
                **s.game.state(),
                "moves": [str(x) for x in s.game.moves],
                "redeals": s.game.redeals_left,
            }
        seats.append(d)
    out["seats"] = seats
    return out


def rebuilt(log: list[Event], grace_ms: int = 60_000) -> Match:
    """The match folded again from its log, through the store's JSON encoding."""
    return Match.from_events(decode_events(encode_events(log)), grace_ms)


def receives(audience: Audience, who: int | None) -> bool:
    """Whether the racer in seat ``who`` (or a ``SPECTATOR``) is in ``audience``."""
    return audience.has_spectators if who is None else audience.has_seat(who)
