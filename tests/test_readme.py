"""README.md runs as written: every command of its shell code blocks, run the way a newcomer pastes
it, with what it does checked (as python-chess checks its documentation with doctests).

A command added to the README without a check here fails ``test_readme_command`` (it names the
command); a check whose command left the README fails ``test_every_check_has_its_readme_command``.

How the commands run: ``bash -c COMMAND`` in a copy of this checkout (its own ``./data``), with a
plain environment: no virtualenv active, nothing on ``PYTHONPATH``, a throwaway ``HOME`` (so the
terminal client's identity file is the test's own). The copy shares this checkout's ``.venv``, as
``dev.py`` finds it built; building it from nothing is what ``.ci/run`` does on a fresh machine.

What the test changes, and only that: the addresses. The README's port 8765 becomes a free port
(written out with ``--port`` or as the client's URL where a command relies on the default), its
Redis URL a throwaway ``redis-server``, and ``CODE`` a match the test opened, as the friend who
sent it. Long-running commands (a server, a bot) are started, checked once ``/healthz`` answers
(or once the bot plays), and stopped with Ctrl-C, which must end them without a traceback.
A server with ``--open`` opens the game through ``$BROWSER``, here a script that notes the URL.

Two commands are not run as written, for a stated reason: ``python3 dev.py test`` is the command
that runs this very test (``.ci/run`` runs it): here it runs with ``--collect-only``, which sets
it up and finds every test without running the suite a second time; ``docker compose up`` needs a
Docker engine: where there is one, ``docker compose config`` checks the file; where there is none
the check is skipped, saying so (``tests/web/test_behind_nginx.py`` runs the same nginx
configuration in front of two servers without Docker).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from client import Client, connect
from server import protocol as p
from tests.conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SHELL_BLOCKS = ("sh", "bash", "shell", "console")
DEFAULT_PORT = 8765
README_REDIS = "redis://127.0.0.1:6379/0"
START_S = 60.0  # a first start may install .venv's packages
STOP_S = 15.0


# ------------------------------------------------------------------------------ the README's commands


@dataclass(frozen=True)
class Line:
    command: str
    comment: str


def without_comment(line: str) -> tuple[str, str]:
    """``line`` split at its shell comment: a ``#`` after a blank, outside quotes."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].strip(), line[i + 1 :].strip()
    return line.strip(), ""


def readme_lines() -> list[Line]:
    """Each command line of README.md's shell code blocks, in order."""
    lines: list[Line] = []
    fence: str | None = None
    for text in README.read_text().splitlines():
        if text.startswith("```"):
            fence = text[3:].strip() if fence is None else None
            continue
        if fence in SHELL_BLOCKS:
            command, comment = without_comment(text)
            if command:
                lines.append(Line(command, comment))
    return lines


# ------------------------------------------------------------------------------ running them


def plain_environment(home: Path) -> dict[str, str]:
    """A shell's environment with no virtualenv active and no display (nothing opens a browser)."""
    # XDG_CONFIG_HOME too: where set, it, not HOME, holds the terminal client's identity file
    dropped = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "XDG_CONFIG_HOME")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        env.pop(k, None)
    venv_bins = {
        str(ROOT / ".venv" / "bin"),
        os.path.join(os.environ.get("VIRTUAL_ENV", "/nonexistent"), "bin"),
    }
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep) if d not in venv_bins)
    env["HOME"] = str(home)
    return env


def copy_checkout(dest: Path) -> Path:
    """This checkout's files, without its virtualenv, data, caches and screenshots; its ``.venv`` linked."""
    skipped = {".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis"}

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n in skipped or n.endswith(".egg-info")}
        if Path(folder) == ROOT:
            skip |= {"data", "build"} & set(names)
        if Path(folder) == ROOT / "docs":
            skip |= {"screenshots"} & set(names)
        return skip

    shutil.copytree(ROOT, dest, ignore=ignore)
    if (ROOT / ".venv").is_dir():
        (dest / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    return dest


class Running:
    """A command started in its own process group; its output (both streams) in a file."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path, command: str) -> None:
        self.proc = proc
        self.log = log
        self.command = command

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    async def wait_for(self, pattern: str, timeout: float = START_S) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.text())
            if found:
                return found
            if self.proc.returncode is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"{self.command!r}: no {pattern!r} (exit {self.proc.returncode}):\n{self.text()}"
                )
            await asyncio.sleep(0.05)

    def type(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())

    async def end(self, timeout: float = START_S) -> int:
        """Its exit status once it ends by itself (stdin closed)."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            return await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.kill()
            raise AssertionError(f"{self.command!r} did not end within {timeout} s:\n{self.text()}") from None

    async def interrupt(self) -> int:
        """Ctrl-C, as a terminal sends it (to the whole process group); its exit status."""
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            code = await asyncio.wait_for(self.proc.wait(), STOP_S)
        except TimeoutError:
            self.kill()
            raise AssertionError(f"{self.command!r} ignored Ctrl-C:\n{self.text()}") from None
        assert "Traceback" not in self.text(), self.text()
        return code

    def kill(self) -> None:
        if self.proc.returncode is None:
            os.killpg(self.proc.pid, signal.SIGKILL)


class Newcomer:
    """A fresh copy of the checkout, a plain shell, and the server the README's clients talk to."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.home = work / "home"
        self.home.mkdir()
        self.checkout = copy_checkout(work / "checkout")
        self.env = plain_environment(self.home)
        self.opened = self.home / "opened"  # what a server's --open asked the browser to show
        opener = self.home / "browser"
        opener.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{self.opened}"\n')
        opener.chmod(0o755)
        self.with_browser = {**self.env, "DISPLAY": ":0", "BROWSER": str(opener)}
        self.request: pytest.FixtureRequest | None = None
        self._server: subprocess.Popen[bytes] | None = None
        self._server_port = 0
        self._started: list[Running] = []

    async def start(self, command: str, env: dict[str, str] | None = None) -> Running:
        log = self.work / f"out-{len(self._started)}.log"
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                "bash", "-c", command, cwd=self.checkout, env=env or self.env,
                stdin=asyncio.subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        running = Running(proc, log, command)
        self._started.append(running)
        return running

    async def run(self, command: str, typed: str = "", timeout: float = START_S) -> tuple[int, str]:
        """Run ``command`` to its end with ``typed`` as its input: its exit status and output."""
        running = await self.start(command)
        if typed:
            running.type(typed)
        code = await running.end(timeout)
        return code, running.text()

    def server_port(self) -> int:
        """The port of a server running for the client commands (as the quick start's would be)."""
        if self._server is None:
            self._server_port = free_port()
            data = self.work / "server-data"
            self._server = subprocess.Popen(
                ["bash", "-c", f"python3 dev.py server --port {self._server_port} --data {data}"],
                cwd=self.checkout, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
            wait_healthy(f"http://127.0.0.1:{self._server_port}/", self._server)
        return self._server_port

    async def browser_opened(self, url: str, timeout: float = 10) -> None:
        """Wait until a server's --open asked the browser for ``url``."""
        deadline = time.monotonic() + timeout
        while not (self.opened.exists() and url in self.opened.read_text().splitlines()):
            opened = self.opened.read_text() if self.opened.exists() else "nothing"
            assert time.monotonic() < deadline, f"the browser was not asked for {url}, only for: {opened}"
            await asyncio.sleep(0.05)

    def fixture(self, name: str) -> Any:
        assert self.request is not None
        return self.request.getfixturevalue(name)

    def close(self) -> None:
        for running in self._started:
            running.kill()
        if self._server is not None:
            os.killpg(self._server.pid, signal.SIGKILL)
            self._server.wait(5)


def wait_healthy(
    url: str, proc: subprocess.Popen[bytes] | None = None, timeout: float = START_S
) -> dict[str, Any]:
    """``GET /healthz`` until it answers 200; its JSON."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}healthz", timeout=2) as r:
                body: dict[str, Any] = json.loads(r.read())
                return body
        except OSError:
            if time.monotonic() > deadline or (proc is not None and proc.poll() is not None):
                raise AssertionError(f"{url}healthz did not answer") from None
            time.sleep(0.05)


async def healthy(url: str) -> dict[str, Any]:
    return await asyncio.to_thread(wait_healthy, url)


def with_port(command: str, port: int) -> str:
    """The command with the README's port 8765 moved to ``port``, written out where it is implied."""
    command = command.replace(f":{DEFAULT_PORT}", f":{port}")
    if re.match(r"python3 dev\.py (serve|server)\b", command) and "--port" not in command:
        command += f" --port {port}"
    return re.sub(
        r"^(python3 dev\.py client (?:play|stats|live))(?! ws://)", rf"\1 ws://127.0.0.1:{port}", command
    )


def network_addresses() -> set[str] | None:
    """This machine's IPv4 addresses on its networks, as ``ip`` lists them (None without ``ip``)."""
    if shutil.which("ip") is None:
        return None
    out = subprocess.run(
        ["ip", "-o", "-4", "addr", "show", "scope", "global"], capture_output=True, text=True
    )
    return set(re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out.stdout))


# ------------------------------------------------------------------------------ the checks

Check = Callable[[Newcomer, Line], Awaitable[None]]
CHECKS: list[tuple[re.Pattern[str], Check]] = []


def checks(pattern: str) -> Callable[[Check], Check]:
    """Register a check for the README commands ``pattern`` matches (in full)."""

    def register(check: Check) -> Check:
        CHECKS.append((re.compile(pattern), check))
        return check

    return register


async def open_match(url: str, name: str, seats: int = 2) -> Client:
    client = await connect(url, name=name)
    await client.create(seats=seats)  # type: ignore[arg-type]
    return client


@contextlib.asynccontextmanager
async def a_race(url: str) -> AsyncIterator[str]:
    """Ann and Bob racing (the match's code): started on entry; both finished, the result in, on exit."""
    ann, bob = await open_match(url, "Ann"), await connect(url, name="Bob")
    try:
        assert ann.match is not None
        await bob.join(ann.match)
        for racer in (ann, bob):
            await racer.ready()
        for racer in (ann, bob):
            await racer.next_event(p.Start, timeout=30)
        yield ann.match
        for racer in (ann, bob):
            await racer.finish()
        await ann.next_event(p.Result)
    finally:
        await ann.close()
        await bob.close()


@checks(r"python3 dev\.py serve")
async def quick_start_server(n: Newcomer, line: Line) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    server = await n.start(with_port(line.command, port), env=n.with_browser)
    await server.wait_for(re.escape(f"listening on {url}"))
    assert (await healthy(url))["status"] == "ok"
    with urllib.request.urlopen(url, timeout=5) as r:
        assert b"<html" in r.read().lower()  # the game's page
    await n.browser_opened(url)  # the game, in the browser
    assert await server.interrupt() == 0


@checks(r"python3 dev\.py test")
async def whole_test_suite(n: Newcomer, line: Line) -> None:
    # The suite itself is what runs this test (.ci/run runs this very command): set up and collected
    # here, not run a second time.
    code, out = await n.run(f"{line.command} --collect-only -q")
    assert code == 0, out
    assert re.search(r"tests/test_readme\.py::test_readme_command", out), out
    assert re.search(r"\d+ tests collected", out), out


@checks(r"python3 dev\.py serve --host 0\.0\.0\.0")
async def server_for_the_network(n: Newcomer, line: Line) -> None:
    port = free_port()
    server = await n.start(with_port(line.command, port), env=n.with_browser)
    printed = (await server.wait_for(r"listening on (http://([\d.]+):(\d+)/)")).groups()
    url, host = printed[0], printed[1]
    assert int(printed[2]) == port
    known = network_addresses()
    if known:  # the address a friend on the network reaches it by, not 0.0.0.0 or this machine's own
        assert host in known, (host, known)
    assert (await healthy(url))["status"] == "ok"  # reachable at the printed address
    await healthy(f"http://127.0.0.1:{port}/")  # and on this machine's own
    await n.browser_opened(url)  # the printed address, not 0.0.0.0
    # a page opened at 127.0.0.1 is handed the network address for the links it shares
    page = await connect(f"ws://127.0.0.1:{port}")
    try:
        welcome = await page.hello()
    finally:
        await page.close()
    assert welcome.share_host == f"{host}:{port}"
    assert await server.interrupt() == 0


@checks(r"python3 dev\.py server")
async def embedded_server(n: Newcomer, line: Line) -> None:
    port = free_port()
    server = await n.start(with_port(line.command, port))
    assert await healthy(f"http://127.0.0.1:{port}/") == {"status": "ok", "bus": True, "store": True}
    assert (n.checkout / "data" / "grip.db").exists()  # SQLite under ./data
    assert await server.interrupt() == 0


@checks(r"python3 dev\.py server --redis redis://127\.0\.0\.1:6379/0")
async def server_on_redis(n: Newcomer, line: Line) -> None:
    import redis

    url = n.fixture("redis_url")  # a throwaway redis-server's empty database, not the README's 6379
    port = free_port()
    server = await n.start(with_port(line.command, port).replace(README_REDIS, url))
    assert await healthy(f"http://127.0.0.1:{port}/") == {"status": "ok", "bus": True, "store": True}
    with redis.Redis.from_url(url) as r:
        assert r.dbsize() > 0  # it keeps its state there
    assert await server.interrupt() == 0


@checks(r"python3 dev\.py server --redis redis://127\.0\.0\.1:7000/0 --redis-replicas 1")
async def server_on_a_cluster(n: Newcomer, line: Line) -> None:
    from tests.cluster import TestCluster

    cluster: TestCluster = n.fixture("redis_cluster")  # the tests' own six nodes, not the README's 7000
    url = n.fixture("cluster_url")
    port = free_port()
    server = await n.start(with_port(line.command, port).replace("redis://127.0.0.1:7000/0", url))
    assert await healthy(f"http://127.0.0.1:{port}/") == {"status": "ok", "bus": True, "store": True}
    async with await open_match(f"ws://127.0.0.1:{port}", "Ann") as ann:
        assert ann.match is not None
        key = f"grip:match:{{{ann.match}}}:events"
    with cluster.master_of(key).client() as master:  # the match lives on the master of its slot
        assert master.exists(key)
    assert await server.interrupt() == 0


@checks(r"docker compose (--profile cluster )?up( cluster-lb)?")
async def docker_compose(n: Newcomer, line: Line) -> None:
    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "compose", "version"], capture_output=True).returncode:
        pytest.skip(
            "no Docker here: `docker compose up` needs a Docker engine. tests/web/test_behind_nginx.py runs "
            "deploy/nginx.conf before two servers sharing a Redis, and tests/scaleout/test_deployment.py "
            "reads docker-compose.yml"
        )
    profile = "--profile cluster " if "--profile cluster" in line.command else ""
    code, out = await n.run(f"docker compose {profile}config --quiet")
    assert code == 0, out


def typed_next() -> tuple[str, str]:
    """The two frames the README says to type after ``hello``: a practice game's ``create``, its ``ready``."""
    said = re.search(
        r"Then `(\{[^`]*\})` opens a practice game and `(\{[^`]*\})`\s+starts it", README.read_text()
    )
    assert said is not None, "README.md no longer says what to type after hello"
    create, ready = (" ".join(frame.split()) for frame in said.groups())
    return create, ready


@checks(r"\.venv/bin/python -m websockets ws://127\.0\.0\.1:8765")
async def play_by_hand(n: Newcomer, line: Line) -> None:
    typed = line.comment.split("then type ", 1)[1]
    session = await n.start(with_port(line.command, n.server_port()))
    await session.wait_for("Connected to")
    session.type(typed + "\n")
    await session.wait_for(r'"type":\s*"welcome"')
    create, ready = typed_next()
    session.type(create + "\n")
    await session.wait_for(r'"type":\s*"lobby".*"solo":\s*true')  # a practice game
    session.type(ready + "\n")
    await session.wait_for(r'"type":\s*"start"')  # started, without a countdown
    assert await session.end() == 0


@checks(r"python3 dev\.py client play")
async def race_a_friend(n: Newcomer, line: Line) -> None:
    url = f"ws://127.0.0.1:{n.server_port()}"
    ann = await n.start(with_port(line.command, n.server_port()))
    code = (await ann.wait_for(r"match (\w{8}): your friend joins with --join (\w{8})"))[1]
    friend = await connect(url, name="Friend")
    try:
        await friend.join(code)
        ann.type("ready\nfinish\nquit\n")
        await friend.ready()
        await friend.next_event(p.Start, timeout=30)
        await friend.finish()
        await ann.wait_for(r"Result")
    finally:
        await friend.close()
    assert await ann.end() == 0
    assert "Friend" in ann.text()


@checks(r"python3 dev\.py client play --bot (greedy|lookahead)")
async def race_a_bot(n: Newcomer, line: Line) -> None:
    code, out = await n.run(with_port(line.command, n.server_port()), "ready\nT\nquit\n")
    assert code == 0, out
    strategy = line.command.rsplit(" ", 1)[1]
    assert f"against the {strategy} bot" in out and "played T" in out
    assert re.search(r"Opponent \w+ bot", out, re.I), out  # the bot the server seated


@checks(r"python3 dev\.py client play --join CODE")
async def join_a_friend(n: Newcomer, line: Line) -> None:
    url = f"ws://127.0.0.1:{n.server_port()}"
    friend = await open_match(url, "Friend")
    try:
        assert friend.match is not None
        bob = await n.start(with_port(line.command, n.server_port()).replace("CODE", friend.match))
        bob.type("ready\nT\nquit\n")
        await friend.ready()
        await bob.wait_for("played T")
    finally:
        await friend.close()
    assert await bob.end() == 0
    assert "Opponent Friend" in bob.text()


@checks(r"python3 dev\.py client play --practice")
async def practice(n: Newcomer, line: Line) -> None:
    code, out = await n.run(with_port(line.command, n.server_port()), "hint\nT\nundo\nfinish\nquit\n")
    assert code == 0, out
    assert "practice, with hint and undo" in out and "wrong_phase" not in out  # no ready needed
    assert re.search(r"hint: \S+", out) and "took back T" in out and "Result" in out


@checks(r"python3 dev\.py client play --anyone")
async def race_anyone(n: Newcomer, line: Line) -> None:
    url = f"ws://127.0.0.1:{n.server_port()}"
    ann = await n.start(with_port(line.command, n.server_port()))
    await ann.wait_for("waiting for an opponent")
    stranger = await connect(url, name="Stranger")
    try:
        await stranger.race_anyone()
        await stranger.ready()  # the terminal got ready by itself
        await stranger.next_event(p.Start, timeout=30)
        await stranger.resign()
        ann.type("resign\nresign\nquit\n")
        await ann.wait_for(r"ratings: .*Stranger 1500 -> \d+")
    finally:
        await stranger.close()
    assert await ann.end() == 0


@checks(r"python3 dev\.py client live")
async def live_races(n: Newcomer, line: Line) -> None:
    """A race being played is listed with its link, and the command it says to watch it with runs
    as written (it said ``python -m client watch LINK``: no ``python`` here, and no .venv active)."""
    url = f"ws://127.0.0.1:{n.server_port()}"
    async with a_race(url) as match, await connect(url) as looker:
        async with asyncio.timeout(15):  # listed at the list's next write (among the other checks' races)
            while match not in {race.match for race in (await looker.live_races()).races}:
                await asyncio.sleep(0.1)
        code, out = await n.run(with_port(line.command, n.server_port()))
        assert code == 0, out
        link = re.search(rf"watch (http://\S+/w/{match})", out)
        told = re.search(r"watch here: (.+ watch) LINK", out)
        assert link and told, out
    code, watched = await n.run(f"{told[1]} {link[1]}")
    assert code == 0, watched
    assert "Result" in watched and "Ann" in watched and "Bob" in watched


@checks(r"python3 dev\.py client watch LINK")
async def watch(n: Newcomer, line: Line) -> None:
    async with a_race(f"ws://127.0.0.1:{n.server_port()}") as match:
        pass
    link = f"http://127.0.0.1:{n.server_port()}/w/{match}"  # as `client live` prints it
    code, out = await n.run(line.command.replace("LINK", link))
    assert code == 0, out
    assert "Result" in out and "Ann: leftover" in out and "Bob: leftover" in out


@checks(r"python3 dev\.py client bot ws://127\.0\.0\.1:8765 --join CODE --strategy (greedy|lookahead)")
async def bot_joins(n: Newcomer, line: Line) -> None:
    url = f"ws://127.0.0.1:{n.server_port()}"
    friend = await open_match(url, "Friend")
    try:
        assert friend.match is not None
        bot = await n.start(with_port(line.command, n.server_port()).replace("CODE", friend.match))
        await bot.wait_for(rf"seated in {friend.match} as seat 1; playing")
        await friend.ready()
        await friend.next_event(p.Start, timeout=30)
        while (await friend.next_event(p.Progress, timeout=30)).moves < 2:
            pass  # the bot plays
        assert await bot.interrupt() == 130  # Ctrl-C: stopped at once
    finally:
        await friend.close()


@checks(r"python3 dev\.py client stats")
async def stats(n: Newcomer, line: Line) -> None:
    code, out = await n.run(with_port(line.command, n.server_port()))
    assert code == 0, out
    player = re.search(r"\(player ([\w-]+)\)", out)
    assert player and "daily streak" in out, out
    # kept where the README says, so the next run is the same player
    kept = re.search(r"keeps your player\s+id in `~/([^`]+)`", README.read_text())
    assert kept is not None, "README.md no longer says where the terminal keeps the player id"
    identity = json.loads((n.home / kept[1]).read_text())
    assert identity["player"] == player[1]
    assert re.search(r"^ratings:", out, re.M), out  # none yet, or those of the rated races above


@checks(r"python3 dev\.py client stats --board")
async def stats_board(n: Newcomer, line: Line) -> None:
    code, out = await n.run(with_port(line.command, n.server_port()))
    assert code == 0, out
    # nobody yet, or those past their provisional races: each page prints the command for the next
    assert re.match(r"classic board of the best: (nobody is on it yet|ranks 1-)", out), out


@checks(r"python3 dev\.py engine deal \d+")
async def engine_deal(n: Newcomer, line: Line) -> None:
    code, out = await n.run(line.command)
    assert code == 0, out
    state = json.loads(out)
    assert len(state["grid"]) == 24 and len(state["stock"]) == 72 and state["leftover"] == 72


@checks(r"python3 dev\.py engine play \d+( \S+)+")
async def engine_play(n: Newcomer, line: Line) -> None:
    code, out = await n.run(line.command)
    assert code == 0, out  # every move of the line is legal
    state = json.loads(out)
    assert {"grid", "waste", "legal", "leftover"} <= set(state)


@checks(r"python3 dev\.py engine solve \d+ --budget-s \d+")
async def engine_solve(n: Newcomer, line: Line) -> None:
    code, out = await n.run(line.command)
    assert code == 0, out
    solved = json.loads(out)
    assert isinstance(solved["par"], int) and isinstance(solved["moves"], list)


@checks(r"\.venv/bin/ruff check \. && \.venv/bin/ruff format --check \. && \.venv/bin/mypy")
async def lint_and_types(n: Newcomer, line: Line) -> None:
    code, out = await n.run(line.command, timeout=300)
    assert code == 0, out


# ------------------------------------------------------------------------------ the tests


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Newcomer]:
    n = Newcomer(tmp_path_factory.mktemp("readme"))
    yield n
    n.close()


def check_for(command: str) -> Check:
    found = [check for pattern, check in CHECKS if pattern.fullmatch(command)]
    assert found, f"README command without a check in tests/test_readme.py: {command}"
    assert len(found) == 1, f"more than one check for {command}: {found}"
    return found[0]


@pytest.mark.parametrize("line", readme_lines(), ids=lambda line: line.command)
async def test_readme_command(line: Line, newcomer: Newcomer, request: pytest.FixtureRequest) -> None:
    newcomer.request = request
    await check_for(line.command)(newcomer, line)


def test_every_check_has_its_readme_command() -> None:
    commands = [line.command for line in readme_lines()]
    unused = [check.__name__ for pattern, check in CHECKS if not any(pattern.fullmatch(c) for c in commands)]
    assert not unused, f"checks for commands the README no longer has: {unused}"


async def test_serve_on_a_free_port_prints_and_opens_it(newcomer: Newcomer) -> None:
    said = re.search(
        r"`(python3 dev\.py serve --port 0)` takes a free port, and prints and opens its address",
        " ".join(README.read_text().split()),
    )
    assert said is not None, "README.md no longer says how to serve on a free port"
    server = await newcomer.start(said[1], env=newcomer.with_browser)
    url = (await server.wait_for(r"listening on (http://127\.0\.0\.1:(\d+)/)"))[1]
    assert not url.endswith(":0/")
    assert (await healthy(url))["status"] == "ok"
    await newcomer.browser_opened(url)
    assert await server.interrupt() == 0


def test_dev_py_help_lists_every_command() -> None:
    assert "`python3 dev.py --help` lists them" in README.read_text()
    out = subprocess.run(
        ["python3", "dev.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True
    ).stdout
    listed = re.findall(r"^  (\w+) ", out, re.M)
    assert listed == ["serve", "test", "server", "client", "engine"], out
    assert all(f"python3 dev.py {name}" in README.read_text() for name in listed)


def test_the_server_options_default_as_the_readme_says() -> None:
    from server.__main__ import parse_args

    text = " ".join(README.read_text().split())
    options = text.split("Options: ", 1)[1].split(" See [docs/deploy.md]", 1)[0]
    said = dict(re.findall(r"`--([\w-]+)[^`]*` \([^()]*?, (\d+)\)", options))
    said |= dict(re.findall(r"`--(host|port|data) ([^`]+)`", options.split("Defaults: ", 1)[1]))
    assert said.keys() == {"grace-s", "rate", "max-per-address", "host", "port", "data"}, said
    websockets_level = logging.getLogger("websockets").level
    try:
        settings, opens = parse_args([])
    finally:  # parse_args sets the process's logging up, as the server's start does
        logging.getLogger("websockets").setLevel(websockets_level)
    assert not opens  # only `serve` adds --open
    assert settings.grace_ms == int(said["grace-s"]) * 1000
    assert settings.rate_per_s == float(said["rate"])
    assert settings.max_per_address == int(said["max-per-address"])
    assert (settings.host, settings.port) == (said["host"], int(said["port"]))
    assert settings.store_url == f"sqlite:///{(Path(said['data']) / 'grip.db').resolve()}"


def test_the_quick_start_is_two_commands() -> None:
    text = README.read_text()
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = quick.split("```sh\n", 1)[1].split("```", 1)[0]
    assert [without_comment(x)[0] for x in block.splitlines()] == [
        "python3 dev.py serve",
        "python3 dev.py test",
    ]
