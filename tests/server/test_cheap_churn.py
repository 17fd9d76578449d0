"""Requests a client can repeat cheaply that made the server redo work out of proportion (adversarial audit).

Each test counts the work (store reads, pairing rounds), not time.
"""

from __future__ import annotations

from typing import Any

import pytest
from counting import count_calls
from race import MakeAppT, client

from server import daily
from server.protocol import Result
from server.ratings import PlayerRating


async def test_joining_and_leaving_the_quick_queue_again_and_again_does_not_bring_a_round_each(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``quick`` brought a pairing round on at once, and a round reads the whole queue."""
    app = await make_app(quick_pair_every_s=60.0)  # rounds brought on by joins: at most one in 12 s
    rounds = count_calls(monkeypatch, app.quick, "pair_now")
    c = await client(app)
    await c.request({"type": "hello"}, "welcome")
    for _ in range(20):
        await c.request({"type": "quick"}, "queued")
        await c.request({"type": "quick_cancel"}, "unqueued")
    await c.request({"type": "quick"}, "queued")
    assert rounds[0] <= 2  # the first join's (and, on a slow machine, one more); it was 21


async def test_asking_for_the_live_list_again_and_again_reads_it_once_a_period(
    make_app: MakeAppT, backend: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``live`` read (and sorted) every race of every process from the store."""
    app = await make_app(live_every_s=60.0, **backend)
    reads = count_calls(monkeypatch, app.store, "live_races")
    c = await client(app)
    for order in ["newest", "closest"] * 10:
        await c.request({"type": "live", "order": order}, "live", order=order)
        await c.send({"type": "live_stop"})
    assert reads[0] == 1  # it was 20


async def test_a_page_of_the_rating_board_reads_that_page_not_the_whole_board(make_app: MakeAppT) -> None:
    """On SQLite each ``rating_board`` sorted the whole board and counted it (a page of 100,000: 50 ms)."""
    app = await make_app()  # the embedded store (Redis's sorted set reads a page by its rank)
    db = app.store._db  # type: ignore[attr-defined]
    board = 3000
    db.executemany(
        "INSERT INTO ratings (variant, player, body, mu, on_board) VALUES ('classic', ?, ?, ?, 1)",
        [(f"p{n}", PlayerRating(mu=1000 + n, games=9).model_dump_json(), 1000 + n) for n in range(board)],
    )
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0  # go on

    c = await client(app)
    await c.request({"type": "rating_board"}, "rating_board")  # the count is kept from here on
    db.set_progress_handler(step, 100)  # called every 100 SQLite instructions
    first = await c.request({"type": "rating_board"}, "rating_board")
    assert first["total"] == board and first["entries"][0]["player"] == f"p{board - 1}"
    at_first = steps[0]
    last = await c.request({"type": "rating_board", "start": board - 20}, "rating_board")
    assert last["entries"][-1]["player"] == "p0"
    db.set_progress_handler(None, 0)
    assert at_first < 50  # a page: a few hundred instructions (5 calls; it was 891: a sort and a count)
    # Skipping to the end walks the index (an OFFSET: 451 calls), no sort, no count (it was 931).
    assert steps[0] - at_first < board // 5


def sqlite_steps(db: Any) -> list[int]:
    """A counter of SQLite's work on ``db``: one a hundred virtual-machine instructions."""
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0  # go on

    db.set_progress_handler(step, 100)
    return steps


async def test_the_daily_boards_count_their_players_once_not_for_each_request(make_app: MakeAppT) -> None:
    """On SQLite ``days`` counted every score of 60 days, ``leaderboard`` every score of its day."""
    app = await make_app()
    db = app.store._db  # type: ignore[attr-defined]
    today = daily.day_of(app.clock())
    days = [today]
    while len(days) < 30:
        days.append(daily.previous_day(days[-1]))
    players = 1000
    db.executemany(
        "INSERT INTO daily_scores (day, player, name, score, time_ms, match) VALUES (?, ?, 'P', ?, ?, 'ACDEFGHJ')",
        [(day, f"p{n}", n % 97, n) for day in days for n in range(players)],
    )
    c = await client(app)
    first = await c.request({"type": "leaderboard", "day": today}, "leaderboard")
    assert first["day"]["players"] == players
    listed = await app.store.daily_days(days[5], 20)
    assert listed == [(day, players) for day in days[6:26]]
    steps = sqlite_steps(db)
    again = await c.request({"type": "leaderboard", "day": today}, "leaderboard")
    assert again["distribution"] == first["distribution"]
    at_board = steps[0]
    assert await app.store.daily_days(days[5], 20) == listed
    db.set_progress_handler(None, 0)
    # The top 100 (12 calls), then twenty steps of the index (3); it counted the day's 1,000
    # scores (105 calls), then 20 days' 20,000 (1,403).
    assert at_board < 30 and steps[0] - at_board < 30


async def test_a_page_of_history_builds_no_game_whole(
    make_app: MakeAppT, backend: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``history`` built each listed result whole, every move of every seat (a long game's 40 KB)."""
    app = await make_app(**backend)
    c = await client(app)
    me = await c.request({"type": "hello"}, "welcome")
    codes = []
    for _ in range(3):
        codes.append((await c.request({"type": "create", "seats": 1}, "created"))["match"])
        await c.request({"type": "ready"}, "start")
        await c.request({"type": "move", "seq": 1, "move": "T"}, "ack")
        await c.request({"type": "finish"}, "result")
    built = count_calls(monkeypatch, Result, "model_validate_json")
    page = await c.request({"type": "history", "limit": 2}, "history")
    newest = sorted(codes, reverse=True)  # decided at the same time (the test's clock): by code
    assert [g["match"] for g in page["games"]] == newest[:2] and page["next"]
    assert all(g["practice"] and g["outcome"] == "solo" for g in page["games"])
    rest = await c.request({"type": "history", "before": page["next"]}, "history")
    assert [g["match"] for g in rest["games"]] == newest[2:] and rest["player"] == me["player"]
    assert built[0] == 0  # it was one for each game listed, and one more a page
