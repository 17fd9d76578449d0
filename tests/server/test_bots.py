"""The server's bot seat ("race a bot") acts on what it is sent, however late it comes back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis
from race import MakeAppT, client

import server.bots
import server.match.state
from server.bots import BotPeer
from server.protocol import now_ms
from tests.conftest import RedisServer


async def test_a_bot_that_resumes_after_the_human_readied_readies_too(make_app: MakeAppT) -> None:
    """As in a rematch, where the human may resume and ready before the bot has resumed."""
    app = await make_app()
    ann = await client(app)
    created = await ann.request({"type": "create", "seed": "5", "bot": "greedy"}, "created")
    lm = app.hub.live[created["match"]]
    bot = lm.seats[1]
    assert isinstance(bot, BotPeer)
    app.hub.detach(lm, bot)  # away: it misses the lobby that says Ann is ready
    await ann.send({"type": "ready"})
    while not lm.match.seat(0).ready:
        await ann.expect("lobby")
    assert not lm.match.seat(1).ready
    await bot.resume()
    await ann.expect("countdown", timeout=10)


async def test_a_match_loaded_while_it_is_being_opened_is_one_live_match(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rematch's seat may resume (a bot's at once) after the new log is written, before
    ``open`` hears back: both must end up in the same LiveMatch, or they never see each other."""
    app = await make_app()
    ann = await client(app)
    created = await ann.request({"type": "create", "seed": "5"}, "created")
    old = app.hub.live[created["match"]].match
    events = old.rematch_log("CCCCCCCC", "rematch-seed", app.clock())
    written = asyncio.Event()
    answer = asyncio.Event()
    real_append = app.store.append

    async def slow_answer(*args: Any, **kwargs: Any) -> int:
        shift = await real_append(*args, **kwargs)
        written.set()
        await answer.wait()  # written, but its caller does not hear back yet
        return shift

    monkeypatch.setattr(app.store, "append", slow_answer)
    opening = asyncio.create_task(app.hub.open(events))
    await asyncio.wait_for(written.wait(), 5)
    loaded = await app.hub.get("CCCCCCCC")
    answer.set()
    assert await opening is loaded is app.hub.live["CCCCCCCC"]


async def test_a_bot_plays_on_after_a_rolled_back_store_reloads_its_match(
    make_app: MakeAppT, snapshot_redis: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis back from an older snapshot: the match is reloaded and its connections closed for a
    resume (``Recovery.reload``). The bot must resume too, or the race would wait for the time limit."""
    monkeypatch.setattr(server.match.state, "COUNTDOWN_MS", 50)
    monkeypatch.setattr(server.bots, "PACE_S", (0.02, 0.03))
    url = snapshot_redis.url
    app = await make_app(clock=now_ms, store_url=url, bus_url=url)
    ann = await client(app)
    code = (await ann.request({"type": "create", "seed": "5", "bot": "greedy"}, "created"))["match"]
    await ann.send({"type": "ready"})
    await ann.expect("start", timeout=10)

    async def bot_moves(at_least: int) -> int:
        async with asyncio.timeout(15):
            while (played := app.hub.live[code].match.seat(1).last_seq) < at_least:
                await asyncio.sleep(0.01)
        return played

    await bot_moves(2)
    await asyncio.to_thread(lambda: redis.Redis.from_url(url).save())
    before = await bot_moves(5)  # and these are lost
    snapshot_redis.stop()
    snapshot_redis.start()
    await bot_moves(before + 3)  # reloaded with fewer, then past where it was: it played on
    assert await ann.closed() == 1013  # the human was told to resume as well
