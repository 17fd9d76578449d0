"""The client library against a real server: a race, resends after a drop, bots."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest

from client import Client, ClientError, MoveRejected, ServerError, api, connect
from client.bots import run_bot
from server import protocol as p
from server.engine import Game
from server.engine.view_players import greedy_view, lookahead_view
from tests.client.seats import finish_both, seated_pair

ROOT = Path(__file__).resolve().parents[2]


async def test_the_module_s_example_runs_as_written(url: str, tmp_path: Path) -> None:
    """``client/api.py``'s docstring opens with a program, pasted into a file and run as it is (it was
    a fragment: ``await`` outside a function, ``p`` never imported, and a race nobody joined)."""
    lines = (api.__doc__ or "").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("    "))
    end = next(i for i in range(start, len(lines)) if lines[i] and not lines[i].startswith("    "))
    program = textwrap.dedent("\n".join(lines[start:end]))
    assert "asyncio.run(main())" in program
    (tmp_path / "example.py").write_text(program.replace("ws://127.0.0.1:8765", url))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "example.py", cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    assert re.fullmatch(r"cards left: \d+\n", out.decode()), out.decode()


async def test_create_join_ready_moves_result(url: str) -> None:
    a, b = await seated_pair(url)
    await a.ready()
    await b.ready()
    start = await a.next_event(p.Start)
    assert start.view is not None and start.view.leftover == 72
    ack = await a.play("T")
    assert isinstance(ack, p.AckV2) and ack.seq == 1 and set(ack.reveal) == {"W"}
    assert a.view is not None and a.view.leftover == 72 and a.view.stock_count == 69
    assert a.view.waste[0].top == ack.reveal["W"]
    progress = await b.next_event(p.Progress)
    assert progress.seat == 0 and progress.moves == 1
    with pytest.raises(MoveRejected) as info:
        await a.play("A1:0>A1")  # refused by the client's engine, in the server's words: never sent
    assert (
        info.value.code == p.ErrorCode.ILLEGAL
        and info.value.message == "A1:0>A1: a pile cannot move onto itself"
    )
    assert a.next_seq == 2
    assert (await a.play("T")).seq == 2  # the refused seq is reused
    await a.finish()
    await b.resign()
    result = await a.next_event(p.Result)
    assert result.winner == 0 and result.seats[0].moves == ["T", "T"]
    assert (await b.next_event(p.Result)) == result
    await a.close()
    await b.close()


async def test_errors_are_typed(url: str) -> None:
    c = await connect(url)
    with pytest.raises(ServerError) as info:
        await c.join("34679ACD")
    assert info.value.code == p.ErrorCode.NOT_FOUND
    await c.close()


async def test_resend_after_drop_loses_and_doubles_nothing(url: str) -> None:
    a, b = await seated_pair(url, deal=12345)
    await a.ready()
    await b.ready()
    start = await a.next_event(p.Start)
    assert start.view is not None
    # The moves a greedy player would make, computed ahead on the same deal.
    game = Game("12345")
    planned = []
    for _ in range(30):
        move = greedy_view(game.player_view())
        assert move is not None
        game.play(move)
        planned.append(move)
    for move in planned[:10]:
        await a.play(move)
    for move in planned[10:20]:
        await a.move(move)  # pipelined: some are unacked when the line drops
    a.drop()
    for move in planned[20:]:
        await a.move(move)  # sent while down: resent after the resume
    async with asyncio.timeout(10):
        while a.unacked or a.reconnects == 0:
            await a.next_event(p.AckV2, p.Resumed)
    assert a.reconnects == 1
    assert a.view is not None and a.view.moves == 30
    assert (await finish_both(a, b)).seats[0].moves == planned


async def test_bot_vs_bot_over_the_protocol(url: str) -> None:
    a, b = await seated_pair(url, deal=7)
    results = await asyncio.wait_for(
        asyncio.gather(run_bot(a, "greedy", speed=0), run_bot(b, "lookahead", speed=0)), 30
    )
    assert results[0] == results[1]
    result = results[0]
    assert {s.reason for s in result.seats} == {"over"}
    assert result.winner is not None or result.draw
    await a.close()
    await b.close()


async def test_race_a_bot_seated_by_the_server(url: str) -> None:
    a = await connect(url, name="Ann")
    await a.create(deal=3, bot="greedy")
    lobby = await a.next_event(p.Lobby)
    while len(lobby.seats) < 2:
        lobby = await a.next_event(p.Lobby)
    assert [s.name for s in lobby.seats] == ["Ann", "Greedy bot"]
    assert not lobby.seats[1].ready  # the bot readies when the human does
    await a.ready()
    await a.next_event(p.Start)
    await a.finish()
    result = await a.next_event(p.Result, timeout=30)
    bot = result.seats[1]
    assert bot.reason == "over" and len(bot.moves) > 20
    assert result.winner == 1
    # The bot's moves replay on the deal: the server validated each one.
    assert Game.replay("3", "classic", bot.moves).leftover == bot.score
    await a.close()


def test_view_strategies_play_a_deal_to_its_end() -> None:
    for strategy in (greedy_view, lookahead_view):
        game = Game("5")
        while not game.is_over:
            move = strategy(game.player_view())
            assert move is not None
            game.play(move)
        assert game.leftover < 72


async def test_practice_hint_and_undo(url: str) -> None:
    """Alone with hint and undo: the undone board is the one before the move, in ``view`` too."""
    c = await connect(url)
    await c.create(seats=1, deal=3)
    await c.ready()
    start = await c.next_event(p.Start)
    assert start.view is not None
    hint = await c.hint()
    assert hint is not None and hint in start.view.legal
    await c.play(hint)
    assert c.view is not None and c.view.moves >= 1
    undone = await c.undo()
    assert undone.moves[0] == hint and undone.view == start.view and c.view == start.view
    with pytest.raises(ServerError) as info:
        await c.undo()  # nothing left to take back
    assert info.value.code == p.ErrorCode.ILLEGAL
    await c.finish()
    await c.next_event(p.Result)
    for ask, says in ((c.hint, "your game is not being played"), (c.undo, "the race is over")):
        with pytest.raises(ServerError) as info:
            await ask()
        assert info.value.code == p.ErrorCode.WRONG_PHASE and info.value.message == says
    with pytest.raises(ClientError, match=r"^a bot races you: it needs the second seat"):
        await c.create(seats=1, bot="greedy")  # refused before it is sent, in the server's words
    await c.close()


async def test_hint_and_undo_are_refused_in_a_race(url: str) -> None:
    a, b = await seated_pair(url)
    await a.ready()
    await b.ready()
    await a.next_event(p.Start)
    await a.play("T")
    for ask in (a.hint, a.undo):
        with pytest.raises(ServerError) as info:
            await ask()
        assert info.value.code == p.ErrorCode.NOT_ALLOWED
    assert a.view is not None and a.view.moves == 1
    await a.close()
    await b.close()


async def events_until(c: Client, last: type[p.Message], timeout: float = 10.0) -> list[p.Message]:
    """The events up to and with the first of type ``last``."""
    seen: list[p.Message] = []
    async with asyncio.timeout(timeout):
        async for event in c.events():
            seen.append(event)
            if isinstance(event, last):
                return seen
    raise AssertionError(f"the events ended before a {last.__name__}: {seen}")


async def test_a_refused_request_raises_to_its_caller_and_is_no_event(url: str) -> None:
    """The contract (client/api.py): what a caller awaits (a request's answer or refusal, a
    ``play``'s ack or rejection) is the caller's alone; events are what nobody awaits."""
    c = await connect(url, name="Ann")
    seated = await c.create(deal=1, bot="greedy")
    with pytest.raises(ServerError) as refused:
        await c.hint()  # hints are for practice
    assert refused.value.code == p.ErrorCode.NOT_ALLOWED
    with pytest.raises(MoveRejected) as rejected:
        await c.play("T")  # no race yet: the server refuses it
    assert rejected.value.code == p.ErrorCode.WRONG_PHASE and rejected.value.seq == 1
    await c.ready()
    before = await events_until(c, p.Start)
    assert not [e for e in before if isinstance(e, p.Error | p.RejectedV2 | p.Seated | p.Welcome)], before
    ack = await c.play("T")
    await c.move("T")  # nobody awaits a move(): its ack is an event
    await c.finish()
    after = await events_until(c, p.Result, timeout=30)
    acks = [e for e in after if isinstance(e, p.AckV2)]
    assert [a.seq for a in acks] == [ack.seq + 1], after  # play()'s ack returned, not an event too
    with pytest.raises(ServerError) as again:
        await c.join(seated.match)  # refused: the seats are taken
    await c.finish()  # a seat command has no answer to await: its refusal is an event
    refusal = await c.next_event(p.Error)
    assert refusal.code == p.ErrorCode.WRONG_PHASE and again.value.message != refusal.message
    await c.close()
