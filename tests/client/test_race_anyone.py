"""Racing a stranger from the Python client and the terminal: ``race_anyone``, ``play --anyone``, ``live``."""

from __future__ import annotations

import asyncio
import io

import pytest

from client import connect
from client.__main__ import main
from client.api import Client, ClientError
from client.terminal import run_terminal
from server import protocol as p
from tests.client.netkit import lines_from, wait_until


async def test_two_clients_racing_anyone_are_paired_and_rated(url: str) -> None:
    ann, bob = await connect(url, name="Ann"), await connect(url, name="Bob")
    try:
        heard: list[p.Queued] = []
        sa, sb = await asyncio.gather(
            ann.race_anyone(queued=heard.append), bob.race_anyone(variant="classic")
        )
        assert sa.match == sb.match and {sa.seat, sb.seat} == {0, 1} and heard[0].rating == 1500
        assert ann.token == sa.token and ann.match == sa.match
        await asyncio.gather(ann.ready(), bob.ready())
        await ann.next_event(p.Start)
        async with asyncio.timeout(10):  # listed at the server's next write
            while not (live := await bob.live_races()).races:
                await asyncio.sleep(0.05)
        assert [r.match for r in live.races] == [sa.match]
        assert {r.name for r in live.races[0].racers} == {"Ann", "Bob"}
        await ann.resign()
        await bob.finish()
        rated = await bob.next_event(p.Rated)
        assert {s.player for s in rated.seats} == {ann.player, bob.player}
        mine = await bob.ratings()
        assert [(v.variant, v.games, v.wins) for v in mine.variants] == [("classic", 1, 1)]
    finally:
        await ann.close()
        await bob.close()


async def test_a_second_connection_of_the_player_takes_the_place(url: str) -> None:
    first = await connect(url, name="Ann")
    second = await connect(url, hello=False)
    second.player, second.key = first.player, first.key
    await second.hello()
    try:
        waiting = asyncio.create_task(first.race_anyone())
        await wait_until(lambda: first._pairing is not None, what="first waits")
        second_wait = asyncio.create_task(second.race_anyone())
        try:
            await asyncio.wait_for(waiting, 5)
            raise AssertionError("the first connection should have lost its place")
        except ClientError as exc:
            assert "elsewhere" in str(exc)
        second_wait.cancel()
    finally:
        await first.close()
        await second.close()


async def test_the_terminal_races_anyone_and_gets_ready_by_itself(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    readies: list[Client] = []  # who sent ``ready``: once is enough, and a second one may come too late
    send_ready = Client.ready

    async def counted_ready(self: Client) -> None:
        readies.append(self)
        await send_ready(self)

    monkeypatch.setattr(Client, "ready", counted_ready)
    out, typed = io.StringIO(), asyncio.Queue[str]()
    term = asyncio.create_task(
        run_terminal(
            url, name="Ann", anyone=True, lines=lines_from(typed), out=out, interactive=False, color=False
        )
    )
    await wait_until(lambda: "waiting for an opponent" in out.getvalue(), what="the terminal waits")
    bob = await connect(url, name="Bob")
    try:
        await bob.race_anyone()
        await bob.ready()
        await bob.next_event(p.Start)  # the terminal readied without being told
        assert len([c for c in readies if c is not bob]) == 1  # once: a second went after the countdown began
        await bob.resign()
        typed.put_nowait("resign")
        typed.put_nowait("resign")
        await wait_until(lambda: "ratings: " in out.getvalue(), what="the terminal shows the new ratings")
        typed.put_nowait("quit")
        assert await asyncio.wait_for(term, 10) == 0
    finally:
        await bob.close()


async def test_the_live_command_lists_the_races(url: str, capsys: object) -> None:
    code = await asyncio.to_thread(main, ["live", url])
    assert code == 0
    assert "no races being played" in capsys.readouterr().out  # type: ignore[attr-defined]
