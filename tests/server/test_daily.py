"""The daily challenge over the protocol: secret deal, one ranked attempt, leaderboard, replays."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest
from fakeclock import FakeClock
from race import MakeAppT, client, greedy, kick
from wsclient import Msg, WsClient

from server import daily
from server.app import App
from server.engine.solver import solve
from server.match.state import COUNTDOWN_MS

Backend = dict[str, str]
NOON = int(datetime(2026, 11, 28, 12, tzinfo=UTC).timestamp() * 1000)
DAY = "2026-11-28"


async def player(app: App, name: str) -> tuple[WsClient, Msg]:
    c = await client(app)
    welcome = await c.request({"type": "hello", "name": name}, "welcome")
    return c, welcome


async def play_daily(app: App, c: WsClient, moves: int, think_ms: int = 1000, **create: Any) -> Msg:
    """A solo daily game: ``moves`` greedy moves, then finish; returns the result."""
    created = await c.request({"type": "create", "daily": True, "seats": 1, **create}, "created")
    await c.send({"type": "ready"})
    await c.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    view = (await c.expect("start"))["view"]
    for seq in range(1, moves + 1):
        if view["over"]:
            break
        await c.send({"type": "move", "seq": seq, "move": greedy(view)})
        view = (await c.expect("ack", seq=seq))["view"]
    app.clock.advance(think_ms)  # type: ignore[attr-defined]
    if not view["over"]:
        await c.send({"type": "finish"})
    return await c.expect("result")


@pytest.fixture
async def app(make_app: MakeAppT, backend: Backend) -> App:
    return await make_app(clock=FakeClock(NOON), **backend)


async def test_the_seed_stays_secret_until_the_day_is_over_then_matches_its_commitment(app: App) -> None:
    c, _ = await player(app, "Ann")
    info = await c.request({"type": "daily"}, "daily")
    assert info["today"]["day"] == DAY and info["today"]["seed"] is None
    commitment = info["today"]["commitment"]
    result = await play_daily(app, c, 5)
    assert result["seed"] is None and result["daily"] == DAY and result["ranked"]
    refused = await c.request({"type": "replay", "match": result["match"]}, "error")
    assert refused["code"] == "not_yet"
    app.clock.advance(86_400_000)  # type: ignore[attr-defined]
    board = await c.request({"type": "leaderboard", "day": DAY}, "leaderboard")
    seed = board["day"]["seed"]
    assert seed is not None and board["day"]["commitment"] == commitment
    assert daily.verify(seed, commitment)
    replay = await c.request({"type": "replay", "match": result["match"]}, "replay")
    assert replay["seed"] == seed and replay["seats"][0]["moves"] == result["seats"][0]["moves"]
    info = await c.request({"type": "daily"}, "daily")
    assert info["previous"] == {**board["day"], "players": 1}


def test_anyone_can_verify_a_past_day_from_the_command_line() -> None:
    seed = daily.seed("some secret", DAY)
    ok = subprocess.run(
        [sys.executable, "-m", "server.daily", "verify", seed, daily.commitment(seed)],
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0 and "matches" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "server.daily", "verify", seed, "0" * 64], capture_output=True
    )
    assert bad.returncode == 1


def test_verify_says_when_a_commitment_is_not_one() -> None:
    """Not 64 hex digits: not a commitment at all (usage, status 2), rather than a seed that does not match."""
    seed = daily.seed("some secret", DAY)
    for text in ("def", daily.commitment(seed) + "0", "z" * 64):
        done = subprocess.run(
            [sys.executable, "-m", "server.daily", "verify", seed, text], capture_output=True, text=True
        )
        assert done.returncode == 2, done
        assert "is not a commitment" in done.stderr and "MISMATCH" not in done.stdout
    upper = subprocess.run(
        [sys.executable, "-m", "server.daily", "verify", seed, daily.commitment(seed).upper()],
        capture_output=True,
        text=True,
    )
    assert upper.returncode == 0, upper  # hex is hex, whatever its case


async def test_one_ranked_attempt_then_practice(app: App) -> None:
    c, _ = await player(app, "Ann")
    early = await c.request({"type": "create", "daily": True, "seats": 1, "ranked": False}, "error")
    assert early["code"] == "not_allowed"  # no practice on the day's deal before the ranked attempt
    first = await play_daily(app, c, 3)
    assert first["ranked"]
    again = await c.request({"type": "create", "daily": True, "seats": 1, "ranked": True}, "error")
    assert again["code"] == "already_played"
    practice = await play_daily(app, c, 6)
    assert not practice["ranked"]
    board = await c.request({"type": "leaderboard", "day": DAY}, "leaderboard")
    assert [e["match"] for e in board["top"]] == [first["match"]]
    assert board["you"]["score"] == first["seats"][0]["score"]


async def test_leaderboard_orders_by_score_then_time_with_ranks_and_distribution(app: App) -> None:
    results = {}
    for name, moves, think_ms in (("Ann", 12, 1000), ("Bob", 2, 1000), ("Cid", 12, 2000), ("Dee", 12, 2000)):
        c, welcome = await player(app, name)
        results[name] = (await play_daily(app, c, moves, think_ms), welcome, c)
    board = await results["Cid"][2].request({"type": "leaderboard", "day": DAY}, "leaderboard")
    rows = [(e["name"], e["score"], e["time_ms"]) for e in board["top"]]
    assert rows == sorted(rows, key=lambda r: (r[1], r[2]))
    # Ann, Cid and Dee played the same moves: the same score; Ann finished faster,
    # Cid and Dee tie on score and time and share a rank
    names = [r[0] for r in rows]
    assert names.index("Ann") < names.index("Cid")
    ranks = {e["name"]: e["rank"] for e in board["top"]}
    assert ranks["Cid"] == ranks["Dee"] == ranks["Ann"] + 1
    assert sorted(ranks.values()) in ([1, 2, 3, 3], [1, 2, 2, 4])
    assert board["you"]["name"] == "Cid" and board["you"]["rank"] == ranks["Cid"]
    expected: dict[int, int] = {}
    for result, _, _ in results.values():
        score = result["seats"][0]["score"]
        expected[score] = expected.get(score, 0) + 1
    assert {d["score"]: d["players"] for d in board["distribution"]} == expected


async def test_race_a_friend_on_the_daily_both_ranked(app: App) -> None:
    a, _ = await player(app, "Ann")
    b, _ = await player(app, "Bob")
    created = await a.request({"type": "create", "daily": True, "seats": 2}, "created")
    await b.request({"type": "join", "match": created["match"]}, "joined")
    lobby = await b.expect("lobby")  # the friend who joins is told it is the ranked daily
    assert (lobby["daily"], lobby["ranked"]) == (DAY, True)
    spectator = await client(app)
    refused = await spectator.request({"type": "watch", "match": created["match"]}, "error")
    assert refused["code"] == "not_allowed"  # ranked dailies are not watched live
    for c in (a, b):
        await c.send({"type": "ready"})
    await a.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    await asyncio.gather(a.expect("start"), b.expect("start"))
    app.clock.advance(500)  # type: ignore[attr-defined]
    await a.request({"type": "finish"}, "finished", seat=0)
    app.clock.advance(500)  # type: ignore[attr-defined]
    await b.send({"type": "finish"})
    result = await a.expect("result")
    assert result["ranked"] and result["winner"] == 0  # same score, Ann finished first
    board = await b.request({"type": "leaderboard", "day": DAY}, "leaderboard")
    assert [e["name"] for e in board["top"]] == ["Ann", "Bob"]
    # a third player who already played today cannot take a ranked seat
    c, _ = await player(app, "Cid")
    await play_daily(app, c, 1)
    second = await a.request({"type": "create", "daily": True, "seats": 2, "ranked": True}, "error")
    assert second["code"] == "already_played"


async def test_bad_daily_input_is_refused_with_typed_errors(app: App) -> None:
    c = await client(app)
    no_hello = await c.request({"type": "create", "daily": True}, "error")
    assert no_hello["code"] == "bad_key"
    _, welcome = await player(app, "Ann")
    forged = await c.request({"type": "hello", "player": welcome["player"], "key": "x" * 32}, "error")
    assert forged["code"] == "bad_key"
    missing = await c.request({"type": "hello", "player": welcome["player"]}, "error")
    assert missing["code"] == "bad_key"
    future = await c.request({"type": "leaderboard", "day": "2026-11-29"}, "error")
    assert future["code"] == "not_yet"
    for bad_day in ("2026-13-45", "yesterday", "2026-1-1"):
        malformed = await c.request({"type": "leaderboard", "day": bad_day}, "error")
        assert malformed["code"] == "bad_message"
    unknown = await c.request({"type": "replay", "match": "ACDEFGHJ"}, "error")
    assert unknown["code"] == "not_found"
    created = await c.request({"type": "create", "seats": 1}, "created")
    unfinished = await c.request({"type": "replay", "match": created["match"]}, "error")
    assert unfinished["code"] == "wrong_phase"
    # and the real identity still works: nothing was changed by the forgeries
    again = await c.request({"type": "hello", "player": welcome["player"], "key": welcome["key"]}, "welcome")
    assert again["player"] == welcome["player"]


async def test_a_game_started_before_midnight_counts_for_its_own_day(
    make_app: MakeAppT, backend: Backend
) -> None:
    clock = FakeClock(int(datetime(2026, 11, 28, 23, 59, 50, tzinfo=UTC).timestamp() * 1000))
    app = await make_app(clock=clock, **backend)
    c, _ = await player(app, "Ann")
    created = await c.request({"type": "create", "daily": True, "seats": 1}, "created")
    await c.send({"type": "ready"})
    await c.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    await c.expect("start")
    clock.advance(60_000)  # past midnight
    await c.send({"type": "finish"})
    result = await c.expect("result")
    assert result["daily"] == DAY
    today = await c.request({"type": "leaderboard", "day": "2026-11-29"}, "leaderboard")
    yesterday = await c.request({"type": "leaderboard", "day": DAY}, "leaderboard")
    assert today["top"] == [] and [e["match"] for e in yesterday["top"]] == [created["match"]]
    # its day is over now: the seed of its deal is public and the replay opens
    assert (await c.request({"type": "replay", "match": created["match"]}, "replay"))["daily"] == DAY
    # and today's deal is a different one, with its own commitment
    info = await c.request({"type": "daily"}, "daily")
    assert info["today"]["commitment"] != yesterday["day"]["commitment"]


async def test_a_past_days_par_is_solved_off_the_loop_and_published_with_its_seed(
    make_app: MakeAppT, backend: Backend
) -> None:
    app = await make_app(clock=FakeClock(NOON), par_budget_s=60.0, par_nodes=3000, **backend)
    c, _ = await player(app, "Ann")
    await play_daily(app, c, 3)
    today = await c.request({"type": "leaderboard", "day": DAY}, "leaderboard")
    assert today["day"]["par"] is None  # not while the day runs
    app.clock.advance(86_400_000)  # type: ignore[attr-defined]
    async with asyncio.timeout(60):
        while (board := await c.request({"type": "leaderboard", "day": DAY}, "leaderboard"))["day"][
            "par"
        ] is None:
            await asyncio.sleep(0.05)  # the solver runs in its own process; ask again
    seed = board["day"]["seed"]
    assert board["day"]["par"] == solve(seed, budget_s=60, max_nodes=3000).par
    days = await c.request({"type": "days"}, "days")
    assert days["days"][0]["par"] == board["day"]["par"]


async def test_a_ranked_daily_game_ends_when_its_day_does(make_app: MakeAppT, backend: Backend) -> None:
    """At midnight the seed is published: a game still running could play the solved deal."""
    midnight = daily.end_ms(DAY)
    app = await make_app(clock=FakeClock(midnight - 60_000), **backend)
    late, _ = await player(app, "Late")
    created = await late.request(
        {"type": "create", "daily": True, "seats": 1, "time_limit_s": 3600}, "created"
    )
    await late.send({"type": "ready"})
    await late.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    start = await late.expect("start")
    assert start["ends_at"] == midnight  # not an hour later
    kick(app, created["match"], midnight - app.clock())  # type: ignore[operator]
    ended = await late.expect("finished")
    assert ended["reason"] == "timeout"
    # a ranked lobby still waiting at midnight cannot start any more
    app.clock.advance(-120_000)  # type: ignore[attr-defined]
    waiter, _ = await player(app, "Waiter")
    lobby = await waiter.request({"type": "create", "daily": True, "seats": 1}, "created")
    app.clock.advance(120_000)  # type: ignore[attr-defined]
    refused = await waiter.request({"type": "ready"}, "error")
    assert refused["code"] == "wrong_phase" and lobby["match"]


async def test_the_days_deal_is_not_shown_before_ones_ranked_attempt(app: App) -> None:
    """Neither by joining someone's unranked daily race nor by watching a daily practice game."""
    ann, _ = await player(app, "Ann")
    await play_daily(app, ann, 3)  # her ranked attempt: what follows is unranked
    race = await ann.request({"type": "create", "daily": True, "seats": 2}, "created")
    cid, _ = await player(app, "Cid")  # has not played today
    assert (await cid.request({"type": "join", "match": race["match"]}, "error"))["code"] == "not_allowed"
    assert (await cid.request({"type": "watch", "match": race["match"]}, "error"))["code"] == "not_allowed"
    dan, _ = await player(app, "Dan")  # Ann's own next lobby would call hers off (one each)
    await play_daily(app, dan, 2)
    practice = await dan.request({"type": "create", "daily": True, "seats": 1}, "created")
    assert (await cid.request({"type": "watch", "match": practice["match"]}, "error"))[
        "code"
    ] == "not_allowed"
    info = await cid.request({"type": "daily"}, "daily")
    assert info["attempt"] is None  # still his to play, ranked
    # once he has played, he may join the unranked race
    await play_daily(app, cid, 2)
    await cid.request({"type": "join", "match": race["match"]}, "joined")


async def test_no_practice_of_the_days_deal_while_the_ranked_attempt_is_still_to_play(app: App) -> None:
    """Claiming the attempt is not playing it: its lobby may wait, its game run, for a long time."""
    ann, me = await player(app, "Ann")
    attempt = await ann.request({"type": "create", "daily": True, "seats": 2}, "created")  # claimed, unplayed
    other_tab = await client(app)
    await other_tab.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
    for create in ({"ranked": False}, {}):
        refused = await other_tab.request({"type": "create", "daily": True, "seats": 1, **create}, "error")
        assert refused["code"] == "not_allowed" and attempt["match"] in refused["message"]
    bob, _ = await player(app, "Bob")
    await play_daily(app, bob, 2)
    race = await bob.request({"type": "create", "daily": True, "seats": 2}, "created")  # unranked
    refused = await other_tab.request({"type": "join", "match": race["match"]}, "error")
    assert refused["code"] == "not_allowed" and attempt["match"] in refused["message"]
    # her game over (she leaves in the countdown: that resigns), the deal is hers to practise and to race
    cid, _ = await player(app, "Cid")
    await cid.request({"type": "join", "match": attempt["match"]}, "joined")
    for c in (ann, cid):
        await c.send({"type": "ready"})
    await cid.expect("countdown")
    await ann.send({"type": "leave"})
    await cid.expect("finished", seat=0)
    await other_tab.request({"type": "create", "daily": True, "seats": 1}, "created")
    await other_tab.request({"type": "join", "match": race["match"]}, "joined")


async def test_a_join_the_match_refuses_gives_the_ranked_attempt_back(app: App) -> None:
    """The attempt is claimed before the match decides the join; refused, the player keeps it for the day.

    Here everyone left the ranked lobby before Bob's join reached it (as with
    a seat taken meanwhile, the match refuses): Bob used to have no seat and
    no attempt left, for the rest of the day.
    """
    ann, _ = await player(app, "Ann")
    bob, _ = await player(app, "Bob")
    created = await ann.request({"type": "create", "daily": True, "seats": 2}, "created")
    await ann.send({"type": "leave"})
    await ann.expect("lobby", seats=[])
    refused = await bob.request({"type": "join", "match": created["match"]}, "error")
    assert refused["code"] == "not_found"
    assert (await bob.request({"type": "daily"}, "daily"))["attempt"] is None
    own = await bob.request({"type": "create", "daily": True, "seats": 1, "ranked": True}, "created")
    assert (await bob.expect("lobby"))["ranked"]
    assert (await bob.request({"type": "daily"}, "daily"))["attempt"] == own["match"]
    # refused with the attempt already his (a second tab joining his own lobby), he keeps it
    other_tab, _ = await player(app, "Cid")
    await other_tab.request({"type": "join", "match": own["match"]}, "error")
    assert (await bob.request({"type": "daily"}, "daily"))["attempt"] == own["match"]


async def test_one_player_cannot_take_both_seats(app: App) -> None:
    """Two tabs share one identity: the second is told to resume, not given the other seat."""
    ann, me = await player(app, "Ann")
    other_tab = await client(app)
    await other_tab.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
    created = await ann.request({"type": "create", "seed": "777"}, "created")
    refused = await other_tab.request({"type": "join", "match": created["match"]}, "error")
    assert refused["code"] == "not_allowed"


async def test_a_daily_result_sent_after_its_day_carries_the_seed(
    make_app: MakeAppT, backend: Backend
) -> None:
    midnight = daily.end_ms(DAY)
    app = await make_app(clock=FakeClock(midnight - 120_000), **backend)
    ann, _ = await player(app, "Ann")
    ranked = await play_daily(app, ann, 2)
    assert ranked["seed"] is None  # its day runs
    practice = await ann.request({"type": "create", "daily": True, "seats": 1}, "created")
    await ann.send({"type": "ready"})
    await ann.expect("countdown")
    kick(app, practice["match"], COUNTDOWN_MS)
    await ann.expect("start")
    app.clock.advance(120_000)  # type: ignore[attr-defined]
    await ann.send({"type": "finish"})
    result = await ann.expect("result")
    board = await ann.request({"type": "leaderboard", "day": DAY}, "leaderboard")
    assert result["seed"] == board["day"]["seed"] is not None


async def test_no_hints_on_the_days_deal_until_the_day_is_over(app: App) -> None:
    """A throwaway identity resigns its attempt, then asks the solver how to play today's deal (issue 19)."""
    ann, _ = await player(app, "Ann")
    attempt = await play_daily(app, ann, 0)
    practice = await ann.request({"type": "create", "daily": True, "seats": 1}, "created")
    assert practice["match"] != attempt["match"]
    await ann.send({"type": "ready"})
    await ann.expect("countdown")
    kick(app, practice["match"], COUNTDOWN_MS)
    await ann.expect("start")
    refused = await ann.request({"type": "hint"}, "error")
    assert refused["code"] == "not_yet" and DAY in refused["message"]


async def test_no_par_is_solved_for_a_day_without_games(app: App) -> None:
    """Any past day can be asked for; a par costs a worker seconds and is stored for good (issue 19)."""
    ann, _ = await player(app, "Ann")
    board = await ann.request({"type": "leaderboard", "day": "1970-01-01"}, "leaderboard")
    assert board["day"]["par"] is None and board["day"]["seed"] is not None
    assert app.solving._solving == {} and await app.store.setting("par:1970-01-01") is None
