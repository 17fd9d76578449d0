"""``python -m client stats`` against a real server: the identity is kept, the figures printed."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from client.api import connect
from server import protocol as p
from tests.store_events import filled_board


async def stats_of(url: str, identity_file: Path) -> str:
    """What ``client stats`` prints, run as a subprocess that does not block this loop (it runs the server)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client", "stats", url, "--identity", str(identity_file),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, stderr.decode()
    return stdout.decode()


async def test_stats_command_prints_the_players_figures(url: str, tmp_path: Path) -> None:
    identity_file = tmp_path / "identity.json"
    me = await connect(url, name="Ann", identity_file=identity_file)
    games = []
    for seats in (2, 1):  # a race against a bot, then a practice game
        await me.create(seats=seats, seed="3", bot="greedy" if seats == 2 else None)
        await me.ready()
        await me.next_event(p.Start)
        await me.play("T")
        await me.finish()
        games.append(await me.next_event(p.Result))
    result, practice = games
    await me.close()
    assert identity_file.stat().st_mode & 0o077 == 0  # the key stays private

    out = await stats_of(url, identity_file)
    assert out.startswith("Ann")
    assert "classic: 1 played" in out and f"mean {result.seats[0].score:.1f} left" in out
    assert f"classic practice (not counted above): 1 played, best {practice.seats[0].score}" in out
    page = url.replace("ws://", "http://")
    for game in games:
        assert f"replay {page}/r/{game.match}" in out  # the last games, with their replay pages
    assert "0 cleared (0 left)" in out  # games won outright: races won are head to head
    assert "; no game graded;" in out  # 71 or 72 left: no grade (not "none rated", as if about ratings)
    # the same identity file brings the same player back
    again = await connect(url, identity_file=identity_file)
    assert again.player == me.player
    await again.close()


async def test_a_newcomer_s_stats_say_there_is_nothing_yet_and_how_to_play(url: str, tmp_path: Path) -> None:
    """A fresh identity's stats were a name and "daily streak: 0 (best 0)", and nothing more."""
    assert "no finished games yet: race (client play)" in await stats_of(url, tmp_path / "new.json")


async def test_stats_show_the_ratings_the_web_page_shows(url: str, tmp_path: Path) -> None:
    """The terminal's stats had no ratings while the web page's showed them: the same ``ratings`` now."""
    ann_file = tmp_path / "ann.json"
    assert "ratings: no rated races yet: race anyone (client play --anyone)" in await stats_of(url, ann_file)
    ann = await connect(url, name="Ann", identity_file=ann_file)
    bob = await connect(url, name="Bob", identity_file=tmp_path / "bob.json")
    seated = await ann.create(rated=True)
    await bob.join(seated.match)
    await ann.ready()
    await bob.ready()
    await ann.next_event(p.Start)
    await ann.resign()
    await bob.finish()
    await ann.next_event(p.Rated)
    ratings = await ann.ratings()
    await ann.close()
    await bob.close()
    (classic,) = ratings.variants
    assert classic.provisional and classic.games == 1 and classic.losses == 1
    out = await stats_of(url, ann_file)
    assert (
        f"ratings:\n  classic: {classic.rating}? provisional; 1 rated race: 0 won, 1 lost, 0 drawn\n" in out
    )


async def client_stats(url: str, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client", "stats", url, *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, stdout.decode(), stderr.decode()


async def test_stats_page_the_board_of_the_best_by_cursor(
    start_app: Callable[..., Any], tmp_path: Path
) -> None:
    data = tmp_path / "grip.db"
    best_first = filled_board(str(data), 45)
    app = await start_app(store_url=f"sqlite:///{data}")
    url = f"ws://127.0.0.1:{app.port}"
    identity_file = str(tmp_path / "me.json")
    shown: list[str] = []
    command = ["--board", "--limit", "20", "--identity", identity_file]
    for first, last in ((1, 20), (21, 40), (41, 45)):
        code, out, err = await client_stats(url, *command)
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0] == f"classic board of the best: ranks {first}-{last} of 45"
        shown += [line.rsplit("player ", 1)[1].rstrip(")") for line in lines[1 : 1 + last - first + 1]]
        follow = [line for line in lines if line.startswith("next page: ")]
        if last == 45:
            assert follow == []
            break
        # the command printed is the one to run: its --after is the page's cursor
        (line,) = follow
        assert line.startswith(
            f"next page: client stats {url.replace('ws://', 'http://')} --board classic --after "
        )
        command = [
            "--board",
            "classic",
            "--after",
            line.rsplit(" ", 1)[1],
            "--limit",
            "20",
            "--identity",
            identity_file,
        ]
    assert shown == best_first  # every player once, in the board's order
    code, _, err = await client_stats(url, "--board", "--after", "1..5:p01", "--identity", identity_file)
    assert code == 1 and "is not a page's next" in err, err
    code, _, err = await client_stats(url, "--after", "1.5:p01", "--identity", identity_file)
    assert code == 2 and "--board" in err
