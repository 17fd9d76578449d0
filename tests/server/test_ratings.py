"""Ratings on every backend: what is rated, once, in an order the store keeps; the board of the best."""

from __future__ import annotations

import asyncio
import random

import pytest
from race import MakeAppT, client, kick
from ratingkit import player, rated_result, replayed, start_friendly, store_result

from server import protocol as p
from server import ratings
from server.app import App

Backend = dict[str, str]


@pytest.fixture
async def app(make_app: MakeAppT, backend: Backend) -> App:
    return await make_app(rate_per_s=1000.0, burst=1000, **backend)


def seat(player: str, n: int, reason: str = "over", moves: tuple[str, ...] = ("T",)) -> p.SeatResult:
    return p.SeatResult(
        seat=n, player=player, name=player, score=10, rating=None, on_grid=0, complete=0,
        reason=reason, finished_at=0, moves=list(moves),
    )  # fmt: skip


def test_what_is_rated() -> None:
    base = rated_result("ann", "bob", at=1)
    assert ratings.is_rated(base)
    assert not ratings.is_rated(base.model_copy(update={"rated": False}))
    assert not ratings.is_rated(base.model_copy(update={"daily": "2026-01-01"}))
    assert not ratings.is_rated(base.model_copy(update={"seats": [seat("ann", 0), seat("ann", 1)]}))
    bot = seat("ann", 1).model_copy(update={"player": None})
    assert not ratings.is_rated(base.model_copy(update={"seats": [seat("bob", 0), bot]}))
    gone = [seat("ann", 0), seat("bob", 1, reason="abandoned", moves=())]
    assert not ratings.is_rated(base.model_copy(update={"seats": gone}))  # abandoned before a move
    played = [seat("ann", 0), seat("bob", 1, reason="abandoned")]
    assert ratings.is_rated(base.model_copy(update={"seats": played}))


def test_a_win_is_a_win_however_it_came_and_a_draw_moves_both_less() -> None:
    by_score = rated_result("ann", "bob", at=1)
    by_time = by_score.model_copy(
        update={"seats": [seat("ann", 0), seat("bob", 1)]}
    )  # same scores, seat 0 won
    assert ratings.update(by_score, {}) == ratings.update(by_time, {})
    won = ratings.update(by_score, {})["ann"]
    drew = ratings.update(rated_result("ann", "bob", at=1, draw=True), {})["ann"]
    assert won.mu > drew.mu == ratings.INITIAL_MU and drew.draws == 1 and won.wins == 1


async def test_recomputing_every_rating_from_the_stored_results_gives_the_stored_ratings(app: App) -> None:
    rng = random.Random(23)
    names = [f"pl{i}" for i in range(8)]
    results = []
    for i in range(40):
        a, b = rng.sample(names, 2)
        variant = rng.choice(["classic", "relaxed"])
        results.append(rated_result(a, b, at=10_000 + i, variant=variant, draw=rng.random() < 0.2))
    # many at once, as decisions of many processes land: the store's order is the truth
    for chunk in range(0, len(results), 8):
        await asyncio.gather(*(store_result(app.store, r) for r in results[chunk : chunk + 8]))
    for variant in ("classic", "relaxed"):
        log = await app.store.rating_log(variant)
        assert sorted(log) == sorted(r.match for r in results if r.variant == variant)
        stored = {pl: r for pl in names if (r := (await app.store.ratings(pl)).get(variant))}
        assert await replayed(app.store, variant) == stored
        assert sum(r.games for r in stored.values()) == 2 * len(log)
        for pl, r in stored.items():
            history = await app.store.rating_history(pl, variant, 1000)
            assert len(history) == r.games and (history[-1].mu, history[-1].sigma) == (r.mu, r.sigma)


async def test_the_board_of_the_best_pages_without_loading_everything(app: App) -> None:
    top, top_id = await player(app, "Top")
    strong = top_id["player"]
    for i in range(6):
        await store_result(app.store, rated_result(strong, f"x{i}", at=1000 + i))
    for i in range(12):  # a dozen players past their provisional races, ranked by how often they won
        for j in range(5):
            won = j < i % 6
            await store_result(
                app.store, rated_result(*((f"p{i}", f"q{i}{j}") if won else (f"q{i}{j}", f"p{i}")), at=2000)
            )
    board = await top.request({"type": "rating_board", "variant": "classic", "limit": 5}, "rating_board")
    assert board["total"] == 13 and len(board["entries"]) == 5
    assert [e["rank"] for e in board["entries"]] == [1, 2, 3, 4, 5]
    assert (
        board["you"]["player"] == strong
        and board["you"]["rank"] == 1
        and board["entries"][0]["name"] == "Top"
    )
    everyone = []
    start = 0
    while start < board["total"]:
        page = await top.request({"type": "rating_board", "start": start, "limit": 5}, "rating_board")
        everyone += page["entries"]
        start += 5
    assert [e["rank"] for e in everyone] == list(range(1, 14))
    assert [e["rating"] for e in everyone] == sorted((e["rating"] for e in everyone), reverse=True)
    assert all(e["games"] >= ratings.PROVISIONAL_GAMES for e in everyone)  # no q*: one race each
    anyone = await client(app)
    page = await anyone.request({"type": "rating_board", "variant": "relaxed"}, "rating_board")
    assert page["entries"] == [] and page["you"] is None


async def test_a_friendly_race_marked_rated_rates_both_and_needs_both_identities(app: App) -> None:
    (ann, ann_id), (bob, bob_id) = await player(app, "Ann"), await player(app, "Bob")
    lobby = await ann.request({"type": "create", "rated": True}, "created")
    stranger = await client(app)
    refused = await stranger.request({"type": "join", "match": lobby["match"]}, "error")
    assert refused["code"] == "not_allowed"  # a rated race rates who you are: hello first
    await start_friendly(app, ann, bob, rated=True)
    await ann.request({"type": "move", "seq": 1, "move": "T"}, "ack")
    await ann.request({"type": "finish"}, "finished")
    await bob.send({"type": "resign"})
    rated = await bob.expect("rated")
    assert {s["player"] for s in rated["seats"]} == {ann_id["player"], bob_id["player"]}
    for bad in ({"rated": True, "seed": "x"}, {"rated": True, "bot": "greedy"}, {"rated": True, "seats": 1}):
        assert (await ann.request({"type": "create", **bad}, "error"))["code"] == "bad_message"
    assert (await stranger.request({"type": "create", "rated": True}, "error"))["code"] == "bad_key"


async def test_a_race_abandoned_before_any_move_is_not_rated(app: App) -> None:
    (ann, ann_id), (bob, _) = await player(app, "Ann"), await player(app, "Bob")
    code = await start_friendly(app, ann, bob, rated=True)
    await bob.close()
    await ann.expect("lobby")  # bob gone
    kick(app, code, app.settings.grace_ms)
    await ann.request({"type": "finish"}, "result")
    assert await app.store.ratings(ann_id["player"]) == {}
    assert await app.store.rating_log("classic") == []
