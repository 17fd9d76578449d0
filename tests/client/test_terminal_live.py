"""The terminal client against a real server: input never waits, rematches, a lost server, the clock."""

from __future__ import annotations

import asyncio
import io
import re

import pytest

import client.api
from client import connect
from client.terminal import HELP, Screen, Style, render_screen, run_terminal
from server import protocol as p
from server.solving import Solving
from tests.client.netkit import Proxy, lines_from, wait_until

HEADER_REDRAW = "\x1b7\x1b[1;1H\x1b[2K"


async def quit_terminal(term: asyncio.Task[int], typed: asyncio.Queue[str]) -> int:
    """Type ``quit``; the terminal client's exit code."""
    typed.put_nowait("quit")
    return await asyncio.wait_for(term, 10)


def start_terminal(
    url: str,
    out: io.StringIO,
    typed: asyncio.Queue[str],
    *,
    interactive: bool,
    bot: str | None = None,
    practice: bool = False,
) -> asyncio.Task[int]:
    return asyncio.create_task(
        run_terminal(
            url, name="Ann", deal=1, bot=bot, practice=practice, lines=lines_from(typed), out=out,
            interactive=interactive, color=False,
        )
    )  # fmt: skip


async def created_code(out: io.StringIO) -> str:
    await wait_until(lambda: "type ready" in out.getvalue(), what="the match is created")
    found = re.search(r"match (\w{8}):", out.getvalue())
    assert found is not None
    return found.group(1)


async def test_interactive_input_never_waits_for_the_server(url: str) -> None:
    out, typed = io.StringIO(), asyncio.Queue[str]()
    term = start_terminal(url, out, typed, interactive=True)
    code = await created_code(out)
    typed.put_nowait("ready")  # nobody else is even seated: the next line must not wait for them
    typed.put_nowait("help")
    await wait_until(lambda: HELP in out.getvalue(), 3, "help answered while the opponent is not ready")
    bob = await connect(url, name="Bob")
    await bob.join(code)
    await bob.ready()
    await wait_until(lambda: "[playing]" in out.getvalue(), what="the start")
    assert "Opponent Bob: waiting" in out.getvalue()  # before Bob's first move too
    # The ticker redraws the whole title line in place, clock and all.
    await wait_until(lambda: f"{HEADER_REDRAW}Devil's Grip race  match {code}" in out.getvalue(), 5)
    typed.put_nowait("T")
    await wait_until(lambda: "played T" in out.getvalue(), what="the ack of T")
    mark = len(out.getvalue())
    typed.put_nowait("finish")
    typed.put_nowait("finish")  # confirmed; Bob plays on: the result is far off
    typed.put_nowait("help")
    await wait_until(lambda: HELP in out.getvalue()[mark:], 3, "help answered before the result")
    assert "Result" not in out.getvalue()
    await bob.finish()
    await wait_until(lambda: "Result" in out.getvalue(), what="the result")
    assert await quit_terminal(term, typed) == 0
    await bob.close()


async def test_a_move_left_unanswered_says_so(
    url: str, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, typed = io.StringIO(), asyncio.Queue[str]()
    term = start_terminal(proxy.url, out, typed, interactive=False, bot="greedy")
    await created_code(out)
    typed.put_nowait("ready")
    await wait_until(lambda: "go!" in out.getvalue(), what="the start")
    monkeypatch.setattr(client.api, "REPLY_TIMEOUT_S", 0.3)
    proxy.stall()  # the server's answers stop coming
    typed.put_nowait("T")
    unanswered = re.compile(r"T: no answer to move 1 \(T\) within 0.3 s")
    # Waiting for the line itself: "T: " alone also occurs earlier on the screen.
    await wait_until(lambda: unanswered.search(out.getvalue()) is not None, what="the move's outcome")
    assert unanswered.search(out.getvalue())
    proxy.flow()
    assert await quit_terminal(term, typed) == 0


async def test_a_script_plays_through_a_rematch(url: str) -> None:
    out, typed = io.StringIO(), asyncio.Queue[str]()
    term = start_terminal(url, out, typed, interactive=False)
    code = await created_code(out)
    bob = await connect(url, name="Bob")
    await bob.join(code)
    for line in ("ready", "T", "finish", "rematch", "ready", "T"):
        typed.put_nowait(line)
    await bob.ready()
    await bob.next_event(p.Start)
    await bob.finish()
    await bob.next_event(p.Result)
    await bob.rematch()
    new = await bob.next_event(p.Rematched)
    await bob.ready()
    progress = await bob.next_event(p.Progress)  # Ann's T, in the new match
    assert progress.seat == 0 and progress.moves == 1
    await wait_until(lambda: out.getvalue().count("played T") >= 2, what="Ann's T in the rematch")
    assert f"match {new.match}  [playing]" in out.getvalue()
    assert await quit_terminal(term, typed) == 0
    await bob.close()


async def test_a_lost_server_is_reported_and_stops_the_clock(
    url: str, proxy: Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client.api, "RECONNECT_FOR_S", 0.3)
    out, typed = io.StringIO(), asyncio.Queue[str]()
    term = start_terminal(proxy.url, out, typed, interactive=True, bot="greedy")
    await created_code(out)
    typed.put_nowait("ready")
    await wait_until(lambda: "[playing]" in out.getvalue(), what="the start")
    await proxy.stop()
    await wait_until(lambda: "connection lost: could not reconnect" in out.getvalue(), what="the loss shown")
    assert "[connection lost]" in out.getvalue()
    mark = len(out.getvalue())
    typed.put_nowait("T")
    await wait_until(lambda: "T: could not reconnect" in out.getvalue()[mark:], what="T refused at once")
    assert await quit_terminal(term, typed) == 1


def lobby(status: str) -> p.Lobby:
    return p.Lobby(
        ev=3, match="34679ACD", variant="classic", solo=False, time_limit_s=600, status=status,  # type: ignore[arg-type]
        seats=[p.SeatInfo(seat=0, name="Ann", ready=True, connected=True),
               p.SeatInfo(seat=1, name="Bob", ready=True, connected=True)],
    )  # fmt: skip


def test_the_clock_stops_at_the_result_and_when_the_connection_is_lost() -> None:
    t0 = 1_000_000
    for stop in ("result", "lost"):
        screen = Screen(match="34679ACD", seat=0, ends_at=t0 + 75_000, lobby=lobby("playing"))
        if stop == "result":
            screen.update(
                p.Result(
                    ev=9, match="34679ACD", variant="classic", seed="1", started_at=t0 - 5000,
                    decided_at=t0, seats=[], winner=None, draw=True,
                )
            )  # fmt: skip
        else:
            screen.connection_lost("could not reconnect", t0)
        assert not screen.clock_running()
        for later in (t0, t0 + 10_000, t0 + 100_000):
            assert "clock 01:15" in render_screen(screen, Style(False), now_ms=later), stop


def test_the_opponent_shows_before_their_first_move() -> None:
    screen = Screen(match="34679ACD", seat=0, lobby=lobby("playing"))
    assert "Opponent Bob: waiting" in render_screen(screen, Style(False), now_ms=0)


async def test_spectator_and_resumed_clocks_run_from_the_snapshot(url: str) -> None:
    a = await connect(url, name="Ann")
    b = await connect(url, name="Bob")
    seated = await a.create(deal=1, time_limit_s=300)
    await b.join(seated.match)
    await a.ready()
    await b.ready()
    start = await a.next_event(p.Start)
    w = await connect(url)
    watching = await w.watch(seated.match)
    assert watching.ends_at == start.ends_at
    spectator = Screen()
    spectator.update(watching)
    assert spectator.ends_at == start.ends_at
    assert "clock 05:00" in render_screen(spectator, Style(False), now_ms=start.started_at)
    await a.close()
    again = await connect(url, name="Ann")
    assert seated.token is not None
    resumed = await again.resume(seated.match, seated.token)
    racer = Screen()
    racer.update(resumed)
    assert racer.seat == 0 and racer.ends_at == start.ends_at
    assert "clock 04:00" in render_screen(racer, Style(False), now_ms=start.started_at + 60_000)
    for c in (again, b, w):
        await c.close()


async def test_a_spectator_s_clock_ticks_and_quit_leaves(url: str) -> None:
    a = await connect(url, name="Ann")
    seated = await a.create(deal=1, bot="greedy")
    await a.ready()
    await a.next_event(p.Start)
    out, typed = io.StringIO(), asyncio.Queue[str]()
    watch = asyncio.create_task(
        run_terminal(url, watch=seated.match, lines=lines_from(typed), out=out, interactive=True, color=False)
    )
    await wait_until(lambda: f"{HEADER_REDRAW}Devil's Grip race  match {seated.match}" in out.getvalue(), 5)
    typed.put_nowait("T")
    await wait_until(lambda: "T: a spectator can only quit" in out.getvalue(), what="a move refused")
    assert await quit_terminal(watch, typed) == 0  # long before the result
    await a.close()


def test_a_racer_away_mid_race_is_marked_and_spectators_are_told_of_the_lag() -> None:
    racing = lobby("playing").model_copy(update={"boards_lag": True})
    away = racing.model_copy(
        update={"seats": [racing.seats[0], racing.seats[1].model_copy(update={"connected": False})]}
    )
    racer = Screen(match="34679ACD", seat=0, lobby=away)
    assert "Opponent Bob: waiting (away)" in render_screen(racer, Style(False), now_ms=0)
    racer.update(p.Progress(ev=9, seat=1, leftover=60, on_grid=36, complete=2, moves=17, finished=False))
    assert "moves 17 (away)" in render_screen(racer, Style(False), now_ms=0)
    spectator = Screen(match="34679ACD", lobby=racing)
    note = "Boards shown as far as both racers have drawn"
    assert note in render_screen(spectator, Style(False), now_ms=0)
    decided = lobby("finished").model_copy(update={"boards_lag": True})
    for over in (decided, racing.model_copy(update={"boards_lag": False})):  # an open stock: no lag
        assert note not in render_screen(Screen(match="34679ACD", lobby=over), Style(False), now_ms=0)


async def test_a_slow_hint_does_not_hold_up_typing(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    thinking, answer = asyncio.Event(), asyncio.Event()

    async def slow_hint(self: object, game: object, asker: str) -> str:
        thinking.set()
        await answer.wait()  # the hint player takes its time
        return "T"

    monkeypatch.setattr(Solving, "hint", slow_hint)
    out, typed = io.StringIO(), asyncio.Queue[str]()
    term = start_terminal(url, out, typed, interactive=True, practice=True)
    await wait_until(lambda: "[playing]" in out.getvalue(), what="the start")
    typed.put_nowait("hint")
    await asyncio.wait_for(thinking.wait(), 5)
    typed.put_nowait("help")
    await wait_until(lambda: HELP in out.getvalue(), 3, "help answered while the hint is thought of")
    assert "hint: T" not in out.getvalue()
    answer.set()
    await wait_until(lambda: "hint: T" in out.getvalue(), 5, "the hint, once it comes")
    assert await quit_terminal(term, typed) == 0


def last_screen(out: io.StringIO) -> str:
    """What the terminal shows now: the text after its last clear-screen."""
    return out.getvalue().rsplit("\x1b[2J", 1)[-1]


async def test_finish_at_a_terminal_asks_to_be_typed_again(url: str) -> None:
    out, typed = io.StringIO(), asyncio.Queue[str]()
    term = start_terminal(url, out, typed, interactive=True, practice=True)
    await wait_until(lambda: "[playing]" in out.getvalue(), what="the start")
    typed.put_nowait("finish")
    await wait_until(lambda: "really finish?" in last_screen(out), 5, "the question")
    typed.put_nowait("T")  # anything else plays on, and the next finish asks again
    await wait_until(lambda: "played T" in last_screen(out), 5, "the ack of T")
    typed.put_nowait("finish")
    await wait_until(lambda: "really finish?" in last_screen(out), 5, "the question, again")
    assert "Result" not in out.getvalue() and "Legal (" in last_screen(out)
    typed.put_nowait("finish")
    await wait_until(lambda: "Result" in last_screen(out), 5, "the result")
    assert "Legal (" not in last_screen(out)  # the game is over: nothing left to play
    assert await quit_terminal(term, typed) == 0
