"""Scale-out over Redis with real processes: one match spread over several servers.

Each test runs ``python -m server --redis URL`` processes against a
throwaway redis-server, and plays through real WebSockets.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import redis.asyncio

from server.bus import open_bus
from server.engine import Game
from server.match.events import Moved, Numbers
from server.store import open_store
from tests.conftest import RedisServer
from tests.processes import ServerProcess
from tests.scaleout.racing import (
    ANSWER_S,
    assert_consecutive,
    fully_degraded,
    healthy,
    healthz,
    play_turns,
    reply,
    running_servers,
    seat_two,
    start,
    wait_for,
)
from tests.server.wsclient import WsClient
from tests.store_events import lose_latest_moves


@pytest.fixture
def servers(shared_url: str) -> Iterator[list[ServerProcess]]:
    """Three server processes on one Redis, and on a Redis Cluster: the same scenarios on both."""
    with running_servers(shared_url, 3) as procs:
        yield procs


async def test_race_across_three_processes(servers: list[ServerProcess]) -> None:
    a, b, created, _ = await seat_two(servers[0].url, servers[1].url)
    spectator = await WsClient.connect(servers[2].url)
    await spectator.send({"type": "watch", "match": created["match"]})
    snapshot = await spectator.expect("watching")
    await start(a, b)
    acks_a, acks_b = await asyncio.gather(play_turns(a, 1, 12), play_turns(b, 1, 9))
    await a.send({"type": "finish"})
    await b.send({"type": "finish"})
    results = [await c.expect("result", timeout=15) for c in (a, b, spectator)]
    assert results[0] == results[1] == results[2]
    result = results[0]
    assert result["seed"] == "1"
    assert [s["moves"] for s in result["seats"]] == [["T"] * 12, ["T"] * 9]
    assert [s["score"] for s in result["seats"]] == [
        acks_a[-1]["view"]["leftover"],
        acks_b[-1]["view"]["leftover"],
    ]
    for client in (a, b, spectator):
        assert_consecutive(client)
    spectated = [m["ev"] for m in spectator.received if m["type"] != "watching"]
    assert spectated[0] == snapshot["ev"] + 1
    # the opponent saw every one of the other's moves as progress, in order
    progress_b = [m["moves"] for m in b.received if m["type"] == "progress" and m["seat"] == 0]
    assert progress_b == list(range(1, 13))


async def test_a_message_the_bus_cannot_handle_is_counted_and_the_reading_goes_on(shared_url: str) -> None:
    """A batch with an event kind this version does not know (a newer process, during a rolling deploy).

    Handling it raises; that used to end the process's only pub/sub reading
    task, silently: no more events from the other processes, and /healthz
    still said the bus was fine.
    """
    with running_servers(shared_url, 2) as procs:
        a, b, created, _ = await seat_two(procs[0].url, procs[1].url)
        await start(a, b)
        newer = await open_bus(shared_url)
        try:
            await newer.publish(f"grip:match:{{{created['match']}}}", '[{"ev":99,"kind":"teleported"}]')
        finally:
            await newer.close()
        await play_turns(a, 1, 1)  # published after it on the same channel
        await b.expect("progress", seat=0, moves=1)
        assert healthz(procs[1]) == (200, {"status": "ok", "bus": True, "store": True})
        assert await asyncio.to_thread(metric, procs[1], "grip_bus_handler_errors_total") == 1


async def test_spectators_on_every_process_see_the_same_boards_held_back(
    servers: list[ServerProcess],
) -> None:
    """Spectator lag is folded from the log: each process holds back and shows the same boards."""
    a, b, created, _ = await seat_two(servers[0].url, servers[1].url)
    code = created["match"]
    spectators = [await WsClient.connect(proc.url) for proc in servers[:2]]
    for spectator in spectators:
        await spectator.request({"type": "watch", "match": code}, "watching")
    await start(a, b)
    acks_b = await play_turns(b, 1, 3)  # 9 of Bob's stock cards out: Ann's to come
    late = await WsClient.connect(servers[2].url)  # a process that had no part in the match yet
    watching = await late.request({"type": "watch", "match": code}, "watching")
    bob = watching["boards"][1]
    assert (bob["progress"]["moves"], bob["moves"], bob["view"]["stock_count"]) == (3, [], 72)
    (ack_a,) = await play_turns(a, 1, 1)  # 3 out: Bob's first turn shows
    await a.send({"type": "finish"})  # then Ann is out: nothing waits for her any more
    finished = await a.expect("finished", seat=0)
    await b.send({"type": "finish"})
    for spectator in (*spectators, late):
        await spectator.expect("result", timeout=15)
        assert_consecutive(spectator)
    shown = [[m for m in s.received if m["type"] == "board"] for s in (*spectators, late)]
    assert shown[0] == shown[1] == shown[2]
    assert [(m["seat"], m["ev"], m["view"]) for m in shown[0]] == [
        (0, ack_a["ev"], ack_a["view"]),
        (1, ack_a["ev"], acks_b[0]["view"]),
        (1, finished["ev"], acks_b[1]["view"]),
        (1, finished["ev"], acks_b[2]["view"]),
    ]


async def test_resume_on_another_process(servers: list[ServerProcess]) -> None:
    a, b, created, _ = await seat_two(servers[0].url, servers[1].url)
    await start(a, b)
    acks = await play_turns(a, 1, 5)
    await a.close()
    moved = await WsClient.connect(servers[2].url)
    await moved.send(
        {"type": "resume", "match": created["match"], "token": created["token"], "last_ev": acks[2]["ev"]}
    )
    resumed = await moved.expect("resumed")
    assert resumed["last_seq"] == 5
    assert resumed["view"] == acks[-1]["view"]
    # the missed events are the ones after last_ev, once, in order (own acks excluded)
    missed = [m["ev"] for m in resumed["missed"]]
    assert missed == sorted(set(missed)) and all(ev > acks[2]["ev"] for ev in missed)
    # a resent, already-acked seq gets the same ack again and is not applied twice
    await moved.send({"type": "move", "seq": 5, "move": "T"})
    again = await moved.expect("ack")
    assert again["view"] == acks[-1]["view"] and again["seq"] == 5
    more = await play_turns(moved, 6, 2)
    assert more[-1]["view"]["moves"] == 7
    await moved.send({"type": "finish"})
    await b.send({"type": "finish"})
    result = await b.expect("result", timeout=15)
    assert result["seats"][0]["moves"] == ["T"] * 7


async def test_kill_9_keeps_every_acked_move(servers: list[ServerProcess]) -> None:
    a, b, created, _ = await seat_two(servers[0].url, servers[1].url)
    await start(a, b)
    acks = await play_turns(a, 1, 8)
    servers[0].kill()
    survivor = await WsClient.connect(servers[2].url)
    await survivor.send(
        {"type": "resume", "match": created["match"], "token": created["token"], "last_ev": 0}
    )
    resumed = await survivor.expect("resumed")
    assert resumed["last_seq"] == len(acks)
    assert resumed["view"] == acks[-1]["view"]
    await survivor.send({"type": "finish"})
    await b.send({"type": "finish"})
    result = await survivor.expect("result", timeout=15)
    assert result["seats"][0]["moves"] == ["T"] * 8


async def test_redis_outage_degrades_then_recovers(aof_redis: RedisServer) -> None:
    procs = [ServerProcess("--redis", aof_redis.url, "--rate", "1000").start() for _ in range(2)]
    try:
        a, b, _, _ = await seat_two(procs[0].url, procs[1].url)
        await start(a, b)
        await play_turns(a, 1, 3)
        aof_redis.stop()
        await wait_for(lambda: fully_degraded(procs[0]) and fully_degraded(procs[1]))
        # a newcomer is told, and keeps the connection
        newcomer = await WsClient.connect(procs[1].url)
        refused = await newcomer.request({"type": "hello", "name": "Cid"}, "error")
        assert refused["code"] == "unavailable"
        for player in (a, b):
            await player.send({"type": "move", "seq": 4 if player is a else 1, "move": "T"})
            refused = await reply(player)
            assert refused["type"] == "rejected" and refused["code"] == "unavailable"
        # keep Redis away a few seconds, checking the processes stay up and say so
        outage_ends = asyncio.get_running_loop().time() + 3
        while asyncio.get_running_loop().time() < outage_ends:
            assert await asyncio.to_thread(lambda: all(healthz(p)[0] == 503 for p in procs))
        aof_redis.start()
        await wait_for(lambda: healthy(procs[0]) and healthy(procs[1]))
        assert (await newcomer.request({"type": "hello", "name": "Cid"}, "welcome"))["name"] == "Cid"
        # the same seq now goes through, and the other process hears of it over pub/sub
        more = await play_turns(a, 4, 2)
        assert more[-1]["view"]["moves"] == 5
        progress = await b.expect("progress")
        while progress["moves"] < 5:
            progress = await b.expect("progress")
        await a.send({"type": "finish"})
        await b.send({"type": "finish"})
        result = await a.expect("result", timeout=15)
        assert result["seats"][0]["moves"] == ["T"] * 5
        assert json.dumps(result) == json.dumps(await b.expect("result", timeout=15))
    finally:
        for proc in procs:
            proc.kill()


async def test_a_write_that_lands_after_its_timeout_reaches_every_process(aof_redis: RedisServer) -> None:
    """Redis frozen: the move times out (``unavailable``), yet Redis runs it once thawed.

    Nobody resends, and no later event would reveal the gap: the others must
    still hear of the move, and of the finish that decides the match.
    """
    procs = [ServerProcess("--redis", aof_redis.url, "--rate", "1000").start() for _ in range(2)]
    try:
        a, b, created, _ = await seat_two(procs[0].url, procs[1].url)
        await start(a, b)
        spectator = await WsClient.connect(procs[1].url)
        await spectator.request({"type": "watch", "match": created["match"]}, "watching")
        await b.send({"type": "finish"})
        await a.expect("finished", timeout=15, seat=1)  # published: Ann's process has it too
        aof_redis.freeze()
        try:
            await a.send({"type": "move", "seq": 1, "move": "T"})
            refused = await reply(a)
            assert refused["type"] == "rejected" and refused["code"] == "unavailable"
        finally:
            aof_redis.thaw()
        # Ann's move landed when Redis came back: Bob and the spectator are told, without any resend.
        progress = await b.expect("progress", timeout=20, seat=0)
        assert progress["moves"] == 1
        await spectator.expect("board", timeout=20, seat=0)
        await a.send({"type": "finish"})
        result = await b.expect("result", timeout=20)
        assert result["seats"][0]["moves"] == ["T"]
        await spectator.expect("result", timeout=20)
    finally:
        for proc in procs:
            proc.kill()


async def test_seats_of_a_killed_process_are_abandoned_after_the_grace(shared_url: str) -> None:
    """kill -9 records no dropped connection: the other processes notice its heartbeat stop."""
    procs = [
        ServerProcess("--redis", shared_url, "--rate", "1000", "--grace-s", "2").start() for _ in range(2)
    ]
    try:
        a, b, _, _ = await seat_two(procs[0].url, procs[1].url)
        await start(a, b)
        await play_turns(a, 1, 2)
        procs[0].kill()
        lobby = await b.expect("lobby", timeout=30)
        assert [s["connected"] for s in lobby["seats"]] == [False, True]
        ended = await b.expect("finished", timeout=15, seat=0)
        assert ended["reason"] == "abandoned"
        await b.send({"type": "finish"})
        result = await b.expect("result", timeout=15)
        assert result["seats"][0]["moves"] == ["T", "T"]
    finally:
        for proc in procs:
            proc.kill()


async def resume(url: str, seated: dict[str, Any], last_seq: int) -> WsClient:
    """Resume a seat on a new connection; its board stands at ``last_seq`` moves."""
    c = await WsClient.connect(url)
    resumed = await c.request(
        {"type": "resume", "match": seated["match"], "token": seated["token"]}, "resumed"
    )
    assert resumed["last_seq"] == last_seq and resumed["view"]["moves"] == last_seq
    return c


async def test_redis_rolled_back_to_an_older_snapshot_reloads_the_match(snapshot_redis: RedisServer) -> None:
    """Redis restarts from a snapshot older than moves it acknowledged: those moves are lost.

    The processes must not wedge on their copies (every append conflicting,
    "busy" for good): each reloads the match from what Redis kept (found at
    the catch-up after pub/sub reconnects, or else at its next append; the
    append's check is tested in test_redis_store.py), closes its connections
    with 1013, and the racers resume onto that board and play on, with the
    same result on both processes.
    """
    redis_db = snapshot_redis
    procs = [ServerProcess("--redis", redis_db.url, "--rate", "1000").start() for _ in range(2)]
    try:
        a, b, created, joined = await seat_two(procs[0].url, procs[1].url)
        await start(a, b)
        await play_turns(a, 1, 2)
        await asyncio.to_thread(lambda: redis.Redis.from_url(redis_db.url).save())
        await play_turns(a, 3, 3)
        redis_db.stop()
        redis_db.start()
        await wait_for(lambda: healthy(procs[0]) and healthy(procs[1]))
        # both processes find out when pub/sub comes back (before anyone writes), and close their lines
        assert await a.closed() == 1013
        assert await b.closed() == 1013
        a = await resume(procs[0].url, created, last_seq=2)  # a's last three turns are gone
        b = await resume(procs[1].url, joined, last_seq=0)
        for player, seq in ((a, 3), (b, 1)):
            await player.send({"type": "move", "seq": seq, "move": "T"})
            ack = await reply(player)
            assert ack["type"] == "ack" and ack["view"]["moves"] == seq
        await a.send({"type": "finish"})
        await b.send({"type": "finish"})
        result = await a.expect("result", timeout=15)
        assert [s["moves"] for s in result["seats"]] == [["T"] * 3, ["T"]]
        assert json.dumps(result) == json.dumps(await b.expect("result", timeout=15))
    finally:
        for proc in procs:
            proc.kill()


async def test_a_late_reload_notice_leaves_a_copy_in_step_with_the_store(snapshot_redis: RedisServer) -> None:
    """A reload notice is checked against the store, not obeyed: here the log holds every event applied.

    After a rollback each process can find the loss itself and reload, then
    hear the other's notice; and a notice the bus refused at first is offered
    again up to two minutes later. Either way it can arrive after the racers
    resumed onto the reloaded match: reloading again then closed them with
    1013 once more (the rollback test above failed on that now and then).
    """
    procs = [ServerProcess("--redis", snapshot_redis.url, "--rate", "1000").start() for _ in range(2)]
    try:
        a, b, created, _ = await seat_two(procs[0].url, procs[1].url)
        await start(a, b)
        await play_turns(a, 1, 2)
        client = redis.asyncio.Redis.from_url(snapshot_redis.url)
        match_channel = f"grip:match:{{{created['match']}}}"
        await client.publish(match_channel, "reload 0badcafe")  # as another process words it
        # a message for everyone, after the notice on the same channel: once it is here, the notice was read
        await client.publish(match_channel, 'tell 0badcafe {"type":"marker"}')
        await client.aclose()
        for player in (a, b):
            await player.expect("marker")
        await play_turns(a, 3, 1)
        await play_turns(b, 1, 1)
    finally:
        for proc in procs:
            proc.kill()


async def test_a_resume_onto_a_log_that_lost_its_end_is_answered_not_spun_on(redis_url: str) -> None:
    """Redis lost the end of a log the process holds (AOF written each second, then a crash).

    A resume read the log again until it reached the copy here: forever,
    with no pause. It now answers ``unavailable`` after a few reads, and the
    copy is checked against the log meanwhile: reloaded, so the next resume
    goes on from what the store kept.
    """
    with running_servers(redis_url, 1) as (proc,):
        a, b, created, _ = await seat_two(proc.url, proc.url)
        await start(a, b)
        await play_turns(a, 1, 3)
        await lose_latest_moves(redis_url, created["match"], seat=0, n=2)
        again = await WsClient.connect(proc.url)
        resume = {"type": "resume", "match": created["match"], "token": created["token"], "last_ev": 0}
        refused = await again.request(resume, "error")
        assert refused["code"] == "unavailable"
        assert await a.closed() == 1013  # the copy was reloaded from the log
        resumed = await again.request(resume, "resumed")
        assert resumed["last_seq"] == 1 and resumed["view"]["moves"] == 1


def metric(proc: ServerProcess, name: str) -> float:
    """A counter's value on ``/metrics`` (0 while absent)."""
    with urllib.request.urlopen(f"{proc.http}/metrics", timeout=ANSWER_S) as response:
        text = response.read().decode()
    return sum(float(line.split()[1]) for line in text.splitlines() if line.startswith(name + " "))


async def test_a_tick_that_raises_keeps_the_timer_going(redis_url: str) -> None:
    """The countdown's end cannot be stored for a while: the store answers with an error of its own.

    Not "unavailable" (the store's way of saying it did not answer), so the
    tick let it out, and with it the match's timer for good: the race never
    started. It is now logged, counted, and tried again.
    """
    with running_servers(redis_url, 1) as (proc,):
        a, b, created, _ = await seat_two(proc.url, proc.url)
        client = redis.asyncio.Redis.from_url(redis_url)
        events_key = f"grip:match:{{{created['match']}}}:events"
        await a.send({"type": "ready"})
        await b.send({"type": "ready"})
        await a.expect("countdown")
        kept = await client.dump(events_key)
        await client.delete(events_key)
        await client.set(events_key, "not a stream")  # every append now answers WRONGTYPE
        await wait_for(lambda: metric(proc, "grip_tick_errors_total") >= 1)
        await client.delete(events_key)
        await client.restore(events_key, 0, kept)
        await client.aclose()
        await a.expect("start", timeout=10)
        await b.expect("start", timeout=10)


async def both_ask_for_a_rematch(
    procs: list[ServerProcess],
) -> tuple[WsClient, WsClient, dict[str, Any], dict[str, Any]]:
    """Ann on the first process, Bob on the second race, then ask for a rematch: Bob's process decides it."""
    a, b, created, joined = await seat_two(procs[0].url, procs[1].url)
    await start(a, b)
    for racer in (a, b):
        await racer.send({"type": "finish"})
    for racer in (a, b):
        await racer.expect("result", timeout=15)
    await a.send({"type": "rematch"})
    await b.expect("lobby", timeout=15)  # a's wish is known on b's process: b's rematch decides it there
    await b.send({"type": "rematch"})
    return a, b, created, joined


async def both_resume(
    a: WsClient, b: WsClient, code: str, created: dict[str, Any], joined: dict[str, Any]
) -> None:
    """Each racer resumes the rematch ``code`` at once: it must exist (``resumed``, not ``not_found``)."""
    await a.send({"type": "resume", "match": code, "token": created["token"]})
    answer = await a.recv()
    while answer["type"] not in ("resumed", "error"):
        answer = await a.recv()
    assert answer["type"] == "resumed", answer
    await b.request({"type": "resume", "match": code, "token": joined["token"]}, "resumed")


async def test_a_rematch_is_announced_only_once_its_match_exists(shared_url: str) -> None:
    """``rematched`` names a match that exists: a racer on another process resumes it at once.

    The process that decided the rematch sent ``rematched`` (to its racer,
    and over pub/sub to the other's) before it opened the new match's log,
    so a racer resuming the new code on hearing of it could be told
    ``not_found``, and the Python client then waited for good for a seat
    that never came. The servers here stall before opening a rematch
    (``tests/slow_rematch_server.py``) so that this order shows every time.
    """
    procs = [
        ServerProcess("--redis", shared_url, module="tests.slow_rematch_server").start() for _ in range(2)
    ]
    try:
        a, b, created, joined = await both_ask_for_a_rematch(procs)
        code = (await a.expect("rematched", timeout=15))["match"]
        await both_resume(a, b, code, created, joined)
    finally:
        for proc in procs:
            proc.kill()


async def test_a_catch_up_between_the_rematch_s_writes_never_sends_a_racer_to_a_missing_match(
    redis_url: str,
) -> None:
    """A process that reads the old log finds ``rematch_opened`` only once the new match exists.

    The deciding process wrote the decision into the old match's log, then
    opened the new match (stalled here: ``tests/slow_rematch_server.py``).
    Meanwhile the other process caught up from the log (Ann resuming from a
    new connection there: recording her connect conflicted with the decision)
    and told her ``rematched``; her resume of the new code was ``not_found``.
    The new match is now opened before the decision is written.
    """
    procs = [
        ServerProcess("--redis", redis_url, module="tests.slow_rematch_server").start() for _ in range(2)
    ]
    try:
        _, b, created, joined = await both_ask_for_a_rematch(procs)
        client = redis.asyncio.Redis.from_url(redis_url)
        events_key = f"grip:match:{{{created['match']}}}:events"

        async def decided() -> bool:
            return any(b"rematch_opened" in b"".join(e.values()) for _, e in await client.xrange(events_key))

        async with asyncio.timeout(15):
            while not await decided():
                await asyncio.sleep(0.01)
        await client.aclose()
        # Ann takes her seat again on her process from a new line, before it heard of the decision
        ann = await WsClient.connect(procs[0].url)
        resumed = await ann.request(
            {"type": "resume", "match": created["match"], "token": created["token"]}, "resumed"
        )
        told = [m["match"] for m in resumed["missed"] if m["type"] == "rematched"]
        code = told[0] if told else (await ann.expect("rematched", timeout=15))["match"]
        await both_resume(ann, b, code, created, joined)
    finally:
        for proc in procs:
            proc.kill()


async def test_a_log_rolled_back_then_written_past_is_not_taken_for_the_copy_s(redis_url: str) -> None:
    """Redis lost a racer's last two moves, then a process that never had them wrote two others there.

    The log then reaches the ``ev`` of the copies that still hold the lost
    moves, so the catch-up after pub/sub reconnects took them to be in step
    and folded what followed onto them: two histories in one match (a result
    with moves the log does not hold). The event at the copy's ``ev`` is now
    compared too: the copies are reloaded, their racers resume onto the log.
    """
    with running_servers(redis_url, 2) as procs:
        a, b, created, joined = await seat_two(procs[0].url, procs[1].url)
        await start(a, b)
        await play_turns(a, 1, 3)  # ev 10, 11, 12
        await b.expect("progress", timeout=15, moves=3)
        await lose_latest_moves(redis_url, created["match"], seat=0, n=2)  # Ann's moves 2 and 3
        store = await open_store(redis_url)
        game = Game("1")
        written = []
        for seq, ev in ((1, 11), (2, 12)):  # Bob's turns, by a process that never saw Ann's lost ones
            game.play("T")
            written.append(Moved(ev=ev, at=ev, seat=1, seq=seq, move="T", numbers=Numbers.of(game)))
        await store.append(created["match"], 10, written)
        await store.close()
        client = redis.asyncio.Redis.from_url(redis_url)
        await client.client_kill_filter(_type="pubsub")  # pub/sub reconnects: each process catches up
        await client.aclose()
        assert await a.closed() == 1013  # reloaded from the log
        assert await b.closed() == 1013
        a = await resume(procs[0].url, created, last_seq=1)
        b = await resume(procs[1].url, joined, last_seq=2)
        await a.send({"type": "finish"})
        await b.send({"type": "finish"})
        result = await a.expect("result", timeout=15)
        assert [s["moves"] for s in result["seats"]] == [["T"], ["T", "T"]]
        assert json.dumps(result) == json.dumps(await b.expect("result", timeout=15))
