"""The list of live races over real websockets: on every backend, and the same on two processes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from counting import count_calls
from matchsim import Sim
from race import MakeAppT, client
from ratingkit import player, queue, start_friendly, start_quick
from wsclient import TIMEOUT, Msg, WsClient

from server import live_races
from server.app import App
from server.engine import Game
from server.live import LiveMatch
from server.live_races import WRITE_SLICE, Follower, LiveRaces, listed, top
from server.match import Duplicate, Match
from server.protocol import CODE_ALPHABET, CODE_LENGTH, LIVE_LIMIT, Live, LiveRace, LiveRacer, encode, now_ms
from server.store import Store, open_store

Backend = dict[str, str]
FAST: dict[str, Any] = {"rate_per_s": 1000.0, "burst": 1000, "live_every_s": 0.05}


async def listing(follower: WsClient, condition: Any, timeout: float = TIMEOUT) -> Msg:
    """The next ``live`` the follower is sent that satisfies ``condition``."""
    while True:
        msg = await follower.expect("live", timeout)
        if condition(msg):
            return msg


async def quick_race(app: App) -> tuple[WsClient, WsClient, str]:
    (ann, _), (bob, _) = await player(app, "Ann"), await player(app, "Bob")
    await queue(ann)
    await queue(bob)
    return ann, bob, await start_quick(app, ann, bob)


async def test_a_race_is_listed_while_it_is_played_and_its_numbers_follow(
    make_app: MakeAppT, backend: Backend
) -> None:
    app = await make_app(**FAST, **backend)
    follower = await client(app)
    empty = await follower.request({"type": "live"}, "live")
    assert (empty["races"], empty["total"], empty["order"]) == ([], 0, "newest")
    ann, bob, code = await quick_race(app)
    shown = await listing(follower, lambda m: m["total"] == 1)
    [race] = shown["races"]
    assert race["match"] == code and race["rated"] and race["time_limit_s"] == 300
    assert {r["name"] for r in race["racers"]} == {"Ann", "Bob"} and {
        r["rating"] for r in race["racers"]
    } == {1500}
    seat = next(r["seat"] for r in race["racers"] if r["name"] == "Ann")
    await ann.request({"type": "move", "seq": 1, "move": "T"}, "ack")
    moved = await listing(follower, lambda m: m["races"] and m["races"][0]["racers"][seat]["moves"] == 1)
    assert moved["total"] == 1
    # a private race, and a race nobody plays in yet, stay off the list
    (cat, _), (dan, _) = await player(app, "Cat"), await player(app, "Dan")
    await start_friendly(app, cat, dan, private=True)
    await cat.request({"type": "move", "seq": 1, "move": "T"}, "ack")
    await ann.request({"type": "move", "seq": 2, "move": "T"}, "ack")
    later = await listing(follower, lambda m: m["races"][0]["racers"][seat]["moves"] == 2)
    assert [r["match"] for r in later["races"]] == [code]
    for c in (ann, bob):
        await c.send({"type": "finish"})
    await listing(follower, lambda m: m["total"] == 0)


async def test_the_list_is_the_same_on_every_process(make_app: MakeAppT, shared_url: str) -> None:
    one = await make_app(store_url=shared_url, bus_url=shared_url, **FAST)
    two = await make_app(store_url=shared_url, bus_url=shared_url, **FAST)
    here, there = await client(one), await client(two)
    for f in (here, there):
        await f.request({"type": "live", "order": "closest"}, "live")
    ann, bob, code = await quick_race(one)
    for f in (here, there):
        assert [r["match"] for r in (await listing(f, lambda m: m["total"] == 1))["races"]] == [code]
    await ann.request({"type": "move", "seq": 1, "move": "T"}, "ack")
    seen = [
        await listing(f, lambda m: sum(r["moves"] for r in m["races"][0]["racers"]) == 1)
        for f in (here, there)
    ]
    assert seen[0]["races"] == seen[1]["races"]
    await there.send({"type": "live_stop"})
    for c in (ann, bob):
        await c.send({"type": "finish"})
    await listing(here, lambda m: m["total"] == 0)
    assert two.live_races.followers == {}


def test_what_is_listed_and_in_which_order() -> None:
    def race(match: str, started: int, lefts: tuple[int, int]) -> LiveRace:
        racers = [
            LiveRacer(seat=n, name="x", rating=None, leftover=left, moves=0, finished=False)
            for n, left in enumerate(lefts)
        ]
        return LiveRace(
            match=match,
            variant="classic",
            time_limit_s=300,
            rated=False,
            started_at=started,
            ends_at=0,
            racers=racers,
        )

    a, b, c = "AAAAAAAA", "CCCCCCCC", "DDDDDDDD"
    races = [
        race(a, 1, (10, 50)).model_dump(),
        race(b, 3, (30, 40)).model_dump(),
        race(c, 2, (20, 21)).model_dump(),
    ]
    assert [r["match"] for r in top(races, "newest", 3)] == [b, c, a]
    assert [r["match"] for r in top(races, "closest", 3)] == [c, b, a]
    assert [r["match"] for r in top(races, "closest", 2)] == [c, b]

    def match(seats: int = 2, **options: Any) -> Match:
        events = Match.open(
            "34679ACD", variant="classic", seed="1", time_limit_s=300, seats=seats, name="a", token="t",
            player=None, now=0, **options,
        )  # fmt: skip
        return Match.from_events(events)

    assert listed(match())
    assert not listed(match(private=True))
    assert not listed(match(daily="2026-01-01", ranked=True))
    assert not listed(match(seats=1, practice=True))


class Seated:
    """A racer's connection, as far as the list asks: that there is one."""

    id, version = "conn", 2


async def test_a_write_of_many_listings_lets_moves_run_between_slices(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'grip.db'}")
    live = LiveRaces(store, now_ms, 2.0)
    matches = []
    for n in range(2 * WRITE_SLICE + 1):
        sim = Sim()
        sim.start()
        sim.match.id = "".join(CODE_ALPHABET[(n >> (3 * i)) % len(CODE_ALPHABET)] for i in range(CODE_LENGTH))
        sim.move(0, 1, "T")
        lm = LiveMatch(sim.match)
        lm.seat(0, Seated())  # type: ignore[arg-type]
        live.applied(lm, sim.log[-1])
        matches.append(lm)
    turns, written = [0], []
    real = store.list_races

    async def counted(races: list[LiveRace], stale: list[str]) -> None:
        written.append((len(races), turns[0]))
        matches[-1].match.status = "finished"  # decided meanwhile: its listing was taken off
        await real(races, stale)

    async def loop_turns() -> None:
        while True:
            turns[0] += 1
            await asyncio.sleep(0)

    store.list_races = counted  # type: ignore[method-assign]
    ticker = asyncio.create_task(loop_turns())
    try:
        await live.write()
    finally:
        ticker.cancel()
    assert [n for n, _ in written] == [WRITE_SLICE, WRITE_SLICE]  # the last one was decided meanwhile
    assert written[0][1] < written[1][1]  # other tasks ran in between
    listed_now = [LiveRace.model_validate_json(raw) for raw in await store.live_races()]
    assert len(listed_now) == 2 * WRITE_SLICE and all(r.racers[0].moves == 1 for r in listed_now)
    await store.close()


def test_a_listing_shows_applied_moves_and_leaves_a_decided_one_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sim = Sim()
    sim.start()
    sim.move(0, 1, "T")
    plays = [0]
    real = Game.play

    def play(game: Game, move: Any) -> Any:
        plays[0] += 1
        return real(game, move)

    monkeypatch.setattr(Game, "play", play)
    decision = sim.match.decide_move(0, 2, "T", sim.now)  # awaiting the store
    assert [(r.moves, r.leftover) for r in live_races.listing(sim.match).racers] == [(1, 72), (0, 72)]
    assert not isinstance(decision, Duplicate)
    sim.apply(decision)
    assert plays[0] == 1  # the listing did not take the decided move back to play it again
    assert [r.moves for r in live_races.listing(sim.match).racers] == [2, 0]


class Listener:
    """A connection following the list, as far as the list asks: an id, and what it is sent."""

    def __init__(self, id: str, sent: list[bytes]) -> None:
        self.id, self.send = id, sent.append


async def list_many(store: Store, now: int, listed: int) -> None:
    await store.list_races(
        [
            LiveRace(
                match="".join(CODE_ALPHABET[(n >> (3 * i)) % len(CODE_ALPHABET)] for i in range(CODE_LENGTH)),
                variant="classic", time_limit_s=300, rated=False, started_at=now - n, ends_at=now + 300_000,
                racers=[LiveRacer(seat=s, name="x", rating=None, leftover=40 + s * (n % 7), moves=n, finished=False)
                        for s in (0, 1)],
            )
            for n in range(listed)
        ]
    )  # fmt: skip


async def test_a_refresh_makes_models_of_the_pages_races_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With thousands listed, a model for each listing read held the event loop for a fifth of a second
    every ``live_every_s`` while anyone followed the list (docs/benchmarks.md, "Loads nobody ran")."""
    store = await open_store(f"sqlite:///{tmp_path / 'grip.db'}")
    now = now_ms()
    listed = 2_000
    await list_many(store, now, listed)
    built = count_calls(monkeypatch, LiveRace, "model_validate")
    built_json = count_calls(monkeypatch, LiveRace, "model_validate_json")
    live = LiveRaces(store, now_ms, 2.0)
    pages: dict[str, list[bytes]] = {"newest": [], "closest": []}
    for order, sent in pages.items():
        live.followers[order] = Follower(Listener(order, sent), order, 20)  # type: ignore[arg-type]
    await live.refresh()
    newest, closest = (json.loads(sent[0]) for sent in pages.values())
    assert newest["total"] == closest["total"] == listed
    assert [r["started_at"] for r in newest["races"]] == [now - n for n in range(20)]
    assert {r["racers"][1]["leftover"] - r["racers"][0]["leftover"] for r in closest["races"]} == {0}
    assert built[0] + built_json[0] <= 2 * LIVE_LIMIT  # the longest page's races, not the 2,000 listed
    await store.close()


async def test_followers_of_every_page_length_cost_one_page_of_models_an_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page of each length (1 to 100) was built from models of its own: a client's to multiply.

    Each order's races become models once, as deep as the longest page; each
    page is their JSON joined, byte for byte what encoding a ``Live`` gives.
    """
    store = await open_store(f"sqlite:///{tmp_path / 'grip.db'}")
    now = now_ms()
    await list_many(store, now, 500)
    built = count_calls(monkeypatch, LiveRace, "model_validate")
    live = LiveRaces(store, now_ms, 2.0)
    sent: dict[tuple[str, int], list[bytes]] = {}
    for order in ("newest", "closest"):
        for limit in range(1, 101):
            pages = sent[order, limit] = []
            live.followers[f"{order}{limit}"] = Follower(Listener(f"{order}{limit}", pages), order, limit)  # type: ignore[arg-type]
    await live.refresh()
    assert built[0] == 2 * 100  # not 2 * (1 + 2 + ... + 100)
    listings, _ = live_races.current(await store.live_races(), now)
    for (order, limit), pages in sent.items():
        shown = [LiveRace.model_validate(r) for r in top(listings, order, limit)]  # type: ignore[arg-type]
        assert pages == [encode(Live(order=order, races=shown, total=500))]  # type: ignore[arg-type]
    await store.close()


async def test_asking_for_every_page_between_two_reads_ranks_each_order_once(
    make_app: MakeAppT, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranked only as deep as the pages followed, each ``live`` asking for a longer page ranked the
    whole list again: a cheap frame, 3 ms of the loop at 10,000 races (docs/benchmarks.md, "The live
    list's pages"). Now the list is read once a period and each order ranked once a read, whatever
    the followers ask."""
    app = await make_app(rate_per_s=1000.0, burst=1000, live_every_s=3600.0, **backend)
    listed = 300
    await list_many(app.store, app.clock(), listed)
    reads = count_calls(monkeypatch, app.store, "live_top")
    ranks = count_calls(monkeypatch, live_races, "ranked")
    c = await client(app)
    for limit in range(1, LIVE_LIMIT + 1):
        for order in ("newest", "closest"):
            page = await c.request({"type": "live", "order": order, "limit": limit}, "live", order=order)
            assert (len(page["races"]), page["total"]) == (limit, listed)
    assert (reads[0], ranks[0]) == (1, 2)
    listings, _ = live_races.current(await app.store.live_races(), app.clock())
    shown = [LiveRace.model_validate(r) for r in top(listings, "closest", LIVE_LIMIT)]
    assert page == json.loads(encode(Live(order="closest", races=shown, total=listed)))
