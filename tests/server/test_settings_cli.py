"""``python -m server``'s options: one for every setting, made from ``Settings``, as ``--help`` and the docs say."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.__main__ import NOT_OPTIONS, parse_args
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = [f for f in dataclasses.fields(Settings) if f.name not in NOT_OPTIONS]


@pytest.fixture(autouse=True)
def logging_kept() -> Iterator[None]:
    """parse_args sets the process's logging up, as the server's start does: put it back."""
    level = logging.getLogger("websockets").level
    yield
    logging.getLogger("websockets").setLevel(level)


def flag(f: dataclasses.Field[object]) -> str:
    return f.metadata["flag"] or "--" + f.name.replace("_", "-")


def other_value(f: dataclasses.Field[object]) -> tuple[list[str], object]:
    """Arguments that set ``f`` to something not its default, and that value."""
    default = f.default
    if f.name == "metrics":
        return ["127.0.0.1:9100"], ("127.0.0.1", 9100)
    if f.name == "proxies":
        return ["10.0.0.0/8", "192.0.2.7"], ("10.0.0.0/8", "192.0.2.7")
    if f.name == "origins":
        return ["https://a.example", "http://b.example:8080"], ("https://a.example", "http://b.example:8080")
    if f.name == "web_root":
        return ["/srv/grip-web"], Path("/srv/grip-web")
    if isinstance(default, tuple):
        return ["a", "b"], ("a", "b")
    if isinstance(default, bool):
        raise AssertionError(f"no boolean settings yet: {f.name}")
    if isinstance(default, int) or default is None:
        value = (default or 0) + 7
        return [str(value)], value
    if isinstance(default, float):
        return [str(default + 0.25)], default + 0.25
    assert isinstance(default, str), f.name
    return [default + "x"], default + "x"


def test_every_setting_has_an_option_that_sets_it() -> None:
    argv = ["--redis", "redis://127.0.0.1:6379/0"]  # --redis-replicas takes --redis
    wanted = {}
    for f in OPTIONS:
        values, wanted[f.name] = other_value(f)
        for value in values:
            argv += [flag(f), value]
    settings, _ = parse_args(argv)
    assert {name: getattr(settings, name) for name in wanted} == wanted
    assert settings.bus_url == settings.store_url == "redis://127.0.0.1:6379/0"


def test_burst_follows_rate_unless_given() -> None:
    assert parse_args(["--rate", "100"])[0].burst == 200
    assert parse_args(["--rate", "2"])[0].burst == 10
    assert parse_args(["--rate", "100", "--burst", "7"])[0].burst == 7
    assert parse_args([])[0].burst == Settings().burst


def test_help_shows_each_default_as_parse_args_takes_it(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    entries = {  # each option's entry, on one line: its flag, its metavar, its help
        entry.split()[0]: " ".join(entry.split()[2:])
        for entry in re.split(r"\n  (?=--)", capsys.readouterr().out)[1:]
    }
    settings, _ = parse_args([])
    for f in OPTIONS:
        entry = entries.get(flag(f))
        assert entry is not None, f"--help has no {flag(f)}"
        said = re.search(r"\(default: ([^()]*)\)$", entry)
        value = getattr(settings, f.name)
        if f.metadata["shown"]:
            assert said and said[1] == f.metadata["shown"], entry
        elif isinstance(value, tuple):
            assert said is None and value == (), entry  # repeatable: none unless given
        else:
            assert said and said[1] == str(value), (f.name, entry)
            assert value == f.default  # the field's own default, as the tests' Settings() has it


def test_the_docs_list_every_option_with_its_default() -> None:
    text = (ROOT / "docs" / "deploy.md").read_text()
    table = text.split("## Every setting", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(--[a-z-]+)[^`]*` \| ([^|]*?) \|", table, re.M))
    assert set(rows) == {flag(f) for f in OPTIONS} | {"--data", "--redis", "--grace-s", "--open", "--log"}
    for f in OPTIONS:
        shown = f.metadata["shown"] or ("" if isinstance(f.default, tuple) else str(f.default))
        if f.name == "web_root":
            shown = "client/web"
        assert rows[flag(f)] == shown, (f.name, rows[flag(f)])


async def test_an_option_reaches_the_running_server(tmp_path: Path) -> None:
    """``--open-timeout-s``: a socket that says nothing is closed after it (5 s by default)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "--port", "0", "--data", str(tmp_path), "--log", "WARNING",
        "--open-timeout-s", "0.2",
        stdout=asyncio.subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(20):
            line = (await proc.stdout.readline()).decode()
        found = re.search(r"listening on http://([\d.]+):(\d+)/", line)
        assert found, line
        reader, writer = await asyncio.open_connection(found[1], int(found[2]))
        async with asyncio.timeout(3):  # well before 5 s
            await reader.read()  # to the end: the server closed it
        writer.close()
    finally:
        proc.terminate()
        await proc.wait()
