"""Matches a client opens over time, per identity and per address (server/holdings.py, ``opening``).

A practice game created, readied and replaced left 2.8 KB in the SQLite file for good (6.5 KB of
Redis memory), and each create wrote ~48 KB of WAL: a client looping create and replace at its
frame rate did so without end, the quotas counting only the games open at once.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from race import MakeAppT, client, clock_advance, kick
from ratingkit import again, paired, player
from wsclient import WsClient

from server.app import App
from server.match.state import COUNTDOWN_MS

PROXIED = {"proxies": ("127.0.0.1/32",)}
ON_EACH = pytest.mark.parametrize("backend", ["embedded", "redis"], indirect=True)


async def from_address(app: App, address: str) -> WsClient:
    """A connection that counts for ``address`` (through the proxy), with an identity of its own."""
    c = await client(app, additional_headers={"X-Real-IP": address})
    await c.request({"type": "hello"}, "welcome")
    return c


async def practice(c: WsClient) -> dict[str, Any]:
    """Create a practice game and ready it (the one made before is replaced): the answer to the create."""
    await c.send({"type": "create", "seats": 1})
    async with asyncio.timeout(10):
        while (answer := await c.recv())["type"] not in ("created", "error"):
            pass
    if answer["type"] == "created":
        await c.request({"type": "ready"}, "start")
    return answer


@ON_EACH
async def test_opening_past_the_burst_is_refused_per_identity_and_per_address(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    app = await make_app(
        match_burst=3,
        matches_per_hour=60,
        address_match_burst=5,
        address_matches_per_hour=120,
        **PROXIED,
        **backend,
    )
    ann = await from_address(app, "203.0.113.5")
    for _ in range(3):
        assert (await practice(ann))["type"] == "created"
    refused = await practice(ann)
    assert refused["type"] == "error" and refused["code"] == "rate_limited"
    assert "next in 60 s" in refused["message"]
    lobby = await ann.request({"type": "create"}, "error")  # a lobby too
    assert lobby["code"] == "rate_limited"
    quick = await ann.request({"type": "quick"}, "error")  # a quick race too, which it would open
    assert quick["code"] == "rate_limited" and "next in 60 s" in quick["message"]
    # Another identity from another address is not concerned.
    bob = await from_address(app, "203.0.113.6")
    for _ in range(3):
        assert (await practice(bob))["type"] == "created"
    # A new identity from Ann's address has its own share, until the address has opened its own.
    again = await from_address(app, "203.0.113.5")
    for _ in range(2):
        assert (await practice(again))["type"] == "created"
    address = await practice(again)
    assert address["code"] == "rate_limited" and "your address" in address["message"]
    clock_advance(app, 60_000)  # one a minute for Ann, two for the address
    assert (await practice(ann))["type"] == "created"
    assert (await practice(ann))["code"] == "rate_limited"
    assert (await practice(again))["type"] == "created"


async def race_and_rematch(app: App, a: WsClient, b: WsClient, code: str, tokens: list[str]) -> str:
    """Ready, race (Ann finishes, Bob resigns), both ask for a rematch: the rematch's code."""
    await a.send({"type": "ready"})
    await b.send({"type": "ready"})
    await asyncio.gather(a.expect("countdown"), b.expect("countdown"))
    kick(app, code, COUNTDOWN_MS)
    await asyncio.gather(a.expect("start"), b.expect("start"))
    await a.send({"type": "finish"})
    await b.send({"type": "resign"})
    await asyncio.gather(a.expect("result"), b.expect("result"))
    await a.send({"type": "rematch"})
    await b.send({"type": "rematch"})
    rematched = await asyncio.gather(a.expect("rematched"), b.expect("rematched"))
    new = str(rematched[0]["match"])
    for seat, c in enumerate((a, b)):  # into the rematch's seat, as a client does
        await c.request({"type": "resume", "match": new, "token": tokens[seat]}, "resumed")
    return new


@ON_EACH
async def test_rematches_in_a_row_and_practice_between_are_not_refused(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """The defaults: two people racing again and again, from one address (a home), and practising."""
    app = await make_app(**PROXIED, **backend)
    a = await from_address(app, "203.0.113.5")
    b = await from_address(app, "203.0.113.5")
    created = await a.request({"type": "create", "seed": "12345"}, "created")
    joined = await b.request({"type": "join", "match": created["match"]}, "joined")
    code, tokens = created["match"], [created["token"], joined["token"]]
    for _ in range(6):
        code = await race_and_rematch(app, a, b, code, tokens)
    for _ in range(6):
        assert (await practice(a))["type"] == "created"


async def quick_race(apps: list[App], a: WsClient, b: WsClient) -> None:
    """Both join the queue, are paired, ready and finish at once: a draw (their ratings stay together,
    so they are paired again at once). ``apps``: every process (their clocks); the first holds the race."""
    for c in (a, b):
        await c.request({"type": "quick"}, "queued")
    to_a, _ = await paired(a, b)
    for c in (a, b):
        await c.expect("lobby", match=to_a["match"])  # seated: it may get ready
        await c.send({"type": "ready"})
    for c in (a, b):
        await c.expect("countdown")
    for app in apps:
        clock_advance(app, COUNTDOWN_MS)
    kick(apps[0], to_a["match"])
    for c in (a, b):
        await c.expect("start")
    for c in (a, b):
        await c.send({"type": "finish"})
    for c in (a, b):
        await c.expect("result")


async def quick(c: WsClient) -> dict[str, Any]:
    """Ask for a quick race: the answer (``queued`` or ``error``)."""
    await c.send({"type": "quick"})
    async with asyncio.timeout(10):
        while (answer := await c.recv())["type"] not in ("queued", "error"):
            pass
    return answer


async def refused_quick(c: WsClient, whose: str = "you have") -> int:
    """A ``quick`` refused ``rate_limited`` (``whose`` allowance): the seconds it says to wait."""
    refused = await quick(c)
    assert refused["type"] == "error" and refused["code"] == "rate_limited", refused
    said = re.fullmatch(f"{whose} opened a lot of games lately: the next in ([0-9]+) s", refused["message"])
    assert said is not None, refused
    return int(said[1])


@ON_EACH
async def test_a_pair_racing_quick_races_again_and_again_is_refused_past_its_burst(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """Two identities paired, racing and queueing again every few seconds opened a match each time
    (its log, its result, two ratings) without end: the queue counted none of them."""
    app = await make_app(
        match_burst=3,
        matches_per_hour=60,
        address_match_burst=7,
        address_matches_per_hour=120,
        rate_per_s=1000.0,
        burst=1000,
        **PROXIED,
        **backend,
    )
    ann, bob = [await from_address(app, "203.0.113.5") for _ in "ab"]
    for _ in range(3):
        await quick_race([app], ann, bob)
    countdowns = 3 * COUNTDOWN_MS // 1000  # the time the test moved on: a token's share back
    for c in (ann, bob):
        assert 60 - countdowns <= await refused_quick(c) <= 60 - countdowns + 1
    # Another identity is not concerned, until its address (the pair's) has opened its own: 6 and 1.
    cat = await from_address(app, "203.0.113.5")
    await cat.request({"type": "quick"}, "queued")
    await refused_quick(await from_address(app, "203.0.113.5"), "your address has")
    dan = await from_address(app, "203.0.113.6")
    await dan.request({"type": "quick"}, "queued")
    await paired(cat, dan)
    clock_advance(app, 60_000)  # one more for each of the pair, two for their address
    await quick_race([app], ann, bob)
    await refused_quick(await from_address(app, "203.0.113.5"), "your address has")


@ON_EACH
async def test_a_player_out_of_allowance_gets_no_place_and_the_one_waiting_races_someone_else(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """Refused at the ``quick``, not at the pairing: nobody is paired with them, so no race is half made."""
    app = await make_app(match_burst=1, quick_pair_every_s=0, rate_per_s=1000.0, burst=1000, **backend)
    (ann, _), (bob, bob_id), (cat, _) = [await player(app, n) for n in ("Ann", "Bob", "Cat")]
    assert (await practice(ann))["type"] == "created"  # her one match for now
    await bob.request({"type": "quick"}, "queued")
    assert await refused_quick(ann) == 30  # 120 an hour
    await app.quick.pair_now()
    assert list(await app.store.queue_places([bob_id["player"]])) == [bob_id["player"]]  # waits on, unpaired
    await cat.request({"type": "quick"}, "queued")
    await app.quick.pair_now()
    to_bob, to_cat = await paired(bob, cat)
    assert to_bob["match"] == to_cat["match"]
    assert bob.received.count(to_bob) == 1 and not any(m["type"] == "paired" for m in ann.received)


@ON_EACH
async def test_quick_races_at_a_persons_pace_with_practice_between_are_never_refused(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """The defaults: 30 quick races in an hour, a practice game between each two and the queue joined
    and left before each. Back to back with no pause, they are refused past the burst."""
    app = await make_app(rate_per_s=1000.0, burst=1000, **PROXIED, **backend)
    ann, bob = [await from_address(app, "203.0.113.5") for _ in "ab"]
    for _ in range(30):
        await ann.request({"type": "quick"}, "queued")
        await ann.request({"type": "quick_cancel"}, "unqueued")  # gives back what the place took
        await quick_race([app], ann, bob)
        assert (await practice(ann))["type"] == "created"
        clock_advance(app, 120_000)
    raced = 0
    while raced < 30 and (answer := await quick(ann))["type"] == "queued":
        await ann.request({"type": "quick_cancel"}, "unqueued")
        await quick_race([app], ann, bob)
        raced += 1
    # The burst (20), and two more: one refills in 30 s, and each race's countdown moved the clock 3 s.
    assert answer["code"] == "rate_limited" and raced == 22


async def test_quick_races_are_counted_where_the_racer_is_whichever_process_pairs(
    make_app: MakeAppT, shared_url: str
) -> None:
    """Each racer's process counts their quick races (it knows their address); a third one pairs."""
    shared = {"store_url": shared_url, "bus_url": shared_url, "rate_per_s": 1000.0, "burst": 1000}
    limits = {"match_burst": 2, "matches_per_hour": 60}
    one, two = [await make_app(**shared, **limits, quick_pair_every_s=0) for _ in "12"]
    pairing = await make_app(**shared)  # the only one that pairs: nobody races there
    (ann, _), (bob, _), (cat, _) = (
        await player(one, "Ann"),
        await player(two, "Bob"),
        await player(two, "Cat"),
    )
    for _ in range(2):
        await quick_race([one, two, pairing], ann, bob)
    for c in (ann, bob):
        assert 50 < await refused_quick(c) <= 60
    await cat.request({"type": "quick"}, "queued")
    clock_advance(one, 60_000)
    await ann.request({"type": "quick"}, "queued")
    await paired(ann, cat)


@ON_EACH
async def test_a_place_left_unpaired_gives_back_what_it_counted(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """Taken over by another tab, replaced by a new ``quick``, or dropped with its connection: a place
    that was never paired opened nothing. The races themselves count."""
    app = await make_app(match_burst=2, matches_per_hour=60, rate_per_s=1000.0, burst=1000, **backend)
    (ann, ann_id), (bob, _) = await player(app, "Ann"), await player(app, "Bob")
    for _ in range(5):
        tab = await again(app, ann_id)
        await ann.request({"type": "quick"}, "queued")
        await tab.request({"type": "quick"}, "queued")
        await ann.expect("unqueued", reason="elsewhere")
        await tab.request({"type": "quick", "time_limit_s": 600}, "queued")
        await tab.close()
        async with asyncio.timeout(5):
            while app.quick.waiting:
                await asyncio.sleep(0.01)
    for _ in range(2):
        await quick_race([app], ann, bob)
    await refused_quick(ann)


async def test_processes_on_one_redis_count_one_allowance_per_identity_and_per_address(
    make_app: MakeAppT, shared_url: str
) -> None:
    """Each process counted the matches opened with it alone: a client going round N processes (as a
    load balancer sends it) opened N bursts."""
    shared = {"store_url": shared_url, "bus_url": shared_url, **PROXIED}
    limits = {
        "match_burst": 2,
        "matches_per_hour": 60,
        "address_match_burst": 3,
        "address_matches_per_hour": 60,
    }
    one, two = [await make_app(**shared, **limits) for _ in "12"]
    ann = await client(one, additional_headers={"X-Real-IP": "203.0.113.5"})
    welcome = await ann.request({"type": "hello"}, "welcome")
    ann_two = await client(two, additional_headers={"X-Real-IP": "203.0.113.5"})
    await ann_two.request({"type": "hello", "player": welcome["player"], "key": welcome["key"]}, "welcome")
    assert (await practice(ann))["type"] == "created"
    assert (await practice(ann_two))["type"] == "created"  # her burst, over both
    for c in (ann_two, ann):
        refused = await practice(c)
        assert refused["type"] == "error" and refused["code"] == "rate_limited", refused
        assert "you have opened" in refused["message"]
    assert (await practice(await from_address(two, "203.0.113.5")))[
        "type"
    ] == "created"  # the address's third
    address = await practice(await from_address(one, "203.0.113.5"))
    assert address["code"] == "rate_limited" and "your address" in address["message"]
