"""The server's bot seat ("race a bot") acts on what it is sent, however late it comes back."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from race import MakeAppT, client

from server import protocol as p
from server.bots import BotPeer


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
    await bot._command(p.Resume(match=lm.match.id, token=bot._token))
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
