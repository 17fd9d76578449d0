"""The client library across drops, closes, rematches and a server that goes away."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import redis
from websockets.asyncio.client import ClientConnection

import client.api
import client.session
from client import Client, ConnectionLost, connect
from client.bots import run_bot
from server import protocol as p
from server.engine import Game
from server.engine.view_players import greedy_view
from tests.client.netkit import Proxy, wait_until
from tests.client.seats import finish_both, racing, seated_pair
from tests.conftest import RedisServer


def greedy_moves(seed: str, n: int) -> list[str]:
    game = Game(seed)
    moves = []
    for _ in range(n):
        move = greedy_view(game.player_view())
        assert move is not None
        game.play(move)
        moves.append(move)
    return moves


async def drop_and_stall(c: Client) -> None:
    """Drop ``c``'s connection; back once it dials again, with a dial that never completes."""
    dialing = asyncio.Event()

    async def stuck() -> None:
        dialing.set()
        await asyncio.Event().wait()

    hook_dial(c, stuck)
    c.drop()
    await asyncio.wait_for(dialing.wait(), 10)


def hook_dial(c: Client, before: Callable[[], Awaitable[None]] | None = None) -> asyncio.Event:
    """An event set once ``c`` has dialed again (after ``before``, if given): the resume comes next."""
    dialed = asyncio.Event()
    real_dial = c._dial

    async def dial() -> ClientConnection:
        if before is not None:
            await before()
        ws = await real_dial()
        dialed.set()
        return ws

    c._dial = dial  # type: ignore[method-assign]
    return dialed


async def test_play_returns_the_ack_of_a_move_applied_before_a_drop(url: str) -> None:
    a, b = await racing(url)
    receive = a._receive

    def lose_first_ack(msg: p.Message) -> None:
        if isinstance(msg, p.AckV2) and a.reconnects == 0:
            a.drop()  # the server applied the move; its ack goes down with the line
            return
        receive(msg)

    a._receive = lose_first_ack  # type: ignore[method-assign]
    ack = await a.play("T", timeout=15)
    assert ack.seq == 1 and a.view is not None and a.view.moves == 1 and a.reconnects == 1
    assert not a.unacked and a.next_seq == 2
    resumed = await a.next_event(p.Resumed, p.AckV2)  # the ack is play()'s, not an event too
    assert isinstance(resumed, p.Resumed) and resumed.last_seq == 1
    assert (await a.play("T")).seq == 2
    await a.close()
    await b.close()


async def test_moves_sent_while_resuming_wait_for_the_seat(url: str) -> None:
    a, b = await racing(url)
    planned = greedy_moves("12345", 12)
    for move in planned[:4]:
        await a.play(move)
    dialed = hook_dial(a)
    a.drop()
    await asyncio.wait_for(dialed.wait(), 10)
    # The new connection is open but holds no seat yet: these must wait for the resume.
    seqs = [await a.move(move) for move in planned[4:]]
    assert seqs == list(range(5, 13))
    async with asyncio.timeout(10):
        while a.unacked:
            event = await a.next_event(p.AckV2, p.RejectedV2)
            assert isinstance(event, p.AckV2), event
    assert a.view is not None and a.view.moves == 12 and a.reconnects == 1
    assert (await finish_both(a, b)).seats[0].moves == planned


async def test_close_during_a_reconnect_returns_and_leaves_the_seat(url: str) -> None:
    a, b = await seated_pair(url)
    await drop_and_stall(a)
    await asyncio.wait_for(a.close(), 2)
    assert a.reconnects == 0
    lobby = await b.next_event(p.Lobby)
    while lobby.seats[0].connected:
        lobby = await b.next_event(p.Lobby)
    with pytest.raises(ConnectionLost):
        await a.ready()
    await b.close()


async def test_a_cancelled_close_stays_cancelled(url: str) -> None:
    a = await connect(url, name="Ann")
    await a.create(deal=1)

    await drop_and_stall(a)
    closing = asyncio.create_task(a.close())
    await asyncio.sleep(0)  # let close() reach its wait for the reader
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    await asyncio.wait_for(a.close(), 2)


async def test_rematch_resumes_the_new_match_and_numbers_moves_from_one(url: str) -> None:
    a, b = await racing(url, deal=1)
    await a.play("T")
    await a.play("T")
    await a.finish()
    await b.finish()
    old = (await a.next_event(p.Result)).match
    await b.next_event(p.Result)
    await a.rematch()
    await b.rematch()
    rematched = await a.next_event(p.Rematched)
    await b.next_event(p.Rematched)
    assert rematched.match != old and a.match == rematched.match
    await a.ready()  # may go before the new seat is resumed: it waits for it
    await b.ready()
    start = await a.next_event(p.Start)
    assert start.view is not None and start.view.moves == 0
    ack = await a.play("T")
    assert ack.seq == 1 and a.view is not None and a.view.moves == 1 and ack.ev > 0
    progress = await b.next_event(p.Progress)
    assert progress.seat == 0 and progress.moves == 1
    await a.close()
    await b.close()


async def test_bots_play_through_a_rematch(url: str) -> None:
    a, b = await seated_pair(url, deal=3)
    first = a.match
    firsts: list[p.Result] = []
    last_a, last_b = await asyncio.wait_for(
        asyncio.gather(
            run_bot(a, "greedy", speed=0, rematches=1, on_result=firsts.append),
            run_bot(b, "lookahead", speed=0, rematches=1),
        ),
        60,
    )
    assert [r.match for r in firsts] == [first]
    assert last_a == last_b and last_a.match == a.match != first
    assert all(s.reason == "over" and s.moves for s in last_a.seats)
    await a.close()
    await b.close()


async def test_a_lost_server_ends_events_with_an_error(
    url: str, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client.api, "RECONNECT_FOR_S", 0.3)
    a, b = await racing(url, a_url=proxy.url)
    await a.play("T")
    await proxy.stop()
    with pytest.raises(ConnectionLost, match="could not reconnect"):
        async with asyncio.timeout(10):
            async for _ in a.events():
                pass
    assert a.lost is not None
    with pytest.raises(ConnectionLost):
        await a.move("T")
    with pytest.raises(ConnectionLost):
        await a.finish()
    await a.close()
    await b.close()


async def test_a_resumed_seat_is_known_on_a_fresh_client(url: str) -> None:
    a, b = await racing(url, deal=1)
    await a.play("T")
    match, token = a.match, a.token
    await a.close()
    fresh = await connect(url, name="Ann")
    assert match is not None and token is not None
    resumed = await fresh.resume(match, token)
    assert resumed.last_seq == 1 and fresh.seat == 0 and fresh.match == match
    assert (await fresh.play("T")).seq == 2
    await fresh.close()
    await b.close()


async def test_http_url_is_the_websocket(url: str) -> None:
    c = await connect(url.replace("ws://", "http://"))
    assert c.url == url and c.player is not None
    await c.close()


async def until_rematch_is_asked(a: Client, b: Client) -> None:
    """Both finish, Bob asks for a rematch: Ann's ``rematch`` is the one that opens it."""
    await a.finish()
    await b.finish()
    await a.next_event(p.Result)
    await b.next_event(p.Result)
    await b.rematch()


@pytest.mark.parametrize("command", ["ready", "finish", "resign", "rematch"])
async def test_a_command_written_into_a_dead_line_is_sent_again(url: str, proxy: Proxy, command: str) -> None:
    if command == "ready":
        a, b = await seated_pair(url, a_url=proxy.url)
        await b.ready()
    else:
        a, b = await racing(url, a_url=proxy.url)
        if command == "rematch":
            await until_rematch_is_asked(a, b)
        else:
            await b.finish()
    proxy.cut()  # the line is dead, but Ann's reader has not noticed yet: the write goes through
    await getattr(a, command)()
    outcome = {"ready": p.Start, "rematch": p.Rematched}.get(command, p.Result)
    seen = await b.next_event(outcome)
    if isinstance(seen, p.Result):
        assert seen.seats[0].reason == command
    await a.next_event(outcome)
    assert a.reconnects == 1 and not a.session._unconfirmed
    await a.close()
    await b.close()


async def test_a_command_that_took_effect_before_the_drop_is_not_sent_again(url: str, proxy: Proxy) -> None:
    a, b = await racing(url, a_url=proxy.url)
    sent: list[str] = []
    real_data_to_send = a.session.data_to_send

    def data_to_send() -> list[p.Message]:
        out = real_data_to_send()
        sent.extend(getattr(message, "type", "") for message in out)
        return out

    a.session.data_to_send = data_to_send  # type: ignore[method-assign]
    proxy.stall()  # the server applies the finish; its ``finished`` never reaches Ann on this line
    await a.finish()
    await b.next_event(p.Finished)
    proxy.cut()
    proxy.flow()
    resumed = await a.next_event(p.Resumed)
    assert any(isinstance(m, p.Finished) and m.seat == 0 for m in resumed.missed)
    await b.finish()
    await a.next_event(p.Result)
    assert sent.count("finish") == 1 and not a.session._unconfirmed
    await a.close()
    await b.close()


async def test_a_late_refusal_does_not_void_the_move_that_reuses_its_seq(url: str) -> None:
    """Protocol v1: its client sends a move its engine has not checked (in v2 none is sent but legal ones)."""
    a, b = await racing(url, deal=1, version=1)
    receive = a._receive
    late: list[p.Message] = []  # what arrives after the first refusal, held as a slow line would

    def slow_after_refusal(msg: p.Message) -> None:
        if late or (isinstance(msg, p.Rejected) and msg.seq == 2):
            late.append(msg)
        else:
            receive(msg)

    a._receive = slow_after_refusal  # type: ignore[method-assign]
    bad, behind = asyncio.create_task(a.play("ZZ")), asyncio.create_task(a.play("T"))
    for task in (bad, behind):  # the refusal of seq 1 voids seq 2 as well
        with pytest.raises(client.api.MoveRejected):
            await task
    assert a.next_seq == 1
    again = [asyncio.create_task(a.play("T")) for _ in range(2)]  # typed before seq 2's refusal came
    await wait_until(lambda: any(isinstance(m, p.Ack) and m.seq == 2 for m in late), what="the new acks")
    a._receive = receive  # type: ignore[method-assign]
    for msg in late:  # in the order the server sent them: the stale refusal of the old seq 2 first
        receive(msg)
    acks = [await task for task in again]
    assert [ack.seq for ack in acks] == [1, 2] and a.next_seq == 3 and not a.unacked
    assert a.view is not None
    other = next(m for m in a.view.legal if m != "T")
    ack = await a.play(other)
    assert (ack.seq, ack.move, ack.view.moves) == (3, other, 3)
    assert (await finish_both(a, b)).seats[0].moves == ["T", "T", other]


async def test_moves_the_server_lost_are_voided_and_play_goes_on_from_its_board(
    start_app: Callable[..., Awaitable[Any]], snapshot_redis: RedisServer
) -> None:
    """Redis restarted from an older snapshot: the server lost two acked moves.

    The client learns it at its resume (the server closes the line with 1013
    once it finds out, here when its pub/sub comes back): numbering goes on
    after the server's last seq, on its board.
    """
    url = snapshot_redis.url
    app = await start_app(store_url=url, bus_url=url, rate_per_s=1000.0, burst=2000)
    a, b = await racing(f"ws://127.0.0.1:{app.port}", deal=1)
    for _ in range(2):
        await a.play("T")
    await asyncio.to_thread(lambda: redis.Redis.from_url(url).save())
    for _ in range(2):
        await a.play("T")
    snapshot_redis.stop()
    snapshot_redis.start()
    resumed = await a.next_event(p.Resumed, timeout=15)  # the server found the loss and closed the line
    assert resumed.last_seq == 2 and a.next_seq == 3 and a.view == resumed.view and a.view.moves == 2
    ack = await a.play("T")
    assert ack.seq == 3 and a.view.moves == 3
    result = await finish_both(a, b)
    assert result.seats[0].moves == ["T"] * 3


def count_dials(c: Client) -> list[float]:
    """The times ``c`` dials from now on, answered or refused."""
    dials: list[float] = []

    async def note() -> None:
        dials.append(time.monotonic())

    hook_dial(c, note)
    return dials


async def test_clients_dropped_at_once_dial_again_apart(url: str, proxy: Proxy) -> None:
    """A restarted server's racers come back spread out, not each try in a burst.

    Six racers lose the server at the same moment and find it refusing for
    a while: their third pauses (before the third dial) are drawn, not one
    fixed schedule that brings every client of the server back in the same
    instant, try after try. Then the server is back and every one resumes.
    """
    pairs = [await racing(url, deal=n + 1, a_url=proxy.url) for n in range(6)]
    dials: list[list[float]] = []
    for n, (a, _) in enumerate(pairs):
        a.session.rng = random.Random(n)
        dials.append(count_dials(a))
    await proxy.stop()
    await wait_until(lambda: all(len(d) >= 3 for d in dials), what="three dials each")
    thirds = [d[2] - d[1] for d in dials]
    assert max(thirds) - min(thirds) > 0.06, thirds
    await proxy.start()
    for a, b in pairs:
        assert (await a.play("T", timeout=15)).seq == 1 and a.reconnects == 1
        await a.close()
        await b.close()


async def test_a_client_outlasts_a_server_down_for_many_tries(
    url: str, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deploy's restart may take longer than a handful of quick tries: the seat is taken back after it.

    The client dials again, further and further apart, for as long as the
    server keeps a dropped racer's seat (``RECONNECT_FOR_S``): the first
    pause is shortened here so that seven refused dials come soon.
    """
    monkeypatch.setattr(client.session, "RECONNECT_FIRST_S", 0.01)
    a, b = await racing(url, a_url=proxy.url)
    await a.play("T")
    dials = count_dials(a)
    await proxy.stop()
    await wait_until(lambda: len(dials) >= 7 or a.lost is not None, timeout=30, what="seven dials")
    assert a.lost is None and a.reconnects == 0
    await proxy.start()
    ack = await a.play("T", timeout=15)
    assert ack.seq == 2 and a.reconnects == 1 and a.view is not None and a.view.moves == 2
    await a.close()
    await b.close()
