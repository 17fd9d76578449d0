"""Player statistics and head-to-head records, checked against the stored results."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from fakeclock import FakeClock
from race import MakeAppT, client, greedy, kick
from wsclient import Msg, WsClient

from server import protocol as p
from server.app import App
from server.match.state import COUNTDOWN_MS
from server.stats import RECENT, fold, streaks

Backend = dict[str, str]
NOON = int(datetime(2026, 11, 28, 12, tzinfo=UTC).timestamp() * 1000)


async def player(app: App, name: str) -> tuple[WsClient, Msg]:
    c = await client(app)
    return c, await c.request({"type": "hello", "name": name}, "welcome")


async def play(app: App, c: WsClient, moves: int, view: Msg, end: str = "finish") -> None:
    for seq in range(1, moves + 1):
        if view["over"]:
            break
        await c.send({"type": "move", "seq": seq, "move": greedy(view)})
        view = (await c.expect("ack", seq=seq))["view"]
    app.clock.advance(1000)  # type: ignore[attr-defined]
    if not view["over"]:
        await c.request({"type": end}, "finished")


async def race(app: App, a: WsClient, b: WsClient, moves: tuple[int, int], ends: tuple[str, str]) -> Msg:
    created = await a.request({"type": "create", "seed": "5"}, "created")
    await b.request({"type": "join", "match": created["match"]}, "joined")
    for c in (a, b):
        await c.send({"type": "ready"})
    await a.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    views = [(await c.expect("start"))["view"] for c in (a, b)]
    await play(app, a, moves[0], views[0], ends[0])
    await play(app, b, moves[1], views[1], ends[1])
    return await a.expect("result")


async def solo(app: App, c: WsClient, moves: int, **create: Any) -> Msg:
    created = await c.request({"type": "create", "seats": 1, **create}, "created")
    await c.send({"type": "ready"})
    await c.expect("countdown")
    kick(app, created["match"], COUNTDOWN_MS)
    await play(app, c, moves, (await c.expect("start"))["view"])
    return await c.expect("result")


@pytest.fixture
async def app(make_app: MakeAppT, backend: Backend) -> App:
    return await make_app(clock=FakeClock(NOON), rate_per_s=1000.0, burst=1000, **backend)


def recompute(player: str, results: list[Msg]) -> dict[str, Any]:
    """The figures from the stored results, counted the plain way (practice games apart)."""
    by_variant: dict[tuple[bool, str], list[Msg]] = {}
    h2h: dict[str, Counter[str]] = {}
    for r in sorted(results, key=lambda r: (r["decided_at"], r["match"])):
        me = next(s for s in r["seats"] if s["player"] == player)
        by_variant.setdefault((r["practice"], r["variant"]), []).append(me)
        if len(r["seats"]) == 2:
            other = next(s for s in r["seats"] if s is not me)
            h2h.setdefault(other["player"], Counter())[
                "draws" if r["draw"] else "wins" if r["winner"] == me["seat"] else "losses"
            ] += 1
    return {
        "variants": {
            (practice, v): {
                "played": len(seats),
                "wins": sum(s["score"] == 0 for s in seats),
                "mean_score": sum(s["score"] for s in seats) / len(seats),
                "best_score": min(s["score"] for s in seats),
                "mean_on_grid": sum(s["on_grid"] for s in seats) / len(seats),
                "mean_complete": sum(s["complete"] for s in seats) / len(seats),
                "rated": Counter(
                    s["rating"] for s in seats if s["rating"] in ("brilliant", "excellent", "good")
                ),
                "distribution": sorted(Counter(s["score"] for s in seats).items()),
                "recent": [s["score"] for s in seats][-30:],
            }
            for (practice, v), seats in by_variant.items()
        },
        "h2h": {pid: dict(c) for pid, c in h2h.items()},
    }


async def test_figures_agree_with_the_stored_results(app: App) -> None:
    a, ann = await player(app, "Ann")
    b, bob = await player(app, "Bob")
    matches = [
        (await race(app, a, b, (20, 3), ("finish", "resign")))["match"],  # Ann wins: Bob resigns
        (await race(app, a, b, (0, 0), ("resign", "finish")))["match"],  # Bob wins
        (await race(app, a, b, (10, 25), ("finish", "finish")))["match"],
        (await solo(app, a, 30, variant="relaxed"))["match"],
        (await solo(app, a, 40))["match"],
    ]
    stored = [(await app.store.result(m)) for m in matches]
    results = [r.model_dump() for r in stored if r is not None]
    assert len(results) == len(matches)
    expected = recompute(ann["player"], results)
    figures = await a.request({"type": "stats"}, "stats")
    assert figures["name"] == "Ann"
    got = {
        (practice, v["variant"]): {
            "played": v["played"],
            "wins": v["wins"],
            "mean_score": v["mean_score"],
            "best_score": v["best_score"],
            "mean_on_grid": v["mean_on_grid"],
            "mean_complete": v["mean_complete"],
            "rated": Counter({k: n for k, n in v["ratings"].items() if n}),
            "distribution": [(d["score"], d["games"]) for d in v["distribution"]],
            "recent": v["recent"],
        }
        for practice in (False, True)
        for v in figures["practice" if practice else "variants"]
    }
    assert got == expected["variants"]
    # the two practice games (one relaxed, one classic) count apart from the three races
    assert {(p, v): f["played"] for (p, v), f in got.items()} == {
        (False, "classic"): 3,
        (True, "classic"): 1,
        (True, "relaxed"): 1,
    }
    assert {
        h["opponent"]: {k: h[k] for k in ("wins", "losses", "draws") if h[k]} for h in figures["head_to_head"]
    } == (expected["h2h"])
    (rival,) = figures["head_to_head"]
    assert rival["name"] == "Bob" and rival["last_match"] == matches[2]
    # anyone may look at Bob's public figures by his id; his record mirrors Ann's
    bobs = await a.request({"type": "stats", "player": bob["player"]}, "stats")
    (mirror,) = bobs["head_to_head"]
    assert (mirror["wins"], mirror["losses"], mirror["draws"]) == (
        rival["losses"],
        rival["wins"],
        rival["draws"],
    )


async def test_history_pages_newest_first_with_replay_links(app: App) -> None:
    c, _ = await player(app, "Ann")
    played = [(await solo(app, c, n))["match"] for n in (1, 2, 3, 4, 5)]
    seen: list[str] = []
    before = None
    while True:
        page = await c.request(
            {"type": "history", "limit": 2, **({"before": before} if before else {})}, "history"
        )
        seen += [g["match"] for g in page["games"]]
        assert all(g["replay"] == f"/api/replay/{g['match']}" for g in page["games"])
        before = page["next"]
        if before is None:
            break
    assert seen == played[::-1]


async def test_bad_stats_input_gets_typed_errors(app: App) -> None:
    c = await client(app)
    assert (await c.request({"type": "stats"}, "error"))["code"] == "bad_key"
    assert (await c.request({"type": "stats", "player": "nobody"}, "error"))["code"] == "not_found"
    await c.request({"type": "hello", "name": "Ann"}, "welcome")
    assert (await c.request({"type": "history", "limit": 101}, "error"))["code"] == "bad_message"
    for cursor in ("yesterday", "12.abc", "1700000000000-ACDEFGHJ"):
        assert (await c.request({"type": "history", "before": cursor}, "error"))["code"] == "bad_message"
    empty = await c.request({"type": "stats"}, "stats")
    assert empty["variants"] == [] and empty["daily_streak"] == 0


def test_daily_streaks() -> None:
    assert streaks(set(), "2026-11-28") == (0, 0)
    days = {"2026-11-20", "2026-11-21", "2026-11-22", "2026-11-26", "2026-11-27"}
    assert streaks(days, "2026-11-28") == (2, 3)  # played yesterday: the run still counts
    assert streaks(days, "2026-11-27") == (2, 3)
    assert streaks(days, "2026-11-29") == (0, 3)  # missed a day: the run is over


async def test_daily_streak_from_ranked_dailies(app: App) -> None:
    c, _ = await player(app, "Ann")
    for _ in range(3):
        await solo(app, c, 2, daily=True)
        app.clock.advance(86_400_000)  # type: ignore[attr-defined]
    figures = await c.request({"type": "stats"}, "stats")
    assert (figures["daily_streak"], figures["best_daily_streak"]) == (3, 3)


async def test_the_stored_totals_are_the_fold_of_the_stored_results(app: App) -> None:
    """Kept at each decision, yet exactly what folding every result from nothing gives."""
    a, ann = await player(app, "Ann")
    b, bob = await player(app, "Bob")
    await race(app, a, b, (5, 2), ("finish", "resign"))
    await solo(app, a, 3)
    await solo(app, a, 4, daily=True)
    await race(app, a, b, (1, 6), ("finish", "finish"))
    for who in (ann, bob):
        pid = who["player"]
        totals = await app.store.totals(pid)
        assert totals == fold(pid, await app.store.player_results(pid))
        assert totals.games == len(await app.store.player_results(pid))


def test_the_fold_does_not_depend_on_the_order_results_come_in() -> None:
    """Two decisions on two processes can land in either order: the totals are the same."""
    me, rival = "ann", "bob"

    def result(n: int, seats: int, practice: bool = False) -> p.Result:
        return p.Result(
            ev=9,
            match=f"{'ACDEFGHJ'[n % 8]}CDEFGH{'JKMNPQRT'[n // 8]}",
            variant="classic",
            seed="1",
            started_at=0,
            decided_at=1000 + n // 2,  # pairs decided in the same millisecond: ties by match
            seats=[
                p.SeatResult(
                    seat=s, player=(me, rival)[s], name=("Ann", "Bob")[s], score=(n * 7 + s) % 30,
                    rating=None, on_grid=n % 5, complete=n % 3, reason="finish", finished_at=1000, moves=[],
                )
                for s in range(seats)
            ],
            winner=n % 2 if seats == 2 else None,
            draw=False,
            practice=practice,
        )  # fmt: skip

    results = [result(n, 2 if n % 3 else 1, practice=n % 5 == 0) for n in range(40)]
    ordered = fold(me, results)
    for seed in range(5):
        shuffled = results[:]
        random.Random(seed).shuffle(shuffled)
        assert fold(me, shuffled) == ordered
    assert len(ordered.variants["classic"].recent) == RECENT
    assert ordered.games == 40


def test_a_result_stored_before_practice_was_recorded_reads_as_practice_when_alone_and_unranked() -> None:
    seat = {
        "seat": 0, "player": "ann", "name": "Ann", "score": 5, "rating": None, "on_grid": 3,
        "complete": 0, "reason": "finish", "finished_at": 1, "moves": [],
    }  # fmt: skip
    old = {"ev": 5, "match": "ACDEFGHJ", "variant": "classic", "seed": "1", "started_at": 0, "winner": None}
    assert p.Result.model_validate({**old, "seats": [seat], "draw": False}).practice
    ranked = {**old, "seats": [seat], "draw": False, "daily": "2026-11-28", "ranked": True}
    assert not p.Result.model_validate(ranked).practice
    raced = {**old, "seats": [seat, {**seat, "seat": 1}], "draw": True}
    assert not p.Result.model_validate(raced).practice
