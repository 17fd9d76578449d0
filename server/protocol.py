"""The race protocol, v1 and v2: every message, both directions, as pydantic v2 models.

One JSON object per WebSocket text frame, discriminated by ``type``. The
server parses client frames with ``parse_client`` (a typed ``Refused``
for anything malformed) and encodes with ``encode``. ``python -m
server.protocol schema`` prints the JSON Schema of all messages; the
committed ``docs/protocol.schema.json`` is checked against it by a test.

A connection speaks v1 unless its ``hello`` asks for v2. Both versions share
every message but three: in v2 moves travel, boards don't. A racer's ``ack``
and a spectator's ``board`` carry only what the client cannot know (the cards
a play brought into view, and a check of the position), and a ``rejected``
move carries the seat's ``last_seq`` beside its view (``AckV2``, ``BoardV2``,
``RejectedV2``; docs/protocol.md, "Protocol v2").

Times are integers, milliseconds since the Unix epoch by the server's clock.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, get_args

import orjson
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
    model_validator,
)

from .errors import ErrorCode as ErrorCode
from .errors import Refused

#: The versions a ``hello`` may ask for; a connection without one speaks v1.
Version = Literal[1, 2]
PROTOCOL_VERSIONS: tuple[Version, ...] = (1, 2)
MAX_FRAME_BYTES = 4096

# Share codes and match ids: no look-alikes (0/O, 1/I/L, 5/S, 2/Z, 8/B).
CODE_ALPHABET = "34679ACDEFGHJKMNPQRTUVWXY"
CODE_LENGTH = 8

MatchCode = Annotated[str, Field(pattern=f"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")]
#: A seat's token as a client sends it back: text that is no token holds no seat (``bad_token``).
Token = Annotated[str, Field(max_length=64)]
Name = Annotated[str, Field(min_length=1, max_length=24)]
MoveText = Annotated[str, Field(min_length=1, max_length=12)]
Seat = Annotated[int, Field(ge=0, le=1)]
Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
#: A player's id as the server issues it (``secrets.token_urlsafe``): it becomes part of store
#: keys, so text of any other form is refused where it enters, not looked up.
PLAYER_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
PlayerId = Annotated[str, Field(pattern=PLAYER_ID_PATTERN)]
VariantName = Literal["classic", "relaxed", "free-swap", "single-deck", "open", "three-waste", "suitless"]
#: Where a match stands: seats are taken in the lobby, then a countdown, the race, the result.
Status = Literal["lobby", "countdown", "playing", "finished"]
#: Why a racer's game ended: no move left, finished or resigned by them, out of time, gone too long.
Reason = Literal["over", "finish", "resign", "timeout", "abandoned"]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _json_integer(value: Any) -> Any:
    """A JSON integer as sent: a ``Literal`` of integers would take ``true`` as 1 and ``2.0`` as 2
    (Python's equality), strict or not (``parse_client``)."""
    if type(value) is not int:
        raise ValueError("Input should be a JSON integer")
    return value


#: On a ``Literal`` of integers: only a JSON integer is one of them.
JSON_INTEGER = BeforeValidator(_json_integer)


# ----------------------------------------------------------------- client -> server


class Hello(Message):
    """First message of a connection: who is playing (persistent identity)."""

    type: Literal["hello"] = "hello"
    v: Annotated[Version, JSON_INTEGER] = 1  # the protocol version this connection speaks from now on
    name: Name | None = None
    player: PlayerId | None = None
    key: str | None = Field(default=None, max_length=128)


def now_ms() -> int:
    """The clock of every time in the protocol: milliseconds since the Unix epoch."""
    return time.time_ns() // 1_000_000


#: The highest deal number a ``create`` may ask for.
MAX_DEAL = 10**12
#: The longest clock a ``create`` may ask for: practice games get it (web page and terminal).
MAX_TIME_LIMIT_S = 3600


class Create(Message):
    """Open a match; ``seed`` or ``deal`` (a deal number) fixes the deal."""

    type: Literal["create"] = "create"
    variant: VariantName = "classic"
    seats: Annotated[Literal[1, 2], JSON_INTEGER] = 2
    seed: str | None = Field(default=None, min_length=1, max_length=64)
    deal: int | None = Field(default=None, ge=0, le=MAX_DEAL)
    time_limit_s: int = Field(default=600, ge=30, le=MAX_TIME_LIMIT_S)
    name: Name | None = None
    bot: Literal["greedy", "lookahead"] | None = None  # "race a bot": the server seats one
    daily: bool = False  # today's daily deal (classic); needs a hello first
    ranked: bool | None = None  # daily only: None = ranked if today's attempt is unused
    rated: bool = False  # changes both racers' ratings (docs/ratings.md); both need a hello
    private: bool = False  # kept off the list of live races (its link still works)

    @model_validator(mode="after")
    def _check_combinations(self) -> Create:
        """Refuse a field the server would otherwise have to drop without a word."""
        if self.seed is not None and self.deal is not None:
            raise ValueError("give a seed or a deal number, not both")
        if self.bot is not None and self.seats != 2:
            raise ValueError("a bot races you: it needs the second seat (seats 2)")
        if self.daily and (self.seed is not None or self.deal is not None):
            raise ValueError("the daily challenge deals its own deal: no seed or deal number")
        if not self.daily and self.ranked is not None:
            raise ValueError("ranked is for the daily challenge only")
        if self.rated and (self.seats != 2 or self.bot is not None or self.daily):
            raise ValueError("a rated race is between two people (no bot, not the daily challenge)")
        if self.rated and (self.seed is not None or self.deal is not None):
            raise ValueError("a rated race is on a deal nobody chose: no seed or deal number")
        return self


class Join(Message):
    type: Literal["join"] = "join"
    match: MatchCode
    name: Name | None = None


class Watch(Message):
    type: Literal["watch"] = "watch"
    match: MatchCode


class Resume(Message):
    """Reclaim a seat after a dropped connection; ``last_ev`` is the last event seen."""

    type: Literal["resume"] = "resume"
    match: MatchCode
    token: Token
    last_ev: int = Field(default=0, ge=0)


class Ready(Message):
    type: Literal["ready"] = "ready"


class MoveMsg(Message):
    """A move in RULES.md notation; ``seq`` counts this seat's moves from 1."""

    type: Literal["move"] = "move"
    seq: int = Field(ge=1, le=100_000, strict=True)  # "1" is not a seq: a client that sends it has a bug
    move: MoveText


class Finish(Message):
    type: Literal["finish"] = "finish"


class Resign(Message):
    type: Literal["resign"] = "resign"


class Rematch(Message):
    type: Literal["rematch"] = "rematch"


class Leave(Message):
    type: Literal["leave"] = "leave"


class HintRequest(Message):
    type: Literal["hint"] = "hint"


class UndoRequest(Message):
    """Practice: take back the last play. v2: ``seq``, if given, numbers it among the seat's moves.

    A resend of a seq the seat holds as an undo is answered with its first
    ``undone`` again, and undoes nothing more (a v1 ``undo`` has no seq).
    """

    type: Literal["undo"] = "undo"
    seq: int | None = Field(default=None, ge=1, le=100_000, strict=True)


class DailyRequest(Message):
    """Today's challenge: its commitment and whether this player has used their attempt."""

    type: Literal["daily"] = "daily"


class LeaderboardRequest(Message):
    type: Literal["leaderboard"] = "leaderboard"
    day: Day


class DaysRequest(Message):
    """Past days, newest first, before ``before`` (default: today)."""

    type: Literal["days"] = "days"
    before: Day | None = None
    limit: int = Field(default=14, ge=1, le=60)


class ReplayRequest(Message):
    type: Literal["replay"] = "replay"
    match: MatchCode


class StatsRequest(Message):
    """A player's figures: one's own (after hello), or another player's public ones."""

    type: Literal["stats"] = "stats"
    player: PlayerId | None = None


Cursor = Annotated[str, Field(pattern=f"^[0-9]{{1,15}}\\.[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")]
#: The clocks a quick race offers: each (variant, clock) is a queue of its own.
QuickClock = Literal[180, 300, 600]


class QuickRace(Message):
    """Race anyone: wait for an opponent of a close rating (needs hello); ``quick_cancel`` to stop."""

    type: Literal["quick"] = "quick"
    variant: VariantName = "classic"
    time_limit_s: Annotated[QuickClock, JSON_INTEGER] = 300
    name: Name | None = None  # as in ``create``: the name shown to the opponent (else the hello's)


class QuickCancel(Message):
    type: Literal["quick_cancel"] = "quick_cancel"


#: How the list of live races is ordered: the newest first, or the closest races (cards left) first.
LiveOrder = Literal["newest", "closest"]
LIVE_LIMIT = 100  # the longest page of the live list


class LiveRequest(Message):
    """The races being played that anyone may watch; the list follows until ``live_stop``."""

    type: Literal["live"] = "live"
    order: LiveOrder = "newest"
    limit: int = Field(default=20, ge=1, le=LIVE_LIMIT)


class LiveStop(Message):
    type: Literal["live_stop"] = "live_stop"


class RatingsRequest(Message):
    """A player's ratings by variant, with their history: one's own (after hello) or another's."""

    type: Literal["ratings"] = "ratings"
    player: PlayerId | None = None


#: Where a page of a board of the best goes on from: a ``rating_board``'s ``next``, as the server wrote it.
BoardCursor = Annotated[str, Field(min_length=3, max_length=100, pattern=r"^[0-9.e+-]+:[A-Za-z0-9_-]{1,64}$")]


class RatingBoardRequest(Message):
    """The best ratings of a variant: a page from rank ``start + 1`` on, or just past ``after`` (a ``next``)."""

    type: Literal["rating_board"] = "rating_board"
    variant: VariantName = "classic"
    start: int = Field(default=0, ge=0, le=1_000_000)
    after: BoardCursor | None = None
    limit: int = Field(default=20, ge=1, le=100)


class HistoryRequest(Message):
    """Finished games, newest first; ``before`` is the ``next`` of the previous page."""

    type: Literal["history"] = "history"
    player: PlayerId | None = None
    before: Cursor | None = None
    limit: int = Field(default=20, ge=1, le=100)


ClientMessage = Annotated[
    Hello
    | Create
    | Join
    | Watch
    | Resume
    | Ready
    | MoveMsg
    | Finish
    | Resign
    | Rematch
    | Leave
    | HintRequest
    | UndoRequest
    | DailyRequest
    | LeaderboardRequest
    | DaysRequest
    | ReplayRequest
    | StatsRequest
    | HistoryRequest
    | QuickRace
    | QuickCancel
    | LiveRequest
    | LiveStop
    | RatingsRequest
    | RatingBoardRequest,
    Field(discriminator="type"),
]

# ----------------------------------------------------------------- server -> client


class WasteTop(Message):
    top: str | None
    count: int


class View(Message):
    """What one player may see of their own game: never the stock order (but in ``open``)."""

    variant: str
    grid: dict[str, list[str]]
    waste: list[WasteTop]
    stock_count: int
    stock: list[str] | None = None
    leftover: int
    on_grid: int
    complete: int
    redeals_left: int
    moves: int
    legal: list[str]
    over: bool
    won: bool


class Progress(Message):
    """A racer's numbers: all the opponent of a racer ever learns of their game."""

    type: Literal["progress"] = "progress"
    ev: int
    seat: Seat
    leftover: int
    on_grid: int
    complete: int
    moves: int
    finished: bool


class SeatInfo(Message):
    seat: Seat
    name: str
    ready: bool
    connected: bool
    rematch: bool = False  # asked for a rematch (after the result)
    rating: int | None = None  # in a rated race: the racer's rating in its variant when seated


class Welcome(Message):
    type: Literal["welcome"] = "welcome"
    player: str
    key: str
    name: str
    share_host: str | None = None  # host[:port] for links to send to others (server/reach.py)


class Seated(Message):
    """Answer to ``create``/``join`` (``paired``: a quick race found an opponent): keep ``token`` secret."""

    type: Literal["created", "joined", "paired"]
    match: MatchCode
    seat: Seat
    token: str


class Lobby(Message):
    type: Literal["lobby"] = "lobby"
    ev: int
    match: MatchCode
    variant: str
    solo: bool
    time_limit_s: int
    status: Status
    seats: list[SeatInfo]
    daily: Day | None = None  # the day whose challenge deal this is: a friend who joins sees it
    ranked: bool = False  # it counts on that day's leaderboard (its first attempt for each player)
    # its creator chose the deal (``seed``/``deal``): they may know it, and a joiner should know that
    chosen_deal: bool = False
    # while it is played, spectators see each board only as far as every racer has drawn
    # (a race on a hidden stock: docs/protocol.md, "What spectators see of a live race")
    boards_lag: bool = False
    rated: bool = False  # its result changes both racers' ratings
    quick: bool = False  # paired from the quick-race queue: each racer must be ready by ``ready_by``
    ready_by: int | None = None
    called_off: bool = False  # a quick race whose racer was not ready in time: it never starts


class Countdown(Message):
    type: Literal["countdown"] = "countdown"
    ev: int
    starts_at: int


class Start(Message):
    """The race starts; racers get their own view, spectators every board."""

    type: Literal["start"] = "start"
    ev: int
    started_at: int
    ends_at: int
    view: View | None = None
    boards: list[View] | None = None


class Ack(Message):
    type: Literal["ack"] = "ack"
    seq: int
    ev: int
    move: str
    auto: list[str] = []
    view: View


class Rejected(Message):
    type: Literal["rejected"] = "rejected"
    seq: int
    code: ErrorCode
    message: str
    view: View | None = None


class Board(Message):
    """Spectators only: a racer's move and their board after it (during a race, maybe with a later ``ev``).

    ``move`` is ``undo`` when a practice player took their last play back.
    """

    type: Literal["board"] = "board"
    ev: int
    seat: Seat
    move: str
    auto: list[str] = []
    view: View
    progress: Progress


class Terse(Message):
    """A v2 message: a field left empty (``None``, ``{}``, ``[]``) is left out of the frame."""

    @model_serializer(mode="wrap")
    def _leave_out_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None and v != {} and v != []}


#: CRC-32 of a position's text (docs/client-engine.md): the client's agreement check.
Check = Annotated[int, Field(ge=0, lt=1 << 32)]
#: The cards a play brought into view, by spot (a refill from the stock) or waste (its new top).
Reveal = dict[str, str]


class AckV2(Terse):
    """v2: your move was applied and is durable; ``reveal`` what it brought into view, ``check`` the position after it.

    The client has played the move on its own engine: it puts the revealed
    cards in, compares the check, and resumes if they differ. ``auto`` (the
    automatic swaps after a win) comes only after a win.
    """

    type: Literal["ack"] = "ack"
    seq: int
    ev: int
    reveal: Reveal = {}
    auto: list[str] = []
    check: Check


class RejectedV2(Rejected, Terse):
    """v2: your move was not applied; ``view`` and ``last_seq`` are your game as the server has it."""

    last_seq: int | None = None  # with ``view``: the seq of the last move applied


class BoardV2(Terse):
    """v2, spectators only: a racer's move, what it brought into view, and the check of their board after it.

    A spectator plays it on its copy of that board (built from ``watching`` or
    ``start``). ``move`` is ``undo`` when a practice player took their last
    play back; the board then comes whole, as ``view``.
    """

    type: Literal["board"] = "board"
    ev: int
    seat: Seat
    move: str
    reveal: Reveal = {}
    auto: list[str] = []
    check: Check
    view: View | None = None


class Finished(Message):
    type: Literal["finished"] = "finished"
    ev: int
    seat: Seat
    score: int
    reason: Reason
    at: int


class SeatResult(Message):
    seat: Seat
    player: str | None = None
    name: str
    score: int
    rating: str | None
    on_grid: int
    complete: int
    reason: str
    finished_at: int
    moves: list[str]


class Result(Message):
    type: Literal["result"] = "result"
    ev: int
    match: MatchCode
    variant: str
    seed: str | None  # None for a daily deal until its day is over
    started_at: int
    decided_at: int = 0
    seats: list[SeatResult]
    winner: Seat | None
    draw: bool
    daily: Day | None = None
    ranked: bool = False
    practice: bool = False  # a game alone with hints and undo: it counts in no figures
    rated: bool = False  # created rated (a quick race, or a friendly race marked so): docs/ratings.md

    @model_validator(mode="before")
    @classmethod
    def _practice_of_a_stored_result(cls, data: Any) -> Any:
        """A result stored before ``practice`` was recorded: a lone unranked seat was practice.

        (Every one-seat game is practice but a ranked daily attempt.)
        """
        if isinstance(data, dict) and "practice" not in data and isinstance(data.get("seats"), list):
            return {**data, "practice": len(data["seats"]) == 1 and not data.get("ranked", False)}
        return data


class SeatSummary(BaseModel):
    """A seat of a stored ``Result`` as a list of games shows it: no moves (see ``ResultSummary``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    seat: Seat
    player: str | None = None
    name: str
    score: int
    rating: str | None


class ResultSummary(BaseModel):
    """A stored ``Result`` read for a list of games (``history``): its seats' moves are skipped.

    A result holds every move of every seat (a long game's, 40 KB); a page of
    ``history`` built each of its hundred results whole, 3 ms for games of a
    hundred moves, 30 ms for long ones, for a frame a client may send 30
    times a second. Read so, the moves are passed over, never built.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)
    match: MatchCode
    variant: str
    decided_at: int = 0
    seats: list[SeatSummary]
    winner: Seat | None
    draw: bool
    daily: Day | None = None
    ranked: bool = False
    recorded_practice: bool | None = Field(default=None, alias="practice")

    @property
    def practice(self) -> bool:
        """As ``Result``'s: a result stored before ``practice`` was recorded was practice if it had
        one seat and was not ranked. (Not a "before" validator: that would build the moves after all.)"""
        if self.recorded_practice is not None:
            return self.recorded_practice
        return len(self.seats) == 1 and not self.ranked


class Rematched(Message):
    """Both asked for a rematch: the same seats (and tokens) in a new match."""

    type: Literal["rematched"] = "rematched"
    ev: int
    match: MatchCode


MatchEvent = Annotated[
    Lobby | Countdown | Start | Progress | Board | Finished | Result | Rematched,
    Field(discriminator="type"),
]


class SeatSnapshot(Message):
    seat: Seat
    progress: Progress
    view: View | None = None
    moves: list[str] | None = None


class Resumed(Message):
    """State of the match as of ``ev``; ``missed`` holds the events after ``last_ev``."""

    type: Literal["resumed"] = "resumed"
    match: MatchCode
    seat: Seat
    ev: int
    now: int  # the server's clock as it sent this: a reloaded page sets its clock by it
    started_at: int | None = None  # once the race has started: its clock
    ends_at: int | None = None
    last_seq: int
    lobby: Lobby
    view: View | None
    opponents: list[Progress]
    result: Result | None = None
    missed: list[MatchEvent]


class Watching(Message):
    """Snapshot for a spectator; every event after ``ev`` follows live."""

    type: Literal["watching"] = "watching"
    match: MatchCode
    ev: int
    now: int  # the server's clock as it sent this: a late spectator sets their clock by it
    started_at: int | None = None  # once the race has started: its clock
    ends_at: int | None = None
    lobby: Lobby
    boards: list[SeatSnapshot]
    result: Result | None = None


class Hint(Message):
    type: Literal["hint"] = "hint"
    move: str | None


class Undone(Message):
    type: Literal["undone"] = "undone"
    ev: int
    moves: list[str]
    view: View


class DayInfo(Message):
    day: Day
    commitment: str
    seed: str | None  # published once the day is over
    players: int
    par: int | None = None


class DailyInfo(Message):
    type: Literal["daily"] = "daily"
    today: DayInfo
    variant: str
    attempt: MatchCode | None  # this player's ranked match today, if any
    previous: DayInfo


class BoardEntry(Message):
    rank: int
    player: str
    name: str
    score: int
    time_ms: int
    match: MatchCode


class ScoreCount(Message):
    score: int
    players: int


class Leaderboard(Message):
    """A day's ranking: score, then time to finish; ``you`` is the asker's own line."""

    type: Literal["leaderboard"] = "leaderboard"
    day: DayInfo
    top: list[BoardEntry]
    you: BoardEntry | None
    distribution: list[ScoreCount]


class Days(Message):
    type: Literal["days"] = "days"
    days: list[DayInfo]


class ReplaySeat(Message):
    seat: Seat
    name: str
    score: int
    moves: list[str]


class Replay(Message):
    """A finished game, checked by replaying every move through the engine."""

    type: Literal["replay"] = "replay"
    match: MatchCode
    variant: str
    seed: str
    daily: Day | None
    seats: list[ReplaySeat]


class ScoreGames(Message):
    score: int
    games: int


class VariantStats(Message):
    variant: str
    played: int
    wins: int  # games ended with leftover 0
    mean_score: float
    best_score: int
    ratings: dict[str, int]  # brilliant, excellent, good: how many games earned each
    mean_on_grid: float
    mean_complete: float
    distribution: list[ScoreGames]  # how many games ended on each score, lowest score first
    recent: list[int]  # the last scores (up to 30), oldest first: the trend


class HeadToHead(Message):
    opponent: str
    name: str
    wins: int
    losses: int
    draws: int
    last_match: MatchCode
    last_at: int


class Stats(Message):
    type: Literal["stats"] = "stats"
    player: str
    name: str
    variants: list[VariantStats]  # races and daily games: practice never counts here
    practice: list[VariantStats]  # practice games (alone, hints and undo), kept apart
    daily_streak: int  # consecutive UTC days with a ranked daily, up to today or yesterday
    best_daily_streak: int
    head_to_head: list[HeadToHead]


class GameEntry(Message):
    match: MatchCode
    variant: str
    at: int
    score: int
    rating: str | None
    outcome: Literal["win", "loss", "draw", "solo"]
    opponent: str | None
    daily: Day | None
    practice: bool = False  # counted apart in the figures
    replay: str  # the replay's address on this server


class History(Message):
    type: Literal["history"] = "history"
    player: str
    games: list[GameEntry]
    next: str | None  # cursor for the next page, None at the end


class Queued(Message):
    """In the quick-race queue since ``since`` (``again``: put back at its head, the opponent never readied)."""

    type: Literal["queued"] = "queued"
    variant: str
    time_limit_s: int
    since: int
    rating: int
    again: bool = False


class Unqueued(Message):
    """Out of the queue: ``cancelled`` by you; ``elsewhere``: your place went to your newer connection."""

    type: Literal["unqueued"] = "unqueued"
    reason: Literal["cancelled", "elsewhere"]


class RatingChange(Message):
    seat: Seat
    player: str
    before: int
    after: int
    provisional: bool  # still among a player's first rated races


class Rated(Message):
    """After a rated race's result: each racer's rating before and after it."""

    type: Literal["rated"] = "rated"
    match: MatchCode
    variant: str
    seats: list[RatingChange]


class LiveRacer(Message):
    seat: Seat
    name: str
    rating: int | None  # in a rated race
    leftover: int
    moves: int
    finished: bool


class LiveRace(Message):
    match: MatchCode
    variant: str
    time_limit_s: int
    rated: bool
    started_at: int
    ends_at: int
    racers: list[LiveRacer]


class Live(Message):
    """The listed live races (``total`` of them), in ``order``: sent again as it changes, until ``live_stop``."""

    type: Literal["live"] = "live"
    order: LiveOrder
    races: list[LiveRace]
    total: int


class RatingPointInfo(Message):
    at: int
    match: MatchCode
    rating: int


class VariantRating(Message):
    variant: str
    rating: int
    deviation: int  # sigma: how unsure the rating still is
    provisional: bool
    games: int
    wins: int
    losses: int
    draws: int
    rank: int | None  # on the variant's board of the best (not while provisional)
    history: list[RatingPointInfo]  # after each rated race, oldest first (the latest 200)


class Ratings(Message):
    type: Literal["ratings"] = "ratings"
    player: str
    name: str
    variants: list[VariantRating]


class RatingBoardEntry(Message):
    rank: int
    player: str
    name: str
    rating: int
    games: int


class RatingBoard(Message):
    """A page of a variant's best ratings (players past their provisional races); ``you``: the asker's line."""

    type: Literal["rating_board"] = "rating_board"
    variant: str
    start: int  # the ranks before this page
    entries: list[RatingBoardEntry]
    total: int
    you: RatingBoardEntry | None
    next: str | None = None  # the ``after`` of the page that follows (None: this is the last)


class Error(Message):
    type: Literal["error"] = "error"
    code: ErrorCode
    message: str


#: The messages both versions share; each version adds its own ack, rejected and board.
_Shared = (
    Welcome
    | Seated
    | Lobby
    | Countdown
    | Start
    | Progress
    | Finished
    | Result
    | Rematched
    | Resumed
    | Watching
    | Hint
    | Undone
    | DailyInfo
    | Leaderboard
    | Days
    | Replay
    | Stats
    | History
    | Queued
    | Unqueued
    | Rated
    | Live
    | Ratings
    | RatingBoard
    | Error
)
ServerMessage = Annotated[_Shared | Ack | Rejected | Board, Field(discriminator="type")]
ServerMessageV2 = Annotated[_Shared | AckV2 | RejectedV2 | BoardV2, Field(discriminator="type")]

_client = TypeAdapter[ClientMessage](ClientMessage)
_server = TypeAdapter[ServerMessage](ServerMessage)
_server_v2 = TypeAdapter[ServerMessageV2](ServerMessageV2)
#: Every client message class, and their ``type``s: read off the ``ClientMessage`` union.
CLIENT_MESSAGES: tuple[type[Message], ...] = get_args(get_args(ClientMessage)[0])
CLIENT_TYPES = frozenset(m.model_fields["type"].default for m in CLIENT_MESSAGES)


def parse_client(frame: str | bytes) -> ClientMessage:
    """The client message in ``frame``, or a Refused with its typed code.

    Well-formed frames (nearly all) are parsed and validated in one pass by
    pydantic-core; only a frame that fails is looked at again, to say which
    kind of wrong it is.
    """
    if isinstance(frame, bytes):
        raise Refused(ErrorCode.BAD_MESSAGE, "send JSON text frames, not binary")
    try:  # strict: a field's value is of its JSON type ("600", 600.0 and true are no integer)
        return _client.validate_json(frame, strict=True)
    except ValidationError:
        pass
    try:
        data = json.loads(frame)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than any message is
        raise Refused(ErrorCode.BAD_JSON, "that frame is not valid JSON (or nested too deeply)") from None
    if not isinstance(data, dict):
        raise Refused(ErrorCode.BAD_MESSAGE, "a message is a JSON object with a 'type'")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in CLIENT_TYPES:  # a list or an object is no type (nor hashable)
        raise Refused(ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind!r}")
    try:
        return _client.validate_python(data, strict=True)
    except ValidationError as exc:
        raise Refused(ErrorCode.BAD_MESSAGE, f"{kind}: {explain(exc, skip=1)}") from None


def explain(exc: ValidationError, skip: int = 0) -> str:
    """The first complaint of ``exc`` as a sentence: the field (past ``skip`` levels) and why."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"][skip:])  # none: the message as a whole
    text = first["msg"].removeprefix("Value error, ")  # a validator's own sentence
    return f"{where}: {text}" if where else text


def parse_server(frame: str | bytes) -> ServerMessage:
    """For clients: the server message in ``frame`` as a typed object."""
    return _server.validate_json(frame)


def parse_server_v2(frame: str | bytes) -> ServerMessageV2:
    """For clients of protocol v2: the server message in ``frame`` as a typed object."""
    return _server_v2.validate_json(frame)


#: What the server sends: a model, or the UTF-8 JSON of one built by a ``*_frame`` function.
Outgoing = Message | bytes


def as_message(message: Outgoing, version: int = 1) -> Message:
    """The model of an outgoing message (a built frame parsed back): for the cold paths."""
    if isinstance(message, Message):
        return message
    return parse_server_v2(message) if version == 2 else parse_server(message)


def encode(message: Outgoing) -> bytes:
    """The UTF-8 JSON text of a message, as it goes into a text frame."""
    return message if isinstance(message, bytes) else message.__pydantic_serializer__.to_json(message)


# The per-move messages, built from plain values without model validation:
# every move sends an ack and a progress (and a board to spectators), and
# validating a view the engine just made, to serialize it again at once, was
# a third of a move's server time (docs/benchmarks.md). Each builder gives the
# JSON of the model it names, byte for byte; tests/server/test_protocol_frames.py
# checks each one against that model.


def dumps(value: Any) -> bytes:
    """orjson's JSON, in a bytes object of its own size.

    orjson hands back its working buffer: 4 KiB for a 100-byte progress,
    8 KiB for an 800-byte view (measured). That is harmless while a frame is
    written at once. But a slow reader's outbox may hold thousands of frames
    until it catches up, and a decided match keeps its final views for ten
    minutes, so the JSON is copied to its size, for 0.2 us.
    """
    return bytes(memoryview(orjson.dumps(value)))


def _progress(ev: int, seat: int, numbers: Mapping[str, int], finished: bool) -> dict[str, Any]:
    return {"type": "progress", "ev": ev, "seat": seat, **numbers, "finished": finished}


def progress_frame(ev: int, seat: int, numbers: Mapping[str, int], finished: bool) -> bytes:
    """The JSON of Progress; ``numbers`` are leftover, on_grid, complete and moves."""
    return dumps(_progress(ev, seat, numbers, finished))


def ack_frame(seq: int, ev: int, move: str, auto: Sequence[str], view: Mapping[str, Any]) -> bytes:
    """The JSON of Ack; ``view`` is ``Game.player_view()``."""
    return dumps({"type": "ack", "seq": seq, "ev": ev, "move": move, "auto": auto, "view": view})


def board_frame(
    ev: int,
    seat: int,
    move: str,
    auto: Sequence[str],
    view: Mapping[str, Any],
    numbers: Mapping[str, int],
    finished: bool,
) -> bytes:
    """The JSON of Board, its Progress included."""
    progress = _progress(ev, seat, numbers, finished)
    return dumps(
        {
            "type": "board",
            "ev": ev,
            "seat": seat,
            "move": move,
            "auto": auto,
            "view": view,
            "progress": progress,
        }
    )


def play_fields(reveal: Mapping[str, str], auto: Sequence[str], check: int) -> bytes:
    """A v2 play's own fields, as its frames and a replay (``server/replay.py``) carry them after
    their head (``play_frame``): what the play revealed and the automatic swaps (when any), the check.

    The JSON object's last members and its closing brace: made once a play,
    where the play is applied (``Play`` in ``server/match/state.py``), and
    kept that small until the match is decided.
    """
    fields: dict[str, Any] = {}
    if reveal:
        fields["reveal"] = reveal
    if auto:
        fields["auto"] = auto
    fields["check"] = check
    return orjson.dumps(fields)[1:]  # a slice: a bytes object of its own size


def play_frame(head: dict[str, Any], fields: bytes) -> bytes:
    """The JSON of a v2 play: ``head``'s members (at least one), then the play's ``fields`` (``play_fields``)."""
    return orjson.dumps(head)[:-1] + b"," + fields


def ack_v2_frame(seq: int, ev: int, fields: bytes) -> bytes:
    """The JSON of AckV2 (``fields``: ``play_fields`` of ``Game.revealed()``, the auto swaps, ``check()``)."""
    return play_frame({"type": "ack", "seq": seq, "ev": ev}, fields)


def board_v2_frame(ev: int, seat: int, move: str, fields: bytes) -> bytes:
    """The JSON of BoardV2 for a play (an undo's board is built as a model: practice only)."""
    return play_frame({"type": "board", "ev": ev, "seat": seat, "move": move}, fields)


def schema() -> dict[str, Any]:
    """JSON Schema of both directions, for docs/protocol.schema.json: the server's messages per version."""
    return {
        "title": "Devil's Grip race protocol, v1 and v2",
        "client_to_server": _client.json_schema(),
        "server_to_client": _server.json_schema(),
        "server_to_client_v2": _server_v2.json_schema(),
    }


def main(argv: list[str]) -> int:
    if argv != ["schema"]:
        print("usage: python -m server.protocol schema", file=sys.stderr)
        return 2
    print(json.dumps(schema(), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
