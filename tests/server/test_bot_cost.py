"""A bot race costs what a person's does, and no more of them run than the caps allow (issue 19).

8 connections creating bot races and leaving them started 232 races in 10 s
and held a bystander's moves up by seconds: the bots thought on the server's
own process, played at full speed once alone, and nothing capped them or
ended a race nobody was in. ``bench/abuse.py`` measures the bystander.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from race import MakeAppT, client
from wsclient import WsClient

import server.bots
import server.engine.view_players
import server.match.state
from server.app import App
from server.bots import BotPeer
from server.protocol import now_ms


async def until(condition: Any, timeout: float = 15) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def bot_race(app: App, c: WsClient) -> tuple[str, BotPeer]:
    code = (await c.request({"type": "create", "seed": "5", "bot": "greedy"}, "created"))["match"]
    await until(lambda: 1 in app.hub.live[code].seats)
    bot = app.hub.live[code].seats[1]
    assert isinstance(bot, BotPeer)
    return code, bot


async def started_bot_race(app: App, c: WsClient) -> str:
    """A bot race past its lobby: the creator's next lobby would call off one still open."""
    code, _ = await bot_race(app, c)
    await c.request({"type": "ready"}, "countdown")
    return code


async def test_bot_races_are_capped_per_connection_per_player_and_in_all(make_app: MakeAppT) -> None:
    app = await make_app(bots_per_connection=1, bots_per_player=2, bots_total=3)
    ann = await client(app)
    me = await ann.request({"type": "hello", "name": "Ann"}, "welcome")
    code = await started_bot_race(app, ann)
    refused = await ann.request({"type": "create", "bot": "greedy"}, "error")
    assert refused["code"] == "not_allowed" and code in refused["message"]
    tab = await client(app)  # Ann on another connection
    await tab.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
    await started_bot_race(app, tab)
    third = await client(app)
    await third.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
    assert (await third.request({"type": "create", "bot": "greedy"}, "error"))["code"] == "not_allowed"
    await third.request({"type": "create"}, "created")  # a race against a person is not capped
    await bot_race(app, await client(app))  # someone else: the third of the process's
    full = await (await client(app)).request({"type": "create", "bot": "lookahead"}, "error")
    assert full["code"] == "unavailable" and "bots" in full["message"]
    assert len(app.hub.live) == 4  # the refused creates opened nothing


async def test_a_bot_decides_in_the_workers_not_in_the_servers_process(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strategies here are replaced by one that fails: the workers' own (real) ones play."""

    def not_here(view: Any) -> str | None:
        raise AssertionError("a bot thought on the server's process")

    monkeypatch.setitem(server.engine.view_players.STRATEGIES, "lookahead", not_here)
    monkeypatch.setattr(server.match.state, "COUNTDOWN_MS", 50)
    monkeypatch.setattr(server.bots, "PACE_S", (0.01, 0.02))
    app = await make_app(clock=now_ms)
    ann = await client(app)
    code = (await ann.request({"type": "create", "seed": "5", "bot": "lookahead"}, "created"))["match"]
    await ann.send({"type": "ready"})
    await ann.expect("start", timeout=10)
    await until(lambda: app.hub.live[code].match.seat(1).last_seq >= 3, timeout=60)


class CountingRandom(random.Random):
    """Counts the paces drawn: one before each move."""

    paces = 0

    def uniform(self, a: float, b: float) -> float:
        self.paces += 1
        return super().uniform(a, b)


async def test_once_the_human_has_finished_the_bot_keeps_its_human_pace(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Playing out at full speed was a bot's whole game in a burst of the workers' time."""
    monkeypatch.setattr(server.match.state, "COUNTDOWN_MS", 50)
    monkeypatch.setattr(server.bots, "PACE_S", (0.01, 0.01))
    app = await make_app(clock=now_ms)
    ann = await client(app)
    _, bot = await bot_race(app, ann)
    bot.rng = counting = CountingRandom()
    await ann.send({"type": "ready"})
    await ann.expect("start", timeout=10)
    await ann.send({"type": "finish"})  # and she stays to see the result
    result = await ann.expect("result", timeout=60)
    assert len(result["seats"][1]["moves"]) > 10
    assert counting.paces >= len(result["seats"][1]["moves"])  # a pace before every move


async def test_a_bot_race_nobody_is_in_ends_and_its_bot_goes(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server.match.state, "COUNTDOWN_MS", 50)
    monkeypatch.setattr(server.bots, "PACE_S", (0.05, 0.05))
    monkeypatch.setattr(server.bots, "WAIT_ALONE_S", 0.3)
    app = await make_app(clock=now_ms, grace_ms=300)
    ann = await client(app)
    lobby_code, _ = await bot_race(app, ann)
    bob = await client(app)
    race_code, _ = await bot_race(app, bob)
    await until(lambda: app.hub.live[lobby_code].match.seat(1) is not None)
    await ann.close()  # left in the lobby: the bot leaves too
    await until(lambda: not app.hub.live[lobby_code].seats)
    lm = app.hub.live[race_code]
    await bob.send({"type": "ready"})
    await bob.expect("start", timeout=10)
    await bob.close()  # gone in the race: abandoned after the grace period, then the bot finishes
    await until(lambda: lm.match.result is not None)
    assert lm.match.result is not None and lm.match.result.seats[0].reason == "abandoned"
    await until(lambda: not lm.seats and not app.bots.bots)  # and nobody is left to ask for a rematch
    assert lm.match.seat(1).last_seq < 20  # it played on at its pace for the grace period, no more


async def test_a_human_back_soon_finds_the_bot_still_there(make_app: MakeAppT) -> None:
    """A page that reloads, or moves to the match's address, drops its connection for a moment."""
    app = await make_app()
    ann = await client(app)
    code, bot = await bot_race(app, ann)
    created = next(m for m in ann.received if m["type"] == "created")
    await until(lambda: app.hub.live[code].match.seat(1) is not None)
    await ann.close()
    back = await client(app)
    await back.request({"type": "resume", "match": code, "token": created["token"], "last_ev": 0}, "resumed")
    await back.send({"type": "ready"})
    await back.expect("countdown", timeout=10)  # the bot readied too: it stayed
    assert app.hub.live[code].seats[1] is bot
