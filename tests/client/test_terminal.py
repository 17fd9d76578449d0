"""The terminal client: rendering and completion as functions, and a piped race in a subprocess."""

from __future__ import annotations

import asyncio
import io
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from client.api import connect
from client.terminal import (
    HELP,
    Screen,
    Style,
    completions,
    format_live,
    normalize,
    render_board,
    render_result,
    render_screen,
    run_terminal,
)
from server import protocol as p
from server.engine import ClientGame, Game

ROOT = Path(__file__).resolve().parents[2]


def view_of(seed: str, moves: list[str] = []) -> p.View:  # noqa: B006
    game = Game.replay(seed, "classic", moves)
    return p.View.model_validate(game.player_view())


def test_board_shows_every_pile_waste_and_stock() -> None:
    view = view_of("1", ["T"])
    text = "\n".join(render_board(view, Style(False)))
    for pile in view.grid.values():
        assert pile[0] in text
    assert "Waste" in text and f"Stock {view.stock_count}" in text and "Leftover 72" in text
    assert "\x1b[" not in text


def test_colour_marks_red_suits_and_tops() -> None:
    text = "\n".join(render_board(view_of("1"), Style(True)))
    assert "\x1b[31;1m" in text  # a red top card (seed 1 has hearts and diamonds)
    assert "\x1b[1m" in text


def test_home_marks_only_piles_on_their_rows_base_rank() -> None:
    underline = re.compile(r"\x1b\[(?:\d+;)*4m")  # the home mark
    # Deal 1 has no 2 in row A, 3 in B or 4 in C: 8C in A2, 9H in B6, TH in C3 are on no base rank.
    assert not underline.search("\n".join(render_board(view_of("1"), Style(True))))
    assert underline.search("\n".join(render_board(view_of("1", ["A4~B1"]), Style(True))))  # 3S home in B


def test_a_card_still_to_come_is_drawn() -> None:
    game = ClientGame.from_view(Game.new("1").player_view())
    game.play("B2:0>B1")  # B2 refilled from the stock: the card comes with the server's ack (v2)
    text = "\n".join(render_board(p.View.model_validate(game.player_view()), Style(True)))
    assert "??" in text


def test_screen_shows_opponent_progress_and_clock() -> None:
    screen = Screen(match="34679ACD", seat=0, view=view_of("1"), ends_at=1_000_000 + 75_000)
    screen.update(
        p.Lobby(
            ev=3, match="34679ACD", variant="classic", solo=False, time_limit_s=600, status="playing",
            seats=[p.SeatInfo(seat=0, name="Ann", ready=True, connected=True),
                   p.SeatInfo(seat=1, name="Bob", ready=True, connected=True)],
        )
    )  # fmt: skip
    screen.update(p.Progress(ev=9, seat=1, leftover=60, on_grid=36, complete=2, moves=17, finished=False))
    text = render_screen(screen, Style(False), now_ms=1_000_000)
    assert "clock 01:15" in text
    assert "Opponent Bob: leftover 60, on grid 36, complete 2, moves 17" in text
    assert "Legal (" in text


def test_an_opponent_whose_game_ended_shows_finished() -> None:
    """Its game over (out of moves, finished, resigned) before any move, or before its progress
    said so: the opponent's line said "waiting" (no move yet) or nothing, beside the result."""
    lobby = p.Lobby(
        ev=3, match="34679ACD", variant="classic", solo=False, time_limit_s=600, status="playing",
        seats=[p.SeatInfo(seat=0, name="Ann", ready=True, connected=True),
               p.SeatInfo(seat=1, name="Bob", ready=True, connected=True)],
    )  # fmt: skip
    finished = p.Finished(ev=6, seat=1, score=60, reason="over", at=6)
    screen = Screen(match="34679ACD", seat=0, view=view_of("1"), ends_at=1, lobby=lobby)
    assert "Opponent Bob: waiting" in render_screen(screen, Style(False), now_ms=0)
    screen.update(finished)
    text = render_screen(screen, Style(False), now_ms=0)
    assert "Opponent Bob: finished" in text and "Bob: waiting" not in text
    screen = Screen(match="34679ACD", seat=0, view=view_of("1"), ends_at=1, lobby=lobby)
    screen.update(p.Progress(ev=4, seat=1, leftover=60, on_grid=36, complete=2, moves=17, finished=False))
    screen.update(finished)
    text = render_screen(screen, Style(False), now_ms=0)
    assert "Opponent Bob: leftover 60, on grid 36, complete 2, moves 17 finished" in text


def test_completion_offers_legal_moves_and_commands() -> None:
    legal = view_of("1", ["T"]).legal
    assert completions("", legal)[: len(legal)] == legal
    assert completions("t", legal) == ["T"]
    assert all(m.startswith("W>") for m in completions("w>", legal))
    assert completions("fi", legal) == ["finish"]
    assert normalize(" w>b3 ") == "W>B3" and normalize("Ready") == "ready"


async def lines(*texts: str) -> AsyncIterator[str]:
    for text in texts:
        yield text


async def test_in_process_race_against_a_bot(url: str) -> None:
    out = io.StringIO()
    code = await run_terminal(
        url, bot="greedy", deal=1, lines=lines("ready", "t", "A1:0>A1", "finish"), out=out,
        interactive=False, color=False,
    )  # fmt: skip
    text = out.getvalue()
    assert code == 0
    assert "played T" in text and "illegal" in text
    assert "Result" in text and "Greedy bot" in text and "*winner*" in text
    assert text.count("Result") == 1  # the bot's end, the result, the finish's answer: said once
    # each game's end names whose it was, as the result does (it said "seat 0 finished")
    assert "you finished: " in text and "Greedy bot finished: " in text and "seat " not in text


async def test_practice_from_the_terminal_with_hint_and_undo(url: str) -> None:
    out = io.StringIO()
    code = await run_terminal(
        url, practice=True, deal=1, lines=lines("hint", "T", "undo", "finish"), out=out,
        interactive=False, color=False,
    )  # fmt: skip
    text = out.getvalue()
    assert code == 0
    assert "practice, with hint and undo" in text
    assert re.search(r"hint: \S+", text) and text.count("took back T") == 1  # a note is said once
    assert "Player: 72 left" in text  # the T taken back, nothing had left the stock or the grid


async def test_practice_starts_at_once_on_the_web_page_s_clock(url: str) -> None:
    """No ``ready`` to type (the web page starts practice at once too), and the same hour's clock."""
    out = io.StringIO()
    code = await run_terminal(
        url, practice=True, deal=1, lines=lines("hint", "finish"), out=out, interactive=False, color=False
    )
    text = out.getvalue()
    assert code == 0
    assert "type ready" not in text and "wrong_phase" not in text
    assert re.search(r"hint: [A-C0-9W:>~T]+", text)  # asked before anything else: the game was on
    first_clock = re.search(r"\[playing\]  clock (\d\d):(\d\d)", text)
    assert first_clock is not None
    assert p.MAX_TIME_LIMIT_S - 5 <= int(first_clock[1]) * 60 + int(first_clock[2]) <= p.MAX_TIME_LIMIT_S
    assert p.MAX_TIME_LIMIT_S == 3600  # what client/web/js/app.js asks for its practice games


async def test_piped_practice_says_practice_and_its_result_once(url: str) -> None:
    """A practice game is no race: its heading says practice, from the first screen, and no
    countdown shows; the transcript writes its result once (each event after it wrote the
    whole screen again, the result 3 or 4 times over)."""
    out = io.StringIO()
    code = await run_terminal(
        url,
        practice=True,
        deal=1,
        lines=lines("T", "finish", "help"),
        out=out,
        interactive=False,
        color=False,
    )
    text = out.getvalue()
    assert code == 0
    headers = [line for line in text.splitlines() if line.startswith("Devil's Grip")]
    assert headers and all(line.startswith("Devil's Grip practice  match ") for line in headers), headers
    assert "race" not in " ".join(headers) and "countdown" not in text and "get ready" not in text
    assert text.count("Result") == 1 and "  Player: 72 left (finish)" in text
    after = text.split("Result", 1)[1]
    assert "Leftover" not in after  # nothing of the board again after the result
    assert after.rstrip().endswith(HELP)  # a note after the result is still written, alone


def test_the_legal_moves_wrap_between_moves_and_go_once_the_game_is_over() -> None:
    view = view_of("1")
    screen = Screen(match="34679ACD", seat=0, view=view, ends_at=1)
    unwrapped = render_screen(screen, Style(False), now_ms=0).splitlines()
    assert max(len(line) for line in unwrapped if line.startswith("Legal (")) > 120  # too long for one line
    shown_lines = render_screen(screen, Style(False), now_ms=0, width=120).splitlines()
    start = next(n for n, line in enumerate(shown_lines) if line.startswith("Legal ("))
    legal_lines = shown_lines[start : start + 2]
    assert legal_lines[1].startswith("  ") and all(len(line) <= 120 for line in legal_lines)
    shown = " ".join(legal_lines).split(": ", 1)[1].split()
    assert len(shown) == 17 and shown[-1] == "..." and set(shown[:-1]) <= set(view.legal)  # whole moves
    screen.update(p.Finished(ev=9, seat=0, score=72, reason="finish", at=5))
    assert "Legal (" not in render_screen(screen, Style(False), now_ms=0, width=120)
    screen = Screen(match="34679ACD", seat=0, view=view.model_copy(update={"over": True}), ends_at=1)
    assert "Legal (" not in render_screen(screen, Style(False), now_ms=0, width=120)


async def play_piped(url: str, script: str, *options: str) -> str:
    """``python -m client play URL --bot greedy --name Pipe OPTIONS`` with ``script`` piped in; its stdout."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client", "play", url, "--bot", "greedy", "--name", "Pipe", *options,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT,
    )  # fmt: skip
    async with asyncio.timeout(40):
        out, err = await proc.communicate(script.encode())
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_piped_stdin_in_a_subprocess_then_watch(url: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    text = await play_piped(url, "ready\nT\nT\nfinish\nquit\n", "--deal", "2")
    assert "played T" in text and "Result" in text and "Pipe" in text
    assert "your friend joins" not in text  # the opponent is the server's bot
    code = re.search(r"match (\w{8}): against the greedy bot", text).group(1)  # type: ignore[union-attr]
    # Spectating a decided match shows its boards and result, then ends.
    watch = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client", "watch", url, code, stdout=asyncio.subprocess.PIPE, env=env, cwd=ROOT
    )
    wout, _ = await asyncio.wait_for(watch.communicate(), 30)
    assert watch.returncode == 0
    assert "Result" in wout.decode() and "Greedy bot: leftover" in wout.decode()


def test_a_result_decided_by_the_earlier_finish_says_so() -> None:
    def seat(n: int, name: str, reason: str, at: int) -> p.SeatResult:
        return p.SeatResult(
            seat=n,
            name=name,
            score=72,
            rating=None,
            on_grid=24,
            complete=0,
            reason=reason,
            finished_at=at,
            moves=[],
        )

    tied = p.Result(
        ev=9, match="34679ACD", variant="classic", seed="1", started_at=0, decided_at=9,
        seats=[seat(0, "Ann", "finish", 5), seat(1, "Bob", "finish", 8)], winner=0, draw=False,
    )  # fmt: skip
    assert "  the same leftover: Ann's game ended first" in render_result(tied, Style(False))
    assert "  Ann: 72 left (finish) *winner*" in render_result(tied, Style(False))  # no grade: nothing said
    good = seat(0, "Ann", "finish", 5).model_copy(update={"rating": "good"})
    graded = tied.model_copy(update={"seats": [good]})
    assert "  Ann: 72 left (finish, good) *winner*" in render_result(graded, Style(False))
    resigned = tied.model_copy(update={"seats": [seat(0, "Ann", "finish", 8), seat(1, "Bob", "resign", 5)]})
    assert not any("ended first" in line for line in render_result(resigned, Style(False)))  # resigning loses


def test_the_live_list_counts_one_race_as_one() -> None:
    racer = p.LiveRacer(seat=0, name="Ann", rating=None, leftover=70, moves=3, finished=False)
    race = p.LiveRace(
        match="34679ACD", variant="classic", time_limit_s=600, rated=False, started_at=0, ends_at=600_000,
        racers=[racer, racer.model_copy(update={"seat": 1, "name": "Bob"})],
    )  # fmt: skip
    one = format_live(p.Live(order="newest", races=[race], total=1), "http://h:1")
    assert one.splitlines()[0] == "1 race being played (newest first):"
    two = format_live(p.Live(order="newest", races=[race, race], total=2), "http://h:1")
    assert two.splitlines()[0] == "2 races being played (newest first):"


def test_a_spectator_s_board_held_back_says_how_far_it_is_beside_the_live_numbers() -> None:
    """The title's numbers are live (progress); the board under them may be behind: it says so."""
    screen = Screen(match="34679ACD")
    screen.update(
        p.Lobby(
            ev=3, match="34679ACD", variant="classic", solo=False, time_limit_s=600, status="playing",
            seats=[p.SeatInfo(seat=0, name="Ann", ready=True, connected=True),
                   p.SeatInfo(seat=1, name="Bob", ready=True, connected=True)],
            boards_lag=True,
        )
    )  # fmt: skip
    screen.boards = {0: view_of("1", ["T"]), 1: view_of("1")}
    screen.update(p.Progress(ev=9, seat=0, leftover=69, on_grid=24, complete=0, moves=1, finished=False))
    screen.update(p.Progress(ev=11, seat=1, leftover=66, on_grid=24, complete=0, moves=2, finished=False))
    text = render_screen(screen, Style(False), now_ms=0)
    assert "Ann: leftover 69, on grid 24, complete 0, moves 1\n" in text  # shown whole: nothing held
    assert "Bob: leftover 66, on grid 24, complete 0, moves 2; the board below shows 0 of 2 moves" in text


async def test_watch_takes_the_link_live_prints(url: str) -> None:
    """`live` printed web links and `watch` wanted a ws:// address and a code: it takes the link now."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    async def client_says(*argv: str) -> str:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client", *argv, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env, cwd=ROOT,
        )  # fmt: skip
        out, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        return out.decode()

    async with await connect(url, name="Ann") as ann, await connect(url, name="Bob") as bob:
        seated = await ann.create(seed="2")
        await bob.join(seated.match)
        await ann.ready()
        await bob.ready()
        await ann.next_event(p.Start)
        async with asyncio.timeout(15):  # listed at the next write of the list (``live_every_s``)
            while not (await ann.live_races()).races:
                await asyncio.sleep(0.1)
        listed = await client_says("live", url.replace("ws://", "http://"))
        link = re.search(r"watch (http://\S+)", listed).group(1)  # type: ignore[union-attr]
        assert link.endswith(f"/w/{seated.match}") and "python -m client watch LINK" in listed
        await ann.play("T")
        await ann.finish()
        await bob.resign()
        await ann.next_event(p.Result)
    watched = await client_says("watch", link)
    assert f"match {seated.match}" in watched and "Result" in watched and "Ann" in watched


async def test_a_piped_transcript_says_each_refusal_and_each_move_once(url: str, tmp_path: Path) -> None:
    """Piped, a command's outcome is written once: a request the server refuses (a move before
    the start, a hint in a race) and a move's ack each came both as the command's answer and as an
    event, and the transcript wrote each twice, a screen apiece."""
    script = "T\nready\nhint\nundo\nT\nfinish\nquit\n"
    text = await play_piped(url, script, "--deal", "1", "--identity", str(tmp_path / "identity.json"))
    notes = [line for line in text.splitlines() if not line.startswith((" ", "Devil's Grip"))]
    assert text.count("wrong_phase: the race has not started") == 1, notes
    assert text.count("hint: not_allowed: hints are for practice games only") == 1, notes
    assert text.count("not_allowed: hints") == 1, notes
    assert text.count("undo: not_allowed: undo is for practice games only") == 1, notes
    assert text.count("played T") == 1, notes
    assert text.count("Result") == 1, notes
