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
from typing import Annotated, Literal

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


class Numbers(BaseModel):
    """A racer's progress after an event: what the opponent may learn."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    leftover: int
    on_grid: int
    complete: int
    moves: int

    @classmethod
    def of(cls, game: Game) -> Numbers:
        leftover = game.leftover  # every move makes one: the properties are read once each
        return cls(
            leftover=leftover,
            on_grid=game.variant.cards - leftover,
            complete=game.complete,
            moves=len(game.moves),
        )


class Moved(_Event):
    kind: Literal["moved"] = "moved"
    seat: int
    seq: int
    move: str
    numbers: Numbers


class TookBack(_Event):
    """Practice: the seat took its last play back."""

    kind: Literal["undone"] = "undone"
    seat: int
    moves: list[str] = []  # what was taken back: the play, with any automatic swaps
    numbers: Numbers


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


def encode_events(events: Sequence[Event]) -> str:
    return "[" + ",".join(e.model_dump_json() for e in events) + "]"


EVENT_LIST = TypeAdapter[list[Event]](list[Event])  # built once: building one costs milliseconds


def decode_events(data: str | bytes) -> list[Event]:
    return EVENT_LIST.validate_json(data)
