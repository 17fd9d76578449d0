"""``GET /api/replay/CODE``: a finished match, move by move, for the web page's replay viewer.

The page never runs the rules, so the server replays each seat's recorded
moves with the engine and sends the board after every play. A *play* is one
move a player made plus the automatic arrangement swaps the engine added
after it (only after a win); the recorded log lists those swaps as moves of
their own, so they are folded into the play that caused them.

Only finished matches (a stored ``result``) are served: the seed is public
then. Views carry no ``legal`` list (a replay is not played) to keep the
answer small.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .engine import Game, IllegalMove, InvalidMove, Move
from .protocol import CODE_ALPHABET, CODE_LENGTH, Result
from .store import Store, StoreUnavailable

PATH = re.compile(f"^/api/replay/([{CODE_ALPHABET}]{{{CODE_LENGTH}}})$")


def _view(game: Game) -> dict[str, Any]:
    view = game.player_view()
    view.pop("legal", None)
    view.pop("stock", None)
    return view


def seat_steps(seed: str, variant: str, moves: list[str]) -> list[dict[str, Any]]:
    """Step 0 is the deal; step k the board after the k-th play."""
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
    return steps


def replay_body(result: Result) -> dict[str, Any]:
    return {
        "match": result.match,
        "variant": result.variant,
        "seed": result.seed,
        "started_at": result.started_at,
        "winner": result.winner,
        "draw": result.draw,
        "seats": [
            {
                "seat": s.seat,
                "name": s.name,
                "score": s.score,
                "rating": s.rating,
                "reason": s.reason,
                "finished_at": s.finished_at,
                "steps": seat_steps(result.seed, result.variant, s.moves),
            }
            for s in result.seats
        ],
    }


async def replay_json(store: Store, path: str) -> tuple[int, bytes]:
    """(HTTP status, JSON body) for a replay path."""
    m = PATH.match(path)
    if m is None:
        return 404, json.dumps({"error": "not_found", "message": "no such match code"}).encode()
    try:
        result = await store.result(m.group(1))
    except StoreUnavailable:
        return 503, json.dumps({"error": "unavailable", "message": "the store is unavailable"}).encode()
    if result is None:
        body = {"error": "not_found", "message": "this match has no result yet (or does not exist)"}
        return 404, json.dumps(body).encode()
    try:
        body_ok = replay_body(result)
    except (IllegalMove, InvalidMove) as exc:  # a log the engine cannot replay: a server bug
        return 503, json.dumps({"error": "unavailable", "message": f"cannot replay: {exc}"}).encode()
    return 200, json.dumps(body_ok, separators=(",", ":")).encode()
