"""``python -m client`` meets failures with a clear message and a non-zero exit, never a traceback."""

from __future__ import annotations

import asyncio
import io
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.sync.server import ServerConnection as SyncConnection
from websockets.sync.server import serve as sync_serve

import client.api
from client import ConnectionLost, connect
from client.__main__ import main, parse_args
from client.terminal import run_terminal

ROOT = Path(__file__).resolve().parents[2]


async def echo(ws: ServerConnection) -> None:
    async for message in ws:
        await ws.send(message)


@pytest.fixture
async def echo_url() -> AsyncIterator[str]:
    """A WebSocket server that is no race server: it says back what it hears."""
    async with serve(echo, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}"


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A WebSocket server that never answers (in a thread: ``main`` runs its own event loop)."""

    def ignore(ws: SyncConnection) -> None:
        for _ in ws:
            pass

    with sync_serve(ignore, "127.0.0.1", 0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"ws://127.0.0.1:{server.socket.getsockname()[1]}"
        server.shutdown()


async def test_a_server_that_is_no_race_server_is_named(echo_url: str) -> None:
    with pytest.raises(ConnectionLost, match="no race server's"):
        await asyncio.wait_for(connect(echo_url), 5)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client", "play", echo_url,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env=env, cwd=ROOT,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 1
    assert "Traceback" not in err.decode() and "no race server's" in err.decode()


def test_no_answer_is_an_error_message(
    silent_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(client.api, "REPLY_TIMEOUT_S", 0.3)
    assert main(["bot", silent_url, "--join", "34679ACD"]) == 1
    assert "error: no answer to hello within 0.3 s" in capsys.readouterr().err


def test_match_codes_are_upper_cased_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_args(["bot", "ws://h", "--join", "34679acd"]).join == "34679ACD"
    assert parse_args(["bot", "--join", "34679ACD"]).url == client.api.DEFAULT_URL  # as play, live, watch
    assert parse_args(["watch", "ws://h", " 34679acd "]).code == "34679ACD"
    with pytest.raises(SystemExit) as info:
        main(["watch", "ws://h", "ABC"])
    assert info.value.code == 2
    assert "'ABC' is not a match code" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["play", "--variant", "klondike"], "--variant"),
        (["play", "--deal", "-5"], "--deal"),
        (["play", "--deal", "x"], "--deal"),
        (["play", "--join", "34679ACD", "--bot", "greedy"], "not allowed with argument"),
    ],
)
def test_a_bad_play_option_is_named(argv: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        parse_args(argv)
    assert info.value.code == 2
    assert named in capsys.readouterr().err


async def test_joining_an_unknown_match_says_so_once(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert await run_terminal(url, join="34679ACD", out=out, interactive=False, color=False) == 1
    err = capsys.readouterr().err
    assert "error: not_found" in err
    assert "not_found" not in out.getvalue()


@pytest.mark.parametrize("command", ["play", "watch", "bot", "live", "stats"])
def test_each_command_s_help_says_what_its_url_is(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`play --help` listed a bare "url": what address, and what it is when left out, said nowhere."""
    with pytest.raises(SystemExit):
        parse_args([command, "--help"])
    usage = " ".join(capsys.readouterr().out.split())
    assert "url the server's WebSocket address" in usage
    assert client.api.DEFAULT_URL in usage


@pytest.mark.parametrize(
    ("argv", "url", "code"),
    [
        (["http://h:1/w/34679acd"], "ws://h:1/ws", "34679ACD"),  # as `live` prints it
        (["https://grip.example/m/34679ACD/"], "wss://grip.example/ws", "34679ACD"),  # a share link
        (["34679acd"], client.api.DEFAULT_URL, "34679ACD"),
        (["ws://h:2", "34679ACD"], "ws://h:2", "34679ACD"),
    ],
)
def test_watch_takes_a_link_a_code_or_an_address_and_a_code(argv: list[str], url: str, code: str) -> None:
    args = parse_args(["watch", *argv])
    assert (args.url, args.code) == (url, code)


@pytest.mark.parametrize("argv", [[], ["ws://h:2"], ["http://h:1/x/34679ACD"]])
def test_watch_without_a_match_says_what_it_takes(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        parse_args(["watch", *argv])
    assert info.value.code == 2
    assert "watch needs a link (http://HOST/w/CODE" in capsys.readouterr().err
