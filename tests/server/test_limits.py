"""Allowances (server/limits/): the token bucket on its own, the same scenarios on every backend
(this process's buckets, Redis, Redis Cluster) on a clock the test moves, what Redis keeps of them
and what a process does while Redis is away, and the matches opened they count (server/holdings.py)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from fakeclock import FakeClock

from server.errors import Refused
from server.holdings import Holdings
from server.limits import Limiter, Limits
from server.limits.local import FORGET_EVERY, Bucket, Buckets
from server.limits.redis import RedisLimits
from server.redis_link import connect
from tests.conftest import RedisServer

#: Redis counts on its own clock, which runs on while the test speaks to it.
LATE = 0.05

MakeLimiter = Callable[[float, int], Limiter]


def test_a_bucket_takes_its_burst_then_says_how_long_until_the_next() -> None:
    bucket = Bucket(rate=2, burst=3, now=10.0)
    assert [bucket.take(10.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(10.0) == pytest.approx(0.5)  # one token at 2 a second
    assert bucket.take(10.25) == pytest.approx(0.25)  # half of one came back, nothing taken
    assert bucket.take(10.5) == 0.0


def test_a_bucket_refills_no_further_than_its_burst_nor_from_a_clock_gone_back() -> None:
    bucket = Bucket(rate=1, burst=2, now=0.0)
    assert bucket.take(0.0) == bucket.take(0.0) == 0.0
    assert bucket.take(-100.0) == pytest.approx(1.0)  # earlier than its last take: nothing refilled
    assert bucket.take(1000.0) == bucket.take(1000.0) == 0.0  # a long rest refills two, not a thousand
    assert bucket.take(1000.0) > 0


async def test_buckets_keep_one_a_key_and_forget_the_full_ones() -> None:
    now = [0.0]
    buckets = Buckets(rate=1, burst=1, clock=lambda: now[0])
    assert await buckets.take("ann") == 0.0
    assert await buckets.take("ann") == pytest.approx(1.0)
    assert await buckets.take("bob") == 0.0  # a key of its own
    now[0] = 0.5
    buckets.forget_full(now[0])
    assert "ann" in buckets and "bob" in buckets  # half refilled: a new bucket would be fuller
    now[0] = 1.0
    for _ in range(FORGET_EVERY):  # a sweep comes once in so many takes
        await buckets.take("cid")
    assert "ann" not in buckets and "bob" not in buckets and "cid" in buckets


@pytest.fixture(params=["local", "redis", "cluster"])
async def limiter(request: pytest.FixtureRequest) -> AsyncIterator[tuple[MakeLimiter, FakeClock]]:
    """Limiters of one backend (``make(rate, burst)``, each an allowance of its own), and their clock."""
    clock = FakeClock()
    names = iter(range(100))
    limits: Limits
    if request.param == "local":
        yield (lambda rate, burst: Buckets(rate, burst, lambda: clock() / 1000)), clock
        return
    client = await connect(request.getfixturevalue(f"{request.param}_url"))
    limits = RedisLimits(client, clock)
    yield (lambda rate, burst: limits(f"t{next(names)}", rate, burst)), clock
    await client.aclose()


async def test_a_limiter_takes_its_burst_then_says_how_long_until_the_next(
    limiter: tuple[MakeLimiter, FakeClock],
) -> None:
    make, clock = limiter
    opens = make(2, 3)
    assert [await opens.take("ann") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert await opens.take("ann") == pytest.approx(0.5, abs=LATE)  # one token at 2 a second
    clock.advance(250)
    assert await opens.take("ann") == pytest.approx(0.25, abs=LATE)  # half of one came back
    clock.advance(300)
    assert await opens.take("ann") == 0.0
    assert await opens.take("bob") == 0.0  # a key of its own
    assert await make(2, 3).take("ann") == 0.0  # and an allowance


async def test_a_limiter_refills_no_further_than_its_burst(limiter: tuple[MakeLimiter, FakeClock]) -> None:
    make, clock = limiter
    opens = make(1, 2)
    assert await opens.take("ann") == await opens.take("ann") == 0.0
    clock.advance(1_000_000)  # a long rest refills two, not a thousand
    assert await opens.take("ann") == await opens.take("ann") == 0.0
    assert await opens.take("ann") > 0


async def test_a_token_given_back_can_be_taken_again_but_never_past_the_burst(
    limiter: tuple[MakeLimiter, FakeClock],
) -> None:
    make, _ = limiter
    opens = make(1 / 60, 2)
    assert await opens.take("ann") == await opens.take("ann") == 0.0
    await opens.give_back("ann")
    assert await opens.take("ann") == 0.0 and await opens.take("ann") > 0
    for _ in range(5):
        await opens.give_back("ann")
    assert [await opens.take("ann") for _ in range(3)] == [0.0, 0.0, pytest.approx(60.0, abs=LATE)]
    await opens.give_back("bob")  # never took: nothing held, nothing to give back
    assert [await opens.take("bob") for _ in range(3)] == [0.0, 0.0, pytest.approx(60.0, abs=LATE)]


async def test_a_bucket_in_redis_is_one_hash_tagged_key_that_expires_once_full_again(
    shared_url: str,
) -> None:
    """Idle keys vanish; each bucket hashes on its own key, so a cluster spreads them over its masters."""
    client = await connect(shared_url)
    opens = RedisLimits(client, FakeClock())("opens", 1, 3)
    await opens.take("p:ann")
    assert await client.keys("grip:limit:*") == [b"grip:limit:opens:{p:ann}"]
    assert 900 < await client.pttl("grip:limit:opens:{p:ann}") <= 1000  # one token back in a second
    await opens.take("p:ann")
    assert 1900 < await client.pttl("grip:limit:opens:{p:ann}") <= 2000
    await client.aclose()


async def test_while_redis_is_away_a_process_counts_alone_and_says_so_once(
    redis_server: RedisServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A take Redis does not answer is counted in this process's buckets: no error, no stall of minutes."""
    own = RedisServer(tmp_path)
    own.start()
    client = await connect(own.url)
    opens = RedisLimits(client, FakeClock())("opens", 1 / 60, 2)
    assert await opens.take("ann") == await opens.take("ann") == 0.0
    own.stop()
    with caplog.at_level(logging.WARNING, "server.limits.redis"):
        assert [await opens.take("ann") for _ in range(3)] == [0.0, 0.0, pytest.approx(60.0, abs=LATE)]
        await opens.give_back("ann")
        assert await opens.take("ann") == 0.0  # given back here
        assert [r.message.split(" (")[0] for r in caplog.records] == ["Redis does not answer"]
        own.start()  # empty again: a new bucket there
        assert await opens.take("ann") == 0.0
        assert caplog.records[-1].message == "Redis answers again: the allowances are shared again"
    assert await client.keys("grip:limit:*") == [b"grip:limit:opens:{ann}"]
    await client.aclose()
    own.stop()


async def test_a_match_refused_for_its_address_counts_nothing_for_its_identity() -> None:
    """``Holdings.opening`` counts the identity, then the address: refused at the address, the identity's
    token was spent on a match never opened."""
    holdings = Holdings(
        lambda lm: True,
        per_player=0,
        per_address=0,
        lobbies_per_address=0,
        opens=Buckets(rate=1 / 60, burst=2, clock=lambda: 0.0),
        address_opens=Buckets(rate=1 / 60, burst=1, clock=lambda: 0.0),
    )
    keys = Holdings.keys("c1", "ann", "203.0.113.5")
    await holdings.opening(keys)
    with pytest.raises(Refused, match="your address"):
        await holdings.opening(keys)
    await holdings.opening(Holdings.keys("c2", "ann", "203.0.113.6"))  # her second, still hers
