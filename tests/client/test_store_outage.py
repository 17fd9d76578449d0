"""The Python client through an outage of the server's Redis: what it was refused, it sends again.

A real server in process on a real Redis of the test's own (AOF on), which
is stopped under the racers: every command then gets ``unavailable``
(redis-py cannot connect). The client must send the seat commands again
after its pauses, so that the race starts and ends once Redis is back
(before, a ``ready`` or a ``finish`` refused so was dropped, and the race
waited for its time limit), and must not wait for good on a rematch whose
new match cannot be found.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from client.api import Client, connect
from server import protocol as p
from server.hub import Hub
from server.match import Event
from server.match.events import SeatTaken
from tests.conftest import RedisServer


async def until(condition: Callable[[], bool], timeout: float = 15) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def errors_so_far(client: Client) -> list[p.Error]:
    """The errors among the client's events so far (read without waiting)."""
    errors = []
    while not client._events.empty():
        item = client._events.get_nowait()
        if isinstance(item, p.Error):
            errors.append(item)
    return errors


@pytest.fixture
async def redis_backed(start_app: Callable[..., Any], aof_redis: RedisServer) -> str:
    """The URL of a server whose store and bus are ``aof_redis``."""
    app = await start_app(store_url=aof_redis.url, bus_url=aof_redis.url, rate_per_s=1000.0, burst=2000)
    return f"ws://127.0.0.1:{app.port}"


@contextlib.asynccontextmanager
async def lobby_of_two(url: str) -> AsyncIterator[tuple[Client, Client, p.Seated]]:
    """Ann created a race and Bob joined it; both clients, and Ann's seat."""
    async with await connect(url, name="Ann") as a, await connect(url, name="Bob") as b:
        seated = await a.create(seed="1")
        await b.join(seated.match)
        yield a, b, seated


async def test_seat_commands_refused_while_redis_is_down_go_again_once_it_is_back(
    redis_backed: str, aof_redis: RedisServer
) -> None:
    async with lobby_of_two(redis_backed) as (a, b, _):
        aof_redis.stop()
        await a.ready()
        await b.ready()
        await until(lambda: a.session.retrying and b.session.retrying)  # both were refused
        aof_redis.start()
        await a.next_event(p.Start, timeout=30)
        await b.next_event(p.Start, timeout=30)
        await a.play("T")
        aof_redis.stop()
        await a.finish()
        await b.resign()
        await until(lambda: a.session.retrying and b.session.retrying)
        aof_redis.start()
        result = await a.next_event(p.Result, timeout=30)
        assert [s.reason for s in result.seats] == ["finish", "resign"] and result.winner == 0
        assert (await b.next_event(p.Result, timeout=30)).winner == 0
        assert not a.session.retrying and not b.session.retrying
        assert errors_so_far(a) == [] and errors_so_far(b) == []


async def test_a_seat_command_is_given_up_with_a_message_when_redis_stays_away(
    redis_backed: str, aof_redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("client.session.RETRY_TRIES", 2)
    monkeypatch.setattr("client.session.RETRY_FIRST_S", 0.05)
    async with lobby_of_two(redis_backed) as (a, _, _):
        aof_redis.stop()
        await a.ready()
        gave_up = await a.next_event(p.Error, timeout=30)
        assert gave_up.code == p.ErrorCode.UNAVAILABLE and "gave up" in gave_up.message
        assert "ready" in gave_up.message and not a.session.retrying


async def test_a_rematch_whose_match_was_not_opened_goes_back_to_the_old_result(
    start_app: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rematched`` named a match the store does not have (lost: its open never landed).

    The client asked for it again and again, and waited for good. It now
    asks a few times, then resumes the old match: the result, and a message.
    """
    opened_for_real = Hub.open

    async def open_lost(self: Hub, events: list[Event]) -> Any:
        if sum(isinstance(e, SeatTaken) for e in events) > 1:  # a rematch: its log is lost
            return None
        return await opened_for_real(self, events)

    monkeypatch.setattr(Hub, "open", open_lost)
    monkeypatch.setattr("client.session.RETRY_FIRST_S", 0.05)
    app = await start_app(rate_per_s=1000.0, burst=2000)
    async with lobby_of_two(f"ws://127.0.0.1:{app.port}") as (a, b, seated):
        await a.ready()
        await b.ready()
        await a.next_event(p.Start)
        await a.finish()
        await b.finish()
        await a.next_event(p.Result)
        await a.rematch()
        await b.rematch()
        new = (await a.next_event(p.Rematched)).match
        told = await a.next_event(p.Error, timeout=30)
        assert told.code == p.ErrorCode.NOT_FOUND, told
        assert new in told.message and seated.match in told.message, (told.message, new, seated.match)
        back = await a.next_event(p.Resumed, timeout=30)
        assert back.match == seated.match and back.result is not None
        assert a.match == seated.match and a.session.holding


async def test_an_undo_refused_while_redis_is_down_is_taken_back_once(
    redis_backed: str, aof_redis: RedisServer
) -> None:
    """Practice: the undo was refused for good (a ClientError, the play kept); it waits out the outage now.

    Once, not twice: the board after it is the one after the first move,
    here and in the server's snapshot of the seat.
    """
    async with await connect(redis_backed, name="Ann") as c:
        await c.create(seats=1, seed="1")
        await c.ready()
        start = await c.next_event(p.Start, timeout=30)
        assert start.view is not None
        await c.play(start.view.legal[0])
        after_first = c.view
        assert after_first is not None
        await c.play(after_first.legal[0])
        aof_redis.stop()
        undo = asyncio.ensure_future(c.undo())
        await until(lambda: c.session.retrying)
        aof_redis.start()
        undone = await asyncio.wait_for(undo, 30)
        assert undone.view == after_first and c.view == after_first
        assert errors_so_far(c) == []  # (the events so far read too: the resume's below is a new one)
        c.drop()  # the server's own snapshot of the seat: one play taken back, not two
        resumed = await c.next_event(p.Resumed, timeout=30)
        assert resumed.view is not None, resumed
        assert resumed.view.model_dump() == after_first.model_dump()
        assert c.session.divergences == 0


async def test_a_leave_refused_while_redis_is_down_goes_again(
    redis_backed: str, aof_redis: RedisServer
) -> None:
    async with lobby_of_two(redis_backed) as (a, b, _):
        await a.next_event(p.Lobby)  # Bob seated
        aof_redis.stop()
        await b.leave()
        await until(lambda: b.session.retrying)
        aof_redis.start()
        async with asyncio.timeout(30):
            while len((await a.next_event(p.Lobby, timeout=30)).seats) != 1:
                pass
        await until(lambda: not b.session.retrying)
        assert errors_so_far(b) == []
