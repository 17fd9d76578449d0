"""``GET /api/replay/CODE``: a finished match, move by move, for the web page's replay viewer.

The page never runs the rules, so the server replays each seat's recorded
moves with the engine and sends the board after every play. A *play* is one
move a player made plus the automatic arrangement swaps the engine added
after it (only after a win); the recorded log lists those swaps as moves of
their own, so they are folded into the play that caused them.

Only finished matches (a stored ``result``) are served, and a daily deal's
only once its day is over (its seed is secret until then). A decided
match's replay never changes, and a long game's is a megabyte that takes
the engine tens of milliseconds: it is built once, where the match is
decided (``Replays``), kept gzipped in the store beside the result, and
served as the stored bytes (unzipped for a client that does not take gzip). Every log is
replayed through the engine and must end at the recorded score: a log the
engine rejects is refused, so a tampered log can never be shown or ranked.
Views carry no ``legal`` list (a replay is not played) to keep the answer
small.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import re
from typing import Any

from . import daily
from .engine import Game, IllegalMove, InvalidMove, Move
from .errors import ErrorCode, Refused, StoreUnavailable
from .live import LiveMatch
from .match.events import Decided, Event
from .protocol import CODE_ALPHABET, CODE_LENGTH, Result
from .store import Store

log = logging.getLogger(__name__)
PACK_LEVEL = 6

PATH = re.compile(f"^/api/replay/([{CODE_ALPHABET}]{{{CODE_LENGTH}}})$")


def _view(game: Game) -> dict[str, Any]:
    view = game.player_view()
    view.pop("legal", None)
    view.pop("stock", None)
    return view


def seat_steps(seed: str, variant: str, moves: list[str], score: int) -> list[dict[str, Any]]:
    """Step 0 is the deal; step k the board after the k-th play. IllegalMove if the log is not sound."""
    game = Game.new(seed, variant)
    steps: list[dict[str, Any]] = [{"move": None, "auto": [], "view": _view(game)}]
    pending: list[Move] = []
    for text in moves:
        move = Move.parse(text)
        if pending:
            if move != pending.pop(0):
                raise IllegalMove(move, "differs from the automatic arrangement")
            continue
        recorded = game.play(move)
        pending = list(recorded[1:])
        steps.append({"move": str(move), "auto": [str(m) for m in recorded[1:]], "view": _view(game)})
    if game.leftover != score:
        raise IllegalMove(
            moves[-1] if moves else "T", f"the log ends at {game.leftover}, not the recorded {score}"
        )
    return steps


async def verified_result(store: Store, match: str, now: int) -> Result:
    """A finished match's result whose logs the engine accepts; Refused otherwise.

    The logs are checked by building the replay, once: a kept replay's were.
    """
    await kept_replay(store, match, now)
    return await _finished_result(store, match, now)


async def _finished_result(store: Store, match: str, now: int) -> Result:
    result = await store.result(match)
    if result is None and await store.events(match):
        raise Refused(ErrorCode.WRONG_PHASE, f"match {match} is not finished yet: its replay opens then")
    if result is None:
        raise Refused(ErrorCode.NOT_FOUND, f"no match has the code {match} (or it has expired)")
    daily.check_replay(result.daily, now)
    return result


def replay_body(result: Result) -> bytes:
    """The JSON of a replay; Refused (``corrupt``) if a seat's log does not replay to its score."""
    seats = []
    for s in result.seats:
        try:
            steps = seat_steps(result.seed or "", result.variant, s.moves, s.score)
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
                "steps": steps,
            }
        )
    body = {
        "match": result.match,
        "variant": result.variant,
        "seed": result.seed,
        "started_at": result.started_at,
        "winner": result.winner,
        "draw": result.draw,
        "seats": seats,
    }
    return json.dumps(body, separators=(",", ":")).encode()


def packed_replay(result: Result) -> bytes:
    """The replay's JSON, gzipped as it is kept: a board a play repeats itself a lot (a tenth of
    the size, or far less), and a browser takes it as it is."""
    return gzip.compress(replay_body(result), PACK_LEVEL)


async def kept_replay(store: Store, match: str, now: int) -> bytes:
    """A finished match's replay, gzipped: the kept bytes, else built (a match decided before
    replays were kept, or whose keeping failed) and kept now. Refused as ``verified_result``."""
    kept = await store.replay(match)
    if kept is not None:
        day, body = kept
        daily.check_replay(day, now)
        return body
    result = await _finished_result(store, match, now)
    body = packed_replay(result)
    with contextlib.suppress(StoreUnavailable):  # served all the same; kept by a later request
        await store.save_replay(match, result.daily, body)
    return body


class Replays:
    """A hub ``Follower``: keeps each replay where its match is decided."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def applied(self, lm: LiveMatch, e: Event) -> None:
        pass

    async def appended(self, lm: LiveMatch, events: list[Event]) -> None:
        for e in events:
            if isinstance(e, Decided):
                try:
                    await self._store.save_replay(e.result.match, e.result.daily, packed_replay(e.result))
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
        return 404, json.dumps({"error": "not_found", "message": "no such match code"}).encode(), False
    try:
        packed = await kept_replay(store, m.group(1), now)
    except Refused as exc:
        body = json.dumps({"error": exc.code.value, "message": exc.message}).encode()
        return HTTP_STATUS[exc.code], body, False
    return (200, packed, True) if gzipped else (200, gzip.decompress(packed), False)
