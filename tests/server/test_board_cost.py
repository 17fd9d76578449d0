"""The boards of the embedded store read what they show, not every line of the day or the variant.

The daily leaderboard counted its distribution and the asker's rank over
every score of the day at each request (the daily page asked it twice
more, for today's and yesterday's counts), and the board of the best
ratings read and sorted a variant's every rating for each page (its filter
``on_board`` could not use the board's index). With 100,000 players these
took 60-200 ms of the event loop each (docs/benchmarks.md, "Loads nobody
ran"). The counts are now kept as results are written (``daily_counts``,
``board_sizes``); these tests count SQLite's work at two sizes instead of
timing it.

A deep page of the board of the best walked its ``OFFSET`` past every
player before it, and a player's rank counted every player ahead: cheap to
ask, 10 ms at the end of 100,000 players. Both now go through the board's
order statistic (``server/store/rank_tree.py``), and a page may go on from
a cursor (``after``), found in the board's index.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from counting import sqlite_steps
from ratingkit import rated_result, store_result

from server.ratings import PROVISIONAL_GAMES, PlayerRating
from server.store import BoardRow
from server.store.sqlite import SqliteStore
from tests.store_events import decided, opening, result

DAY = "2026-12-02"
CROWDED = "2026-12-01"  # a day on which every player left the same score: ranked by time alone


def fill(path: str, players: int) -> None:
    """A data file with ``players`` daily scores on DAY and as many ratings on the classic board."""
    rnd = random.Random(players)
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO daily_scores VALUES (?, ?, ?, ?, ?, ?)",
            [
                (DAY, f"p{i}", "P", rnd.randint(0, 52), rnd.randint(1_000, 900_000), f"m{i}")
                for i in range(players)
            ],
        )
        db.executemany(
            "INSERT INTO daily_scores VALUES (?, ?, 'P', 0, ?, ?)",
            [(CROWDED, f"p{i}", rnd.randint(1_000, 900_000), f"c{i}") for i in range(players)],
        )
        ratings = [PlayerRating(mu=rnd.gauss(1500, 200), games=20) for _ in range(players)]
        db.executemany(
            "INSERT INTO ratings VALUES ('classic', ?, ?, ?, 1)",
            [(f"p{i}", r.model_dump_json(), r.mu) for i, r in enumerate(ratings)],
        )


def forget_counts(path: str) -> None:
    """Make the data file at ``path`` one from before the boards' counts were kept."""
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE IF EXISTS daily_counts")
        db.execute("DROP TABLE IF EXISTS board_sizes")
        db.execute("DROP TABLE IF EXISTS rank_trees")


async def costs(tmp_path: Path, players: int) -> dict[str, int]:
    """SQLite's steps for each board request on a store of ``players``, its counts made from the rows
    (as for a data file from before they were kept)."""
    path = str(tmp_path / f"grip{players}.db")
    await SqliteStore(path).close()
    fill(path, players)
    forget_counts(path)
    store = SqliteStore(path)
    out = {}
    last = (await store.rating_board("classic", players - 21, 1)).places[0]
    try:
        for name, ask in {
            "leaderboard": lambda: store.leaderboard(DAY, f"p{players // 2}"),
            "leaderboard, everyone on my score": lambda: store.leaderboard(CROWDED, f"p{players // 2}"),
            "day's count": lambda: store.leaderboard(DAY, None, limit=1),
            "days": lambda: store.daily_days("2026-12-03", 30),
            "rating board": lambda: store.rating_board("classic", 0, 20),
            "rating board past its end": lambda: store.rating_board("classic", players, 20),
            "deep rating board page": lambda: store.rating_board("classic", players - 20, 20),
            "deep page by cursor": lambda: store.rating_board(
                "classic", 0, 20, (last.rating.mu, last.player)
            ),
            "rank at the end": lambda: store.rating_rank("classic", last.player),
        }.items():
            with sqlite_steps(store._db) as steps:
                await ask()
            out[name] = steps[0]
        crowded = await store.leaderboard(CROWDED, f"p{players // 2}")
        assert crowded.you is not None
        with sqlite3.connect(path) as db:
            (faster,) = db.execute(
                "SELECT count(*) FROM daily_scores WHERE day = ? AND time_ms < ?",
                (CROWDED, crowded.you[1].time_ms),
            ).fetchone()
        assert crowded.you[0] == faster + 1
        board = await store.leaderboard(DAY, None)
        page = await store.rating_board("classic", 0, 1)
        assert sum(board.distribution.values()) == players and page.total == players
        deep = await store.rating_board("classic", players - 20, 20, None)
        after = await store.rating_board("classic", 0, 20, (last.rating.mu, last.player))
        assert deep.places == after.places and [p.rank for p in deep.places] == list(
            range(players - 19, players + 1)
        )
        assert await store.rating_rank("classic", last.player) == players - 20
    finally:
        await store.close()
    return out


async def test_the_boards_cost_about_the_same_for_ten_times_the_players(tmp_path: Path) -> None:
    small, large = await costs(tmp_path, 400), await costs(tmp_path, 4_000)
    for name in small:
        # the top's lines are read either way; a rank and a page read a few nodes of a tree, and the
        # players of one slot (a quarter of a rating point, 100 ms of a day's score)
        assert large[name] < 1.5 * small[name], (name, small[name], large[name])


async def test_the_kept_counts_follow_the_results_as_they_are_written(tmp_path: Path) -> None:
    """Counted as each result is stored, they match the rows (and what an older data file gets from them)."""
    path = str(tmp_path / "grip.db")
    store = SqliteStore(path)
    scores = {"ann": 3, "bob": 3, "cy": 0, "dee": 7, "eve": 3}
    for n, (player, score) in enumerate(scores.items()):
        r = result("DDDDDDD" + "34679"[n], [player], [score], 1_000 + n).model_copy(
            update={"daily": DAY, "ranked": True}
        )
        await store.append(r.match, 0, [*opening(r.match), decided(r)])
    for game in range(PROVISIONAL_GAMES):  # ann and bob leave their provisional races behind; cy does not
        await store_result(store, rated_result("ann", "bob", at=10_000 + game))
    await store_result(store, rated_result("cy", "ann", at=20_000))

    async def boards() -> tuple[object, ...]:
        board = await store.leaderboard(DAY, "eve")
        return (
            board.distribution,
            board.you,
            await store.daily_days("2026-12-03", 5),
            await store.rating_board("classic", 0, 10),
            await store.rating_rank("classic", "bob"),
        )

    kept = await boards()
    distribution, you, days, page, bob = kept
    assert distribution == {0: 1, 3: 3, 7: 1} and days == [(DAY, 5)]
    assert you == (
        4,
        BoardRow("eve", "Eve", 3, 1_004, "DDDDDDD9"),
    )  # cy, then ann and bob, who finished first
    assert page.total == 2 and {pl.player for pl in page.places} == {"ann", "bob"} and bob == 2
    await store.close()
    forget_counts(path)
    store = SqliteStore(path)  # a data file from before they were kept: counted from the rows
    assert await boards() == kept
    await store.close()
