"""Protocol v2 over real sockets, on both backends: races, spectators, resumes, drops, a wrong engine.

The clients are the library's (``client.api`` on the sans-I/O ``Session``);
a raw socket stands in where a test needs a client that breaks the rules.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect

from client import Client, MoveRejected, connect
from client.bots import run_bot
from server import protocol as p
from server.engine import ClientGame, Game, card_text, parse_card
from server.engine.cards import BUILD_DELTA, FIRST_VALUE
from server.engine.view_players import greedy_view
from tests.client.netkit import Proxy, wait_until
from tests.client.seats import racing, seated_pair


@pytest.fixture
async def url(start_app: Callable[..., Any], backend: dict[str, str]) -> str:
    """A server on each backend (the ``url`` of the other client tests is embedded only)."""
    app = await start_app(rate_per_s=1000.0, burst=2000, **backend)
    return f"ws://127.0.0.1:{app.port}"


def boards_shown(watcher: Client) -> list[tuple[int, p.View | None]]:
    """Every board a spectator is shown, as it stands after each ``board`` message (v1: its view; v2: rebuilt)."""
    shown: list[tuple[int, p.View | None]] = []
    receive = watcher._receive

    def record(msg: p.Message) -> None:
        receive(msg)
        if isinstance(msg, p.Board | p.BoardV2):
            shown.append((msg.seat, watcher.board(msg.seat)))

    watcher._receive = record  # type: ignore[method-assign]
    return shown


def greedy_line(seed: str, plays: int) -> list[str]:
    """Greedy's first ``plays`` moves on the deal of ``seed`` (fewer if its game ends first)."""
    game = Game(seed)
    line: list[str] = []
    while len(line) < plays and (move := greedy_view(game.player_view())) is not None:
        game.play(move)
        line.append(move)
    return line


async def test_a_v2_race_shows_v2_spectators_the_boards_v1_spectators_see(url: str) -> None:
    a, b = await seated_pair(url, deal=7)
    assert a.match is not None
    old, new = await connect(url, version=1), await connect(url)
    await old.watch(a.match)
    await new.watch(a.match)
    shown_old, shown_new = boards_shown(old), boards_shown(new)
    results = await asyncio.wait_for(
        asyncio.gather(run_bot(a, "greedy", speed=0), run_bot(b, "lookahead", speed=0)), 60
    )
    for watcher in (old, new):
        assert await watcher.next_event(p.Result) == results[0]
    plays = sum(len(s.moves) for s in results[0].seats)
    assert len(shown_new) == len(shown_old) and 0 < len(shown_old) <= plays
    assert shown_new == shown_old  # the same boards, move by move: the lag is the same
    assert new.session.divergences == a.session.divergences == b.session.divergences == 0
    for seat in (0, 1):  # the race is decided: every play is shown, boards and all
        final = Game.replay("7", "classic", results[0].seats[seat].moves)
        board = new.board(seat)
        assert board is not None and board.grid == final.grid() and board.leftover == final.leftover
    for c in (a, b, old, new):
        await c.close()


async def test_v1_and_v2_racers_in_one_match(url: str) -> None:
    ann = await connect(url, name="Ann", version=1)
    bob = await connect(url, name="Bob")
    seated = await ann.create(deal=11)
    await bob.join(seated.match)
    results = await asyncio.wait_for(
        asyncio.gather(run_bot(ann, "greedy", speed=0), run_bot(bob, "greedy", speed=0)), 60
    )
    assert results[0] == results[1]
    assert results[0].seats[0].moves == results[0].seats[1].moves  # one deal, one greedy line
    assert ann.view is not None and bob.view is not None
    assert ann.view == bob.view  # the server's view, and the one Bob's engine made
    await ann.close()
    await bob.close()


async def test_a_v2_seat_resumed_mid_race_plays_on_from_where_it_was(url: str) -> None:
    a, b = await racing(url)
    line = greedy_line("12345", 24)
    for move in line[:8]:
        await a.play(move)
    for move in line[8:16]:
        await a.move(move)  # on trust: some still wait for their acks when the line drops
    assert a.view is not None and a.view.moves == 16  # played here at once
    a.drop()
    for move in line[16:]:
        await a.move(move)  # while the line is down: played here, sent after the resume
    await wait_until(lambda: a.reconnects == 1 and not a.unacked, what="every move acknowledged")
    assert a.view is not None and a.view.moves == 24 and a.session.divergences == 0
    await a.finish()
    await b.finish()
    result = await a.next_event(p.Result)
    assert result.seats[0].moves == line
    await a.close()
    await b.close()


async def test_a_client_whose_engine_goes_wrong_notices_at_the_next_ack_and_resumes(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = await racing(url)
    real_reveal = ClientGame.reveal
    broken = [True]

    def misreveal(game: ClientGame, cards: dict[str, str]) -> None:
        """The first reveal puts in the wrong card: the next card of the same suit, say."""
        if broken and cards:
            broken.clear()
            cards = {key: card_text(parse_card(text) ^ 4) for key, text in cards.items()}
        real_reveal(game, cards)

    monkeypatch.setattr(ClientGame, "reveal", misreveal)
    await a.play("T")  # its ack reveals the waste's top: put in wrong, so the check disagrees
    await wait_until(lambda: a.session.divergences == 1 and a.session.holding, what="the resume")
    resumed = await a.next_event(p.Resumed)
    assert resumed.last_seq == 1 and a.view == resumed.view  # the server's board, whole
    await a.play("T")
    assert a.session.divergences == 1 and a.view is not None and a.view.moves == 2
    await a.close()
    await b.close()


async def test_a_move_the_engine_here_thought_legal_is_rejected_with_the_server_s_board(url: str) -> None:
    a, b = await racing(url, deal=1)
    game, server_view = a.game, a.view
    assert game is not None and server_view is not None
    # Make the client's engine wrong: spot y holds, here, the card spot x's pile builds on.
    names, grid = game.spot_names, game.grid()
    x = next(i for i, n in enumerate(names) if (parse_card(grid[n][0]) >> 2) - 3 >= FIRST_VALUE)
    needed = parse_card(grid[names[x]][0]) - BUILD_DELTA
    y = next(i for i, n in enumerate(names) if i != x and parse_card(grid[n][0]) != needed)
    game._take(y, 0)
    game._put_card(y, needed)
    bad = f"{names[x]}:0>{names[y]}"
    assert bad in game.legal_texts() and bad not in server_view.legal
    with pytest.raises(MoveRejected) as info:
        await a.play(bad)
    assert info.value.code == p.ErrorCode.ILLEGAL and info.value.seq == 1
    assert info.value.view == server_view and a.view == server_view  # rebuilt from the rejection
    assert a.next_seq == 1 and (await a.play("T")).seq == 1
    await a.close()
    await b.close()


async def raw_v2(url: str) -> Any:
    ws = await ws_connect(url, proxy=None)
    await ws.send(json.dumps({"type": "hello", "v": 2}))
    assert json.loads(await ws.recv())["type"] == "welcome"
    return ws


async def answer(ws: Any, kind: str) -> dict[str, Any]:
    async with asyncio.timeout(5):
        while True:
            msg: dict[str, Any] = json.loads(await ws.recv())
            if msg["type"] == kind:
                return msg


async def test_moves_for_a_state_the_server_does_not_have_get_out_of_order_with_the_state(url: str) -> None:
    a, b = await racing(url)
    await a.play("T")
    await a.play("T")
    assert a.match is not None and a.token is not None
    stale = await raw_v2(url)  # another client of the seat that knows one move less than it thinks
    await stale.send(json.dumps({"type": "resume", "match": a.match, "token": a.token, "last_ev": 0}))
    assert (await answer(stale, "resumed"))["last_seq"] == 2
    await stale.send(json.dumps({"type": "move", "seq": 5, "move": "T"}))
    rejected = await answer(stale, "rejected")
    assert rejected["code"] == "out_of_order" and rejected["last_seq"] == 2
    assert rejected["view"]["moves"] == 2 and rejected["view"]["stock_count"] == 66
    assert set(rejected) == {"type", "seq", "code", "message", "view", "last_seq"}
    await stale.close()
    await a.close()
    await b.close()


async def test_a_client_cannot_send_a_card(url: str) -> None:
    """The server alone reveals: a move has no place for a card, and any card text is no move."""
    a, b = await racing(url)
    ws = await raw_v2(url)
    assert a.match is not None and a.token is not None
    await a.close()
    await ws.send(json.dumps({"type": "resume", "match": a.match, "token": a.token}))
    await answer(ws, "resumed")
    for frame, code in (
        ({"type": "move", "seq": 1, "move": "T", "reveal": {"W": "KC"}}, "bad_message"),
        ({"type": "reveal", "cards": {"W": "KC"}}, "unknown_type"),
    ):
        await ws.send(json.dumps(frame))
        assert (await answer(ws, "error"))["code"] == code
    for text in ("W=KC", "KC", "A1:0>C2 KC"):
        await ws.send(json.dumps({"type": "move", "seq": 1, "move": text}))
        rejected = await answer(ws, "rejected")
        assert rejected["code"] == "illegal" and rejected["last_seq"] == 0
    await ws.close()
    await b.close()


async def test_random_drops_during_a_race_lose_and_double_no_move(url: str) -> None:
    proxy = await Proxy(int(url.rsplit(":", 1)[1])).start()
    try:
        a, b = await racing(url, a_url=proxy.url)
        rng = random.Random(18)
        line = greedy_line("12345", 200)  # the whole game
        assert len(line) > 30
        sent = 0
        while sent < len(line):
            burst = rng.randint(1, 6)  # pipelined moves, on trust
            for move in line[sent : sent + burst]:
                await a.move(move)
            sent += burst
            if rng.random() < 0.5:
                # in the middle of whatever is on the wire (but not of every resume: a client that
                # cut under every try would give up once RECONNECT_FOR_S has passed, as it should)
                await wait_until(lambda: a.session.holding, what="the seat held again")
                proxy.cut()
            if rng.random() < 0.3:
                await wait_until(lambda: not a.unacked, what="the acks")
        await wait_until(lambda: not a.unacked, what="the last acks")
        assert a.reconnects >= 5 and a.session.divergences == 0
        await a.finish()
        await b.finish()
        result = await a.next_event(p.Result, timeout=20)
        assert result.seats[0].moves == line
        await a.close()
        await b.close()
    finally:
        await proxy.stop()


async def test_the_version_is_chosen_before_a_seat_is_taken(url: str) -> None:
    ws = await ws_connect(url, proxy=None)
    await ws.send(json.dumps({"type": "create"}))  # no hello: v1
    await answer(ws, "created")
    await ws.send(json.dumps({"type": "hello", "v": 2}))
    refused = await answer(ws, "error")
    assert refused["code"] == "wrong_phase" and "before taking a seat" in refused["message"]
    await ws.send(json.dumps({"type": "hello", "v": 1}))  # the version it speaks: fine
    assert (await answer(ws, "welcome"))["type"] == "welcome"
    await ws.send(json.dumps({"type": "hello", "v": 3}))
    assert (await answer(ws, "error"))["code"] == "bad_message"
    await ws.close()
