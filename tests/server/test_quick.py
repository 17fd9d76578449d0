"""Quick races over real websockets, on every backend: the queue, the pairing, the ready rule."""

from __future__ import annotations

import asyncio

import pytest
from race import MakeAppT, client, kick
from ratingkit import again, paired, player, queue, rated_result, replayed, start_quick, store_result

from server.app import App
from server.match.state import COUNTDOWN_MS, READY_WITHIN_MS
from server.quick import NO_SHOW_BAR_MS

Backend = dict[str, str]


@pytest.fixture
async def app(make_app: MakeAppT, backend: Backend) -> App:
    return await make_app(rate_per_s=1000.0, burst=1000, **backend)


@pytest.fixture
async def staged(make_app: MakeAppT, backend: Backend) -> App:
    """A server that pairs only when the test says (``app.quick.pair_now()``): the queue is staged first."""
    return await make_app(rate_per_s=1000.0, burst=1000, quick_pair_every_s=0, **backend)


def advance(app: App, ms: int) -> None:
    app.clock.advance(ms)  # type: ignore[attr-defined]


async def test_two_strangers_are_paired_into_a_rated_race_on_a_fresh_deal(app: App) -> None:
    (ann, ann_id), (bob, bob_id) = await player(app, "Ann"), await player(app, "Bob")
    queued = await queue(ann)
    assert (queued["variant"], queued["time_limit_s"], queued["rating"]) == ("classic", 300, 1500)
    await queue(bob)
    code = await start_quick(app, ann, bob)
    lobby = await ann.seen("lobby", status="lobby")
    assert lobby["rated"] and lobby["quick"] and lobby["ready_by"] is not None
    assert [s["rating"] for s in lobby["seats"]] == [1500, 1500]
    m = app.hub.live[code].match
    assert (
        not m.chosen
        and m.time_limit_s == 300
        and {s.player for s in m.seats if s}
        == {
            ann_id["player"],
            bob_id["player"],
        }
    )
    await ann.request({"type": "resign"}, "finished")
    await bob.send({"type": "finish"})  # a resignation loses, whatever the scores
    result = await bob.expect("result")
    assert result["rated"]
    rated = await bob.expect("rated")
    mine = {s["player"]: s for s in rated["seats"]}
    assert mine[bob_id["player"]]["after"] > 1500 > mine[ann_id["player"]]["after"]
    assert (await ann.expect("rated"))["seats"] == rated["seats"]
    ratings = await bob.request({"type": "ratings"}, "ratings")
    [classic] = ratings["variants"]
    assert (classic["games"], classic["wins"], classic["rating"]) == (1, 1, mine[bob_id["player"]]["after"])
    assert [h["match"] for h in classic["history"]] == [code]
    assert await app.store.rating_log("classic") == [code]
    assert await replayed(app.store, "classic") == {
        pl: r
        for pl in (ann_id["player"], bob_id["player"])
        if (r := (await app.store.ratings(pl))["classic"])
    }
    await queue(ann)  # the race is over: free to race again


async def test_a_paired_racer_who_never_readies_is_dropped_and_the_other_goes_back_to_the_head(
    app: App,
) -> None:
    (ann, _), (bob, _), (cat, _) = [await player(app, n) for n in ("Ann", "Bob", "Cat")]
    first = await queue(ann)
    advance(app, 1000)
    await queue(bob)
    seated, _ = await paired(ann, bob)
    await ann.send({"type": "ready"})
    await ann.expect("lobby", status="lobby")
    kick(app, seated["match"], READY_WITHIN_MS)
    called_off = await bob.expect("lobby")
    while not called_off["called_off"]:
        called_off = await bob.expect("lobby")
    back = await ann.expect("queued")
    assert back["again"] and back["since"] == first["since"]  # her place: ahead of all who came later
    refused = await bob.request({"type": "quick"}, "error")
    assert refused["code"] == "not_allowed" and "not ready" in refused["message"]
    advance(app, 2000)
    await queue(cat)
    [to_ann, to_cat] = await paired(ann, cat)
    assert (to_ann["seat"], to_cat["seat"]) == (0, 1)  # the longer waiting sits first
    advance(app, NO_SHOW_BAR_MS)
    await queue(bob)


async def test_a_resigner_who_went_home_races_anyone_again_while_the_other_plays_on(app: App) -> None:
    """Her seat's game is over: it no longer counts as a quick race going. A seat still playing does,
    for every connection of its player: nobody holds two quick seats that still play."""
    (ann, ann_id), (bob, bob_id), (cat, _) = [await player(app, n) for n in ("Ann", "Bob", "Cat")]
    await queue(ann)
    await queue(bob)
    first = await start_quick(app, ann, bob)
    refused = await ann.request({"type": "quick"}, "error")  # still playing it
    assert refused["code"] == "not_allowed" and first in refused["message"]
    await ann.request({"type": "resign"}, "finished")
    await ann.send({"type": "leave"})
    await ann.close()  # home, and gone
    ann = await again(app, ann_id)
    await queue(ann)
    bobs_tab = await again(app, bob_id)
    refused = await bobs_tab.request({"type": "quick"}, "error")  # Bob plays on: his seat counts
    assert refused["code"] == "not_allowed" and first in refused["message"]
    await queue(cat)
    second = await start_quick(app, ann, cat)
    assert app.hub.live[first].match.status == "playing"  # undecided: Bob still plays it
    anns_tab = await again(app, ann_id)
    refused = await anns_tab.request({"type": "quick"}, "error")  # the new race is hers, playing
    assert refused["code"] == "not_allowed" and second in refused["message"]
    await cat.request({"type": "resign"}, "finished")
    await queue(cat)  # her game is over too, the race still undecided


async def test_two_connections_of_a_player_hold_one_place(app: App) -> None:
    (tab1, ann), (bob, _) = await player(app, "Ann"), await player(app, "Bob")
    first = await queue(tab1)
    advance(app, 2000)
    tab2 = await again(app, ann)
    second = await queue(tab2)
    assert second["since"] == first["since"]
    assert (await tab1.expect("unqueued"))["reason"] == "elsewhere"
    assert [e.since for e in await app.store.queue_entries(100)] == [first["since"]]
    assert len(app.quick.waiting) == 1
    await queue(bob)
    await paired(tab2, bob)
    assert not [m for m in tab1.received if m["type"] == "paired"]


async def test_cancelling_or_dropping_takes_the_place_out(app: App) -> None:
    (ann, _) = await player(app, "Ann")
    await queue(ann)
    assert (await ann.request({"type": "quick_cancel"}, "unqueued"))["reason"] == "cancelled"
    assert await app.store.queue_entries(100) == []
    await queue(ann)
    await ann.close()
    async with asyncio.timeout(5):
        while await app.store.queue_entries(100):
            await asyncio.sleep(0.01)


async def test_leaving_and_joining_again_goes_to_the_back_of_the_queue(staged: App) -> None:
    app = staged
    (ann, _), (churner, _), (bob, _) = [await player(app, n) for n in ("Ann", "Churner", "Bob")]
    await queue(ann)
    advance(app, 100)
    await queue(churner)
    advance(app, 100)
    await queue(bob)
    for _ in range(5):
        advance(app, 100)
        await churner.request({"type": "quick_cancel"}, "unqueued")
        await queue(churner)
    await app.quick.pair_now()
    await paired(ann, bob)
    assert [e.name for e in await app.store.queue_entries(100)] == ["Churner"]


async def test_the_window_widens_on_the_servers_clock(staged: App) -> None:
    app = staged
    (strong, strong_id), (new, _) = await player(app, "Strong"), await player(app, "New")
    for i in range(6):  # six wins over somebody: far above a newcomer's 1500
        await store_result(app.store, rated_result(strong_id["player"], f"rival{i}", at=1000 + i))
    rating = (await app.store.ratings(strong_id["player"]))["classic"].shown
    assert rating > 1800
    await queue(strong)
    await queue(new)
    await app.quick.pair_now()
    advance(app, 29_000)
    await app.quick.pair_now()
    assert len(await app.store.queue_entries(100)) == 2
    advance(app, 1_000)  # 30 s: anyone
    await app.quick.pair_now()
    await paired(strong, new)


async def test_bad_quick_requests_get_typed_errors(app: App) -> None:
    (ann, _) = await player(app, "Ann")
    for bad in ({"time_limit_s": 200}, {"variant": "chess"}, {"extra": 1}):
        assert (await ann.request({"type": "quick", **bad}, "error"))["code"] == "bad_message"
    anonymous = await client(app)
    refused = await anonymous.request({"type": "quick"}, "error")
    assert refused["code"] == "bad_key"  # quick races are rated: they need an identity


async def test_players_on_two_processes_are_paired_and_race(make_app: MakeAppT, shared_url: str) -> None:
    shared = {"store_url": shared_url, "bus_url": shared_url, "rate_per_s": 1000.0, "burst": 1000}
    one, two = [await make_app(**shared, quick_pair_every_s=0) for _ in "12"]
    pairing = await make_app(**shared)  # the only one that pairs: nobody races there
    (ann, _), (bob, _) = await player(one, "Ann"), await player(two, "Bob")
    await queue(ann)
    await queue(bob)
    to_ann, to_bob = await paired(ann, bob)
    assert to_ann["match"] == to_bob["match"] and {to_ann["seat"], to_bob["seat"]} == {0, 1}
    code = to_ann["match"]
    for c in (ann, bob):
        await c.send({"type": "ready"})
    for c in (ann, bob):
        await c.expect("countdown")
    for app in (one, two):
        advance(app, COUNTDOWN_MS)
    kick(one, code)
    for c in (ann, bob):
        await c.expect("start")
    await ann.request({"type": "move", "seq": 1, "move": "T"}, "ack")
    await bob.expect("progress")  # across the processes
    for app in (one, two):  # each holds the race for its racer
        assert set(app.hub.live[code].seats) == {to_ann["seat"] if app is one else to_bob["seat"]}
    async with asyncio.timeout(5):  # the pairing process opened it, and let it go: it follows no race
        while code in pairing.hub.live:
            await asyncio.sleep(0.01)


async def test_a_resigner_comes_back_on_another_process_and_races_anyone_again(
    make_app: MakeAppT, shared_url: str
) -> None:
    """The other process reads her race from the store: her seat's game is over, Bob's is not."""
    shared = {"store_url": shared_url, "bus_url": shared_url, "rate_per_s": 1000.0, "burst": 1000}
    one = await make_app(**shared)
    two = await make_app(**shared, quick_pair_every_s=0)
    (ann, ann_id), (bob, bob_id) = await player(one, "Ann"), await player(one, "Bob")
    await queue(ann)
    await queue(bob)
    code = await start_quick(one, ann, bob)
    await ann.request({"type": "resign"}, "finished")
    await ann.close()
    ann = await again(two, ann_id)
    await queue(ann)
    refused = await (await again(two, bob_id)).request({"type": "quick"}, "error")
    assert refused["code"] == "not_allowed" and code in refused["message"]
    assert one.hub.live[code].match.status == "playing"


async def test_a_round_reads_and_pairs_the_longest_waiting_window_only(
    make_app: MakeAppT, backend: Backend
) -> None:
    """``quick_window`` places a round, whatever the queue holds: the others wait for the next."""
    app = await make_app(rate_per_s=1000.0, burst=1000, quick_pair_every_s=0, quick_window=2, **backend)
    players = [await player(app, n) for n in ("Ann", "Bob", "Cat", "Dan")]
    for c, _ in players:
        await queue(c)
        advance(app, 100)
    assert [e.name for e in await app.store.queue_entries(3)] == ["Ann", "Bob", "Cat"]
    await app.quick.pair_now()
    await paired(players[0][0], players[1][0])
    assert [e.name for e in await app.store.queue_entries(100)] == ["Cat", "Dan"]
    assert not [m for c, _ in players[2:] for m in c.received if m["type"] == "paired"]
    await app.quick.pair_now()
    await paired(players[2][0], players[3][0])
    assert await app.store.queue_entries(100) == []


async def test_the_queue_window_is_in_waiting_order_and_finds_a_players_place(
    staged: App,
) -> None:
    """Waiting order is ``since``, then player; a place that keeps its time keeps its rank."""
    app = staged
    (ann, ann_id), (bob, bob_id) = await player(app, "Ann"), await player(app, "Bob")
    first = await queue(ann)
    advance(app, 100)
    await queue(bob)
    advance(app, 100)
    await queue(await again(app, ann_id))  # her second tab: her place, its time kept
    assert [e.name for e in await app.store.queue_entries(100)] == ["Ann", "Bob"]
    assert (await app.store.queue_entries(1))[0].since == first["since"]
    found = await app.store.queue_places([bob_id["player"], "nobody", ann_id["player"]])
    assert set(found) == {ann_id["player"], bob_id["player"]}
    assert found[bob_id["player"]].name == "Bob"


async def test_a_redis_queue_without_its_order_is_read_in_order_all_the_same(
    make_app: MakeAppT, redis_url: str
) -> None:
    """A queue written by a version that kept no order (a rolling upgrade): the first read makes it."""
    import redis.asyncio as aioredis

    from server.store.redis_ratings import quick_key

    app = await make_app(store_url=redis_url, bus_url=redis_url, quick_pair_every_s=0)
    for n in ("Ann", "Bob", "Cat"):
        await queue((await player(app, n))[0])
        advance(app, 100)
    r = aioredis.Redis.from_url(redis_url)
    await r.delete(quick_key("order"))
    assert [e.name for e in await app.store.queue_entries(2)] == ["Ann", "Bob"]
    assert await r.zcard(quick_key("order")) == 3
    await r.aclose()
