"""A replay carries moves, not boards (issue 18): per seat the deal, then each play as a v2 board frame carries it.

The page rebuilds every step with its engine; here the Python client
engine (the same rules) stands in for it, and the server's engine says what
each step's board is. Nothing the game never revealed may be in a replay.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson
import pytest
from matchsim import SPECTATOR, Sim, greedy_moves

import server.replay
from server import protocol as p
from server.engine import Game
from server.engine.client_game import ClientGame
from server.engine.game import BaseGame
from server.engine.variants import Variant
from server.errors import ErrorCode, Refused
from server.replay import FORMAT, replay_body
from tests.engine.engine_helpers import won_but_one

VARIANTS = ("classic", "open", "three-waste", "suitless", "single-deck")


def decided(variant: str, seed: str = "4242", plays: tuple[int, int] = (400, 25)) -> Sim:
    """A race of protocol v2 receivers, each seat playing greedily (at most ``plays[seat]`` plays), then finishing."""
    sim = Sim(seed=seed, variant=variant, version=2)
    sim.start()
    for seat, most in enumerate(plays):
        game = sim.match.game(seat)
        for seq in range(1, most + 1):
            text = greedy_moves(game)
            if text is None:
                break
            sim.move(seat, seq, text)
        if sim.match.seat(seat).ended is None:  # not over by itself
            sim.do("decide_finish", seat)
    assert sim.match.result is not None
    return sim


def body_of(sim: Sim) -> dict[str, Any]:
    assert sim.match.result is not None
    body: dict[str, Any] = orjson.loads(replay_body(sim.match.result))
    return body


def with_seat(result: p.Result, n: int, **changes: Any) -> p.Result:
    """``result`` with seat ``n``'s record changed (a log as a store could hold it)."""
    seats = [s.model_copy(update=changes) if s.seat == n else s for s in result.seats]
    return result.model_copy(update={"seats": seats})


def in_sight(game: Game) -> Counter[str]:
    """The cards a player sees of ``game`` (``open``'s stock not counted)."""
    view = game.player_view()
    grid = [c for pile in view["grid"].values() for c in pile]
    return Counter(grid + [w["top"] for w in view["waste"] if w["top"]])


def without(view: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k not in keys}


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_play_is_what_a_v2_spectator_was_sent(variant: str) -> None:
    sim = decided(variant)
    body = body_of(sim)
    assert body["format"] == FORMAT and body["seed"] == "4242" and body["variant"] == variant
    boards = [m for m in sim.to(SPECTATOR) if isinstance(m, p.BoardV2)]
    for seat in body["seats"]:
        sent = [
            without(b.model_dump(mode="json"), "type", "ev", "seat") for b in boards if b.seat == seat["seat"]
        ]
        assert seat["plays"] == sent and len(sent) > 3
        assert seat["score"] == sim.match.result.seats[seat["seat"]].score  # type: ignore[union-attr]


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_client_engine_rebuilds_every_step_as_the_server_s_engine_has_it(variant: str) -> None:
    sim = decided(variant)
    for seat in body_of(sim)["seats"]:
        moves = sim.match.moves(seat["seat"])
        server = Game.new("4242", variant)
        client = ClientGame.from_view(seat["deal"])
        assert without(client.player_view(), "stock") == without(server.player_view(), "stock")
        for play in seat["plays"]:
            recorded = server.play(moves[server.move_count])
            assert [m.text for m in client.play(play["move"])] == [m.text for m in recorded]
            client.reveal(play.get("reveal", {}))
            assert client.check() == play["check"] == server.check()
            assert without(client.player_view(), "stock") == without(server.player_view(), "stock")
        assert server.move_count == len(moves) and server.leftover == seat["score"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_replay_shows_no_card_the_game_never_revealed(variant: str) -> None:
    """Every card in a replay was in a player's sight at some step (``open``'s stock not counted):
    the stock's undrawn cards, and a waste's cards under its top, never appear."""
    sim = decided(variant)
    secrets = 0
    for seat in body_of(sim)["seats"]:
        game = Game.new("4242", variant)
        dealt = game.state()
        deck = Counter(c for pile in dealt["grid"].values() for c in pile) + Counter(dealt["stock"])
        seen = in_sight(game)  # each card as many times as its copies were in sight at once
        for text in sim.match.moves(seat["seat"]):
            game.play(text)
            seen |= in_sight(game)
        deal = seat["deal"]
        assert "stock" not in deal and "legal" not in deal
        in_replay = {c for pile in deal["grid"].values() for c in pile}
        in_replay.update(c for play in seat["plays"] for c in play.get("reveal", {}).values())
        assert in_replay <= set(seen)
        never_seen = set(deck) - set(seen)  # no copy of it ever in sight
        secrets += len(never_seen)
        text = orjson.dumps(seat).decode()
        assert not any(f'"{card}"' in text for card in never_seen)
    assert secrets  # the race left cards nobody saw


def test_building_a_replay_makes_one_view_whatever_the_plays(monkeypatch: pytest.MonkeyPatch) -> None:
    sim = decided("free-swap", plays=(0, 0))
    assert sim.match.result is not None
    game = Game.new("4242", "free-swap")
    swap = next(m for m in game.legal_texts() if "~" in m)
    result = with_seat(sim.match.result, 0, moves=[swap] * 500)
    views = [0]
    real = BaseGame.player_view

    def counted(self: BaseGame) -> dict[str, Any]:
        views[0] += 1
        return real(self)

    monkeypatch.setattr(BaseGame, "player_view", counted)
    body = orjson.loads(replay_body(result))
    assert [len(s["plays"]) for s in body["seats"]] == [500, 0]
    assert views[0] == 1  # the deal, the same for both seats


def test_a_win_s_automatic_swaps_come_with_the_play_that_won(monkeypatch: pytest.MonkeyPatch) -> None:
    """The log records them as moves of their own; the replay folds them into the winning play,
    as an ack or a board does, and a log whose swaps are not the engine's is corrupt."""
    sim = decided("classic", plays=(0, 0))
    assert sim.match.result is not None
    game, winning = won_but_one()  # no deal a test can find is won: the seat is dealt this position
    recorded = [m.text for m in game.play(winning)]

    class Dealt(Game):
        @classmethod
        def new(cls, seed: str, variant: str | Variant = "classic") -> Game:
            return won_but_one()[0]

    monkeypatch.setattr(server.replay, "Game", Dealt)
    alone = sim.match.result.model_copy(update={"seats": sim.match.result.seats[:1]})
    result = with_seat(alone, 0, moves=recorded, score=0)
    seat = orjson.loads(replay_body(result))["seats"][0]
    assert len(recorded) == 9 and seat["plays"] == [
        {"move": winning, "auto": recorded[1:], "check": game.check()}
    ]
    client = ClientGame.from_view(seat["deal"])
    assert [m.text for m in client.play(winning)] == recorded and client.check() == game.check()
    swapped = with_seat(result, 0, moves=[winning, *reversed(recorded[1:])])
    with pytest.raises(Refused) as refused:
        replay_body(swapped)
    assert refused.value.code is ErrorCode.CORRUPT and "automatic arrangement" in refused.value.message


@pytest.mark.parametrize("tamper", ["score", "move"])
def test_a_log_that_does_not_replay_to_its_score_is_corrupt(tamper: str) -> None:
    sim = decided("classic", plays=(30, 5))
    assert sim.match.result is not None
    seat = sim.match.result.seats[1]
    if tamper == "score":
        result = with_seat(sim.match.result, 1, score=seat.score - 1)
    else:  # nothing is on the waste at the deal
        result = with_seat(sim.match.result, 1, moves=["W>A1", *seat.moves])
    with pytest.raises(Refused) as refused:
        replay_body(result)
    assert refused.value.code is ErrorCode.CORRUPT and "seat 1" in refused.value.message
