"""Player statistics and head-to-head records, checked against the stored results."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from fakeclock import FakeClock
from race import MakeAppT, client, greedy, kick
from wsclient import Msg, WsClient

from server.app import App
from server.match.state import COUNTDOWN_MS
from server.stats import streaks

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
    """The figures from the stored results, counted the plain way."""
    by_variant: dict[str, list[Msg]] = {}
    h2h: dict[str, Counter[str]] = {}
    for r in results:
        me = next(s for s in r["seats"] if s["player"] == player)
        by_variant.setdefault(r["variant"], []).append(me)
        if len(r["seats"]) == 2:
            other = next(s for s in r["seats"] if s is not me)
            h2h.setdefault(other["player"], Counter())[
                "draws" if r["draw"] else "wins" if r["winner"] == me["seat"] else "losses"
            ] += 1
    return {
        "variants": {
            v: {
                "played": len(seats),
                "wins": sum(s["score"] == 0 for s in seats),
                "mean_score": sum(s["score"] for s in seats) / len(seats),
                "best_score": min(s["score"] for s in seats),
                "mean_on_grid": sum(s["on_grid"] for s in seats) / len(seats),
                "mean_complete": sum(s["complete"] for s in seats) / len(seats),
                "rated": Counter(
                    s["rating"] for s in seats if s["rating"] in ("brilliant", "excellent", "good")
                ),
            }
            for v, seats in by_variant.items()
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
        v["variant"]: {
            "played": v["played"],
            "wins": v["wins"],
            "mean_score": v["mean_score"],
            "best_score": v["best_score"],
            "mean_on_grid": v["mean_on_grid"],
            "mean_complete": v["mean_complete"],
            "rated": Counter({k: n for k, n in v["ratings"].items() if n}),
        }
        for v in figures["variants"]
    }
    assert got == expected["variants"]
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
