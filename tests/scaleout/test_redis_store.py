"""The Redis append script: conditional on the last ev, seqs once each, and the rebase of a lone move."""

from __future__ import annotations

import pytest

from server.match.events import Connected, Ended
from server.stats import Totals, fold
from server.store import Conflict
from server.store.redis import FINISHED_TTL_S, UNDECIDED_TTL_S, RedisStore, match_keys
from tests.store_events import moved, opening, result

M = "ACDEFGHJ"


@pytest.fixture
async def store(shared_url: str) -> RedisStore:
    """On a single Redis and on a cluster: the script is the same, its keys on one slot."""
    store = await RedisStore.connect(shared_url)
    await store.append(M, 0, opening(M))  # ev 1, 2
    await store.append(M, 2, [moved(3, 0, 1)])
    return store


async def evs(store: RedisStore) -> list[tuple[int, str, int]]:
    return [(e.ev, e.kind, getattr(e, "seat", -1)) for e in await store.events(M)]


async def test_a_stale_append_conflicts_and_writes_nothing(store: RedisStore) -> None:
    with pytest.raises(Conflict):
        await store.append(M, 2, [moved(3, 1, 1)])
    assert await evs(store) == [(1, "opened", -1), (2, "seated", 0), (3, "moved", 0)]
    await store.close()


async def test_a_seq_is_accepted_once(store: RedisStore) -> None:
    with pytest.raises(Conflict):
        await store.append(M, 3, [moved(4, 0, 1)])  # seq 1 of seat 0 again
    await store.close()


async def test_a_lone_move_is_rebased_past_the_other_seats_moves(store: RedisStore) -> None:
    await store.append(M, 3, [Connected(ev=4, at=4, seat=1, conn="x")])
    shift = await store.append(M, 2, [moved(3, 1, 1)], rebase=True)  # decided before ev 3 and 4
    assert shift == 2
    assert (await evs(store))[-1] == (5, "moved", 1)
    assert (await store.events(M, 4))[0].ev == 5  # renumbered inside the stored body too
    await store.close()


async def test_no_rebase_past_the_movers_own_events_or_an_end(store: RedisStore) -> None:
    with pytest.raises(Conflict):  # seat 0's own move came first: its seq 2 was decided on a stale game
        await store.append(M, 2, [moved(3, 0, 2)], rebase=True)
    await store.append(M, 3, [Ended(ev=4, at=4, seat=1, reason="resign", score=72)])
    with pytest.raises(Conflict):  # the match may be over: decide again
        await store.append(M, 3, [moved(4, 0, 2)], rebase=True)
    assert await store.append(M, 4, [moved(5, 0, 2)], rebase=True) == 0
    await store.close()


async def test_an_undecided_matchs_keys_expire_too(store: RedisStore) -> None:
    """A lobby nobody starts, a match every process died under: their keys do not stay for good."""
    await store.append(M, 3, [moved(4, 1, 1)])
    events, meta, _, seat0, seat1, _, _ = match_keys(M)
    ttls = [await store._redis.ttl(key) for key in (events, meta, seat0, seat1)]
    assert all(0 < ttl <= UNDECIDED_TTL_S for ttl in ttls), ttls
    assert UNDECIDED_TTL_S < FINISHED_TTL_S
    await store.close()


async def test_a_log_that_lost_events_says_so(store: RedisStore) -> None:
    """A writer ahead of the log (Redis back from an older snapshot) must reload, not catch up."""
    with pytest.raises(Conflict) as ahead:
        await store.append(M, 5, [moved(6, 0, 3)])  # the log ends at 3
    assert ahead.value.behind
    with pytest.raises(Conflict) as gap:  # rebased past nothing, but seat 0's seq 2 is missing
        await store.append(M, 3, [moved(4, 0, 3)], rebase=True)
    assert gap.value.behind
    with pytest.raises(Conflict) as stale:
        await store.append(M, 2, [moved(3, 1, 1)])
    assert not stale.value.behind  # only behind the log: catching up mends it
    assert [ev for ev, _, _ in await evs(store)] == [1, 2, 3]
    await store.close()


async def test_a_player_of_an_earlier_version_gets_totals_from_their_results(shared_url: str) -> None:
    """Their results were indexed under ``grip:player:<id>:results``, with no totals beside it."""
    store = await RedisStore.connect(shared_url)
    played = [result(m, ["ann", "bob"], [3 + i, 9], 1000 + i) for i, m in enumerate(("ACDEFGHJ", "CDEFGHJK"))]
    played.append(result("DEFGHJKM", ["ann"], [40], 1005))
    for r in played:
        await store._redis.set(match_keys(r.match)[2], r.model_dump_json())
        for seat in r.seats:
            assert seat.player is not None
            await store._redis.zadd(f"grip:player:{seat.player}:results", {r.match: r.decided_at})
    ann = await store.totals("ann")
    assert ann == fold("ann", played) and ann.games == 3
    assert [r.match for r in await store.player_results("bob")] == ["CDEFGHJK", "ACDEFGHJ"]
    assert (await store.totals("bob")).games == 2
    assert not await store._redis.exists("grip:player:ann:results", "grip:player:bob:results")
    assert await store.totals("ann") == ann  # moved once
    assert await store.totals("cid") == Totals()  # nobody: nothing written
    await store.close()
