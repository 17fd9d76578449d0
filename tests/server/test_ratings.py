"""Ratings on every backend: what is rated, once, in an order the store keeps; the board of the best."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable

import pytest
from race import MakeAppT, client, kick
from ratingkit import player, rated_result, replayed, start_friendly, store_result
from wsclient import Msg, WsClient

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


async def on_board(app: App, name: str, wins: int, order: int = 0) -> None:
    """Take ``name`` past the provisional races: ``wins`` of them won, against newcomers who stay off the board."""
    for j in range(ratings.PROVISIONAL_GAMES):
        won = (j + order) % ratings.PROVISIONAL_GAMES < wins
        other = f"{name}-vs{j}"
        await store_result(app.store, rated_result(*((name, other) if won else (other, name)), at=3000 + j))


async def walk(c: WsClient, limit: int, between: Callable[[], Awaitable[None]] | None = None) -> list[Msg]:
    """Every line of the classic board, a page at a time by cursor (``between`` runs between two pages)."""
    lines: list[Msg] = []
    page = await c.request({"type": "rating_board", "limit": limit}, "rating_board")
    while True:
        lines += page["entries"]
        assert len(page["entries"]) <= limit
        if page["next"] is None:
            return lines
        assert len(page["entries"]) == limit
        if between is not None:
            await between()
        page = await c.request(
            {"type": "rating_board", "after": page["next"], "limit": limit}, "rating_board"
        )


async def test_paging_by_cursor_gives_every_player_once_in_the_board_order(app: App) -> None:
    for i in range(17):  # many alike: the same wins in the same order give the same rating
        await on_board(app, f"p{i:02}", wins=i % 4, order=i % 2)
    c = await client(app)
    by_offset = []
    for start in range(0, 17, 5):
        by_offset += (await c.request({"type": "rating_board", "start": start, "limit": 5}, "rating_board"))[
            "entries"
        ]
    for limit in (1, 3, 5, 17, 100):
        lines = await walk(c, limit)
        assert lines == by_offset, limit
    assert [line["rank"] for line in lines] == list(range(1, 18))
    assert len({line["player"] for line in lines}) == 17
    # the board's order: rating down, equal ratings by id down (the ids' order)
    stored = {pl: (await app.store.ratings(pl))["classic"].mu for pl in (line["player"] for line in lines)}
    keys = [(stored[line["player"]], line["player"]) for line in lines]
    assert keys == sorted(keys, reverse=True) and len(set(stored.values())) < 17
    last = await c.request({"type": "rating_board", "start": 16, "limit": 5}, "rating_board")
    assert last["next"] is None and [e["rank"] for e in last["entries"]] == [17]


async def test_players_coming_and_moving_between_pages_never_repeat_or_skip_one_who_stayed(app: App) -> None:
    for i in range(20):
        await on_board(app, f"p{i:02}", wins=i % 6, order=i % 3)
    rng = random.Random(5)
    moved: set[str] = set()
    newcomers = iter(range(1000))

    async def meanwhile() -> None:
        for _ in range(2):  # newcomers on the board, above and below the cursor
            await on_board(app, f"n{next(newcomers):03}", wins=rng.randrange(6), order=rng.randrange(5))
        mover = f"p{rng.randrange(20):02}"  # and a player whose rating changes
        moved.add(mover)
        winner, loser = (mover, "stranger") if rng.random() < 0.5 else ("stranger", mover)
        await store_result(app.store, rated_result(winner, loser, at=9000))

    c = await client(app)
    lines = await walk(c, 3, meanwhile)
    seen = [line["player"] for line in lines]
    stayed = {f"p{i:02}" for i in range(20)} - moved
    assert moved and all(seen.count(pl) == 1 for pl in stayed), (moved, seen)
    assert len(set(seen)) == len(seen) - sum(seen.count(pl) - 1 for pl in moved)
    ratings_seen = [line["rating"] for line in lines if line["player"] in stayed]
    assert ratings_seen == sorted(ratings_seen, reverse=True)


async def test_a_cursor_the_server_did_not_write_is_refused_with_bad_message(app: App) -> None:
    for i in range(3):
        await on_board(app, f"p{i}", wins=i)
    c = await client(app)
    page = await c.request({"type": "rating_board", "limit": 1}, "rating_board")
    for bad in (
        "garbage",
        "nan:p1",
        "inf:p1",
        "1e999:p1",
        "1.5:",
        ":p1",
        "1..5:p1",
        "1.5:p 1",
        "1" * 200,
        17,
    ):
        refused = await c.request({"type": "rating_board", "after": bad}, "error")
        assert refused["code"] == "bad_message", bad
    both = await c.request({"type": "rating_board", "after": page["next"], "start": 1}, "error")
    assert both["code"] == "bad_message"
    # and the connection goes on: the cursor it was given still works
    after = await c.request({"type": "rating_board", "after": page["next"], "limit": 5}, "rating_board")
    assert [e["rank"] for e in after["entries"]] == [2, 3] and after["start"] == 1 and after["next"] is None
