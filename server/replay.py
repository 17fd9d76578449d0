"""``GET /api/replay/CODE``: a finished match, move by move, for the web page's replay viewer.

Moves travel, boards don't (issue 18): a replay carries, per seat, the deal
as the seat first saw it, then each play as a v2 ``board`` frame carries it
(the move, what it revealed, the automatic swaps after it, the check). The
page plays them on its own engine (``ClientGame``) to draw every step. A
*play* is one move a player made plus the automatic arrangement swaps the
engine added after it (only after a win); the recorded log lists those
swaps as moves of their own, so they are folded into the play that caused
them. Nothing is in a replay that the game did not reveal: the deal's view
leaves out the stock (shown whole in ``open`` only while playing) and a
play carries only the cards it brought into view, so the stock's undrawn
cards never appear.

Only finished matches (a stored ``result``) are served, and a daily deal's
only once its day is over (its seed is secret until then). A decided
match's replay never changes: it is built once, where the match is decided
(``Replays``), kept gzipped in the store beside the result, and served as
the stored bytes (unzipped for a client that does not take gzip).

Where the match is decided, its plays are those the match kept as it
applied each move (``Match.take_plays``): the engine took each one's reveal
and check then, for the racer's ack, and is not asked again. Otherwise (a
replay built on request; a copy whose kept plays are not exactly the
result's log) it replays each log through the engine, which must accept
every move and end at the recorded score: a log the engine rejects is
refused, so a tampered log can never be shown or ranked. Both give the same
bytes (``seat_plays``). A replay kept by an earlier version (one whole board
per step, no ``format``) is built again and kept anew when it is asked for.
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from . import daily
from . import protocol as p
from .engine import Game, IllegalMove, InvalidMove
from .errors import ErrorCode, Refused, StoreUnavailable
from .live import LiveMatch
from .match.events import Decided, Event
from .match.state import Play
from .protocol import CODE_ALPHABET, CODE_LENGTH, Result
from .store import Store

log = logging.getLogger(__name__)
PACK_LEVEL = 6
#: The replay's shape; a kept body without it (or with another) is built again (``kept_replay``).
FORMAT = 2
#: How every body of this format begins (orjson keeps the keys' order): read off the kept bytes
#: without unzipping the rest.
_HEAD = b'{"format":%d,' % FORMAT

PATH = re.compile(f"^/api/replay/([{CODE_ALPHABET}]{{{CODE_LENGTH}}})$")


def _deal(game: Game) -> dict[str, Any]:
    """The deal as a ``start`` shows it, less what a replay does not need or must not show: the
    legal moves (a replay is not played) and ``open``'s stock (its undrawn cards stay secret)."""
    view = game.player_view()
    view.pop("legal")
    view.pop("stock")
    return view


def seat_plays(
    seed: str, variant: str, moves: list[str], score: int, kept: Sequence[Play] | None
) -> list[orjson.Fragment]:
    """A seat's ``plays`` as v2 boards carry them: ``kept`` (``Match.take_plays``) when they are
    the plays of ``moves`` exactly, else the log replayed (``_replayed``; IllegalMove if not sound)."""
    if kept is None or [t for play in kept for t in (play.move, *play.auto)] != moves:
        kept = _replayed(seed, variant, moves, score)
    return [orjson.Fragment(p.play_frame({"move": move}, fields)) for move, _, fields in kept]


def _replayed(seed: str, variant: str, moves: list[str], score: int) -> list[Play]:
    """The plays of a seat's log, each as the engine makes it; IllegalMove if the log is not sound."""
    game = Game.new(seed, variant)
    # each play taken as it is made (``play_log`` goes on only when asked for the next)
    plays = [Play.of(game, recorded) for recorded in game.play_log(moves) if recorded]
    if game.leftover != score:
        raise IllegalMove(
            moves[-1] if moves else "T", f"the log ends at {game.leftover}, not the recorded {score}"
        )
    return plays


async def verified_result(store: Store, match: str, now: int) -> Result:
    """A finished match's result whose logs the engine accepts; Refused otherwise.

    The logs are checked by building the replay, once: a kept replay's were (every play in it the
    engine's, as the match applied it or with its log replayed: ``seat_plays``).
    """
    await kept_replay(store, match, now)
    return await _finished_result(store, match, now)


async def _finished_result(store: Store, match: str, now: int) -> Result:
    result = await store.result(match)
    if result is None and await store.has_log(match):  # not its log: a long race's is 30 ms to read
        raise Refused(ErrorCode.WRONG_PHASE, f"match {match} is not finished yet: its replay opens then")
    if result is None:
        raise Refused(ErrorCode.NOT_FOUND, f"no match has the code {match} (or it has expired)")
    daily.check_replay(result.daily, now)
    return result


def replay_body(result: Result, kept: Mapping[int, Sequence[Play]] | None = None) -> bytes:
    """The JSON of a replay; Refused (``corrupt``) if a seat's log does not replay to its score.

    ``kept``: the seats' plays as the match applied them (``Match.take_plays``), by seat.
    """
    seed = result.seed or ""
    deal = _deal(Game.new(seed, result.variant))  # every seat's: the same seed
    seats = []
    for s in result.seats:
        try:
            plays = seat_plays(seed, result.variant, s.moves, s.score, kept.get(s.seat) if kept else None)
        except (IllegalMove, InvalidMove) as exc:
            raise Refused(ErrorCode.CORRUPT, f"the log of seat {s.seat} does not replay: {exc}") from None
        seats.append(
            {
                "seat": s.seat,
                "name": s.name,
                "score": s.score,
                "rating": s.rating,
                "reason": s.reason,
                "finished_at": s.finished_at,
                "deal": deal,
                "plays": plays,
            }
        )
    body = {
        "format": FORMAT,
        "match": result.match,
        "variant": result.variant,
        "seed": result.seed,
        "started_at": result.started_at,
        "winner": result.winner,
        "draw": result.draw,
        "seats": seats,
    }
    return orjson.dumps(body)


def packed_replay(result: Result, kept: Mapping[int, Sequence[Play]] | None = None) -> bytes:
    """The replay's JSON (``replay_body``), gzipped as it is kept: a browser takes it as it is."""
    return gzip.compress(replay_body(result, kept), PACK_LEVEL)


def _current(packed: bytes) -> bool:
    """Whether a kept replay is of this version's ``FORMAT`` (only its first bytes are unzipped)."""
    try:
        return zlib.decompressobj(wbits=31).decompress(packed, len(_HEAD)) == _HEAD
    except zlib.error:
        return False


async def kept_replay(store: Store, match: str, now: int) -> bytes:
    """A finished match's replay, gzipped: the kept bytes, else built (a match decided before
    replays were kept, or whose keeping failed, or kept in an earlier ``FORMAT``) and kept now.
    Refused as ``verified_result``."""
    kept = await store.replay(match)
    if kept is not None:
        day, body = kept
        daily.check_replay(day, now)
        if _current(body):
            return body
    result = await _finished_result(store, match, now)
    body = packed_replay(result)
    with contextlib.suppress(StoreUnavailable):  # served all the same; kept by a later request
        await store.save_replay(match, result.daily, body)
    return body


class Replays:
    """A hub ``Follower``: keeps each replay where its match is decided, from the plays the match kept."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def applied(self, lm: LiveMatch, e: Event) -> None:
        pass

    async def appended(self, lm: LiveMatch, events: list[Event]) -> None:
        for e in events:
            if isinstance(e, Decided):
                try:
                    packed = packed_replay(e.result, lm.match.take_plays())
                    await self._store.save_replay(e.result.match, e.result.daily, packed)
                except Refused as exc:  # built on the first request instead (and refused there if corrupt)
                    log.warning("the replay of %s was not kept: %s", e.result.match, exc.message)


HTTP_STATUS = {
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.NOT_YET: 403,
    ErrorCode.WRONG_PHASE: 409,
    ErrorCode.CORRUPT: 500,
    ErrorCode.UNAVAILABLE: 503,
}


async def replay_json(store: Store, path: str, now: int, gzipped: bool) -> tuple[int, bytes, bool]:
    """(HTTP status, JSON body, whether it is gzipped) for a replay path; ``gzipped`` if the client takes it."""
    m = PATH.match(path)
    if m is None:
        return 404, orjson.dumps({"error": "not_found", "message": "no such match code"}), False
    try:
        packed = await kept_replay(store, m.group(1), now)
    except Refused as exc:
        body = orjson.dumps({"error": exc.code.value, "message": exc.message})
        return HTTP_STATUS[exc.code], body, False
    return (200, packed, True) if gzipped else (200, gzip.decompress(packed), False)
