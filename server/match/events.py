"""A match's events: what happened to it, in the order its log holds them.

A match *is* its event log (``state.py`` folds it, ``render.py`` tells
people about it). Events are named in the past tense by what happened
(``Started``, ``Ended``); the messages of ``server/protocol.py`` are named by
their wire type (``start``, ``finished``), so no name means both. ``kind`` is
what the stored logs hold: it never changes, even where a class is renamed
(``SeatTaken`` is ``seated``, ``TookBack`` is ``undone``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ..engine import Game
from ..protocol import Reason, Result


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    ev: int
    at: int


class Opened(_Event):
    kind: Literal["opened"] = "opened"
    match: str
    variant: str
    seed: str
    seats: int
    time_limit_s: int
    practice: bool = False
    daily: str | None = None  # the UTC day of a daily-challenge deal
    ranked: bool = False  # counts for that day's leaderboard
    chosen: bool = False  # its creator chose the deal (a seed or deal number): they may know it
    rated: bool = False  # its result changes the racers' ratings (server/ratings.py)
    private: bool = False  # kept off the list of live races
    ready_by: int | None = None  # a quick race: called off unless every racer is ready by then


class SeatTaken(_Event):
    kind: Literal["seated"] = "seated"
    seat: int
    name: str
    token_hash: str
    player: str | None = None
    rating: int | None = None  # the player's rating in the variant as they sat down (a rated race)
    queued_since: int | None = None  # a quick race: when they joined the queue (their place in it)


class Left(_Event):
    kind: Literal["left"] = "left"
    seat: int


class Readied(_Event):
    kind: Literal["readied"] = "readied"
    seat: int


class Connected(_Event):
    kind: Literal["connected"] = "connected"
    seat: int
    conn: str


class Disconnected(_Event):
    kind: Literal["disconnected"] = "disconnected"
    seat: int
    conn: str


class CountdownStarted(_Event):
    kind: Literal["countdown"] = "countdown"
    starts_at: int


class Started(_Event):
    kind: Literal["started"] = "started"
    ends_at: int


@dataclass(slots=True)
class Numbers:
    """A racer's progress after an event: what the opponent may learn.

    A plain slotted class, like ``Moved``: every move makes one. Validated
    where it is read back (``decode_events``); nothing changes one once made.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")
    leftover: int
    on_grid: int
    complete: int
    moves: int

    @classmethod
    def of(cls, game: Game) -> Numbers:
        leftover = game.leftover  # every move makes one: the properties are read once each
        return cls(leftover, game.variant.cards - leftover, game.complete, len(game.moves))

    def as_dict(self) -> dict[str, int]:
        """Its fields, in the order the frames and the log write them."""
        return {
            "leftover": self.leftover,
            "on_grid": self.on_grid,
            "complete": self.complete,
            "moves": self.moves,
        }


@dataclass(slots=True, kw_only=True)
class Moved:
    """A play: nearly every event a log holds, so a plain slotted class written straight to JSON.

    Built per move as pydantic models (validating values the engine has just
    made), it and its numbers took 2.2 us, and their ``model_dump_json`` 1.0;
    as slotted classes 0.5 and 0.5 (timeit; docs/benchmarks.md). The fields are in the order pydantic wrote
    them (``_Event``'s first), so the log's text is the same; a log read back
    is validated as strictly as before (``EVENT_LIST``: unknown keys, missing
    or mistyped fields refuse it). Not frozen: a frozen dataclass's
    ``__init__`` costs three times as much, and nothing changes an event.
    """

    __pydantic_config__ = ConfigDict(extra="forbid")
    ev: int
    at: int
    kind: Literal["moved"] = "moved"
    seat: int
    seq: int
    move: str
    numbers: Numbers

    def to_json(self) -> str:
        """What ``model_dump_json`` wrote for it."""
        return orjson.dumps(
            {
                "ev": self.ev,
                "at": self.at,
                "kind": "moved",
                "seat": self.seat,
                "seq": self.seq,
                "move": self.move,
                "numbers": self.numbers.as_dict(),
            }
        ).decode()


UNDO = "undo"  # what a seq numbered when it was an undo (v2), not a move: no move is written so


class TookBack(_Event):
    """Practice: the seat took its last play back."""

    kind: Literal["undone"] = "undone"
    seat: int
    moves: list[str] = []  # what was taken back: the play, with any automatic swaps
    numbers: Numbers
    # v2's undo with a seq: its number among the seat's moves (a seqless one's event reads as before)
    seq: int | None = Field(default=None, exclude_if=lambda seq: seq is None)


class Ended(_Event):
    kind: Literal["ended"] = "ended"
    seat: int
    reason: Reason
    score: int


class Decided(_Event):
    kind: Literal["decided"] = "decided"
    result: Result


class CalledOff(_Event):
    """It never starts: a quick race's racers in ``absent`` were not ready in time (or left), or a
    lobby's creator (``absent == [0]``) opened another."""

    kind: Literal["called_off"] = "called_off"
    absent: list[int]


class RematchAsked(_Event):
    kind: Literal["rematch_asked"] = "rematch_asked"
    seat: int


class RematchOpened(_Event):
    kind: Literal["rematch_opened"] = "rematch_opened"
    match: str


Event = Annotated[
    Opened
    | SeatTaken
    | Left
    | Readied
    | Connected
    | Disconnected
    | CountdownStarted
    | Started
    | Moved
    | TookBack
    | Ended
    | Decided
    | RematchAsked
    | RematchOpened
    | CalledOff,
    Field(discriminator="kind"),
]


def event_json(e: Event) -> str:
    """An event as the logs and the bus hold it."""
    if isinstance(e, Moved):
        return e.to_json()
    return e.model_dump_json()


def with_ev(e: Event, ev: int) -> Event:
    """``e`` renumbered (an append placed after others' events)."""
    return replace(e, ev=ev) if isinstance(e, Moved) else e.model_copy(update={"ev": ev})


def holds_at_its_number(events: Sequence[Event], e: Event) -> bool | None:
    """Whether consecutive ``events`` (a bus batch, a read of a log) hold ``e`` where its ``ev`` falls.

    None when they do not reach that number. A copy of a match whose last
    event the log reaches, but with another event there, is not in step:
    the store lost events applied there, then a process that never had them
    wrote new ones under their numbers. Folding what follows onto that copy
    would mix two histories, so ``Recovery`` reloads it instead.
    """
    at = e.ev - events[0].ev if events else -1
    return events[at] == e if 0 <= at < len(events) else None


def encode_events(events: Sequence[Event]) -> str:
    return "[" + ",".join(event_json(e) for e in events) + "]"


EVENT_LIST = TypeAdapter[list[Event]](list[Event])  # built once: building one costs milliseconds


def decode_events(data: str | bytes) -> list[Event]:
    return EVENT_LIST.validate_json(data)
