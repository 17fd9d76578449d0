"""Bad input to ``python -m server``: refused with one line naming the option, never a traceback.

Each case runs the real command line in a subprocess. A value no setting may
hold is argparse's usage error (status 2) before anything starts; what can
only be known at start (a host that does not resolve, a ``--data`` that
cannot hold the store) exits with status 1 and one line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]

#: A value the option may not hold, and words its refusal must have.
USAGE_ERRORS = [
    (["--proxy", "999.1.1.1/8"], "not an IP address or network"),
    (["--proxy", "10.0.0.0/33"], "not an IP address or network"),
    (["--port", "99999"], "0 to 65535"),
    (["--port", "-5"], "negative"),
    (["--metrics", "127.0.0.1:99999"], "0 to 65535"),
    (["--redis", "foo://x"], "redis://"),
    (["--grace-s", "-1"], "negative"),
    (["--rate", "-1"], "negative"),
    (["--max-per-address", "-3"], "negative"),
    (["--identities-per-hour", "-0.5"], "negative"),
    (["--sweep-s", "0"], "more than 0"),
    (["--open-timeout-s", "0"], "more than 0"),
    (["--origin", "notaurl"], "an origin is"),
    (["--origin", "https://grip.example/play"], "an origin is"),
    (["--redis-replicas", "-1", "--redis", "redis://127.0.0.1:1/0"], "negative"),
]


def server(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The server's command line with ``args``; a value wrongly accepted leaves it serving: the timeout fails."""
    return subprocess.run(
        [sys.executable, "-m", "server", "--port", "0", "--data", str(tmp_path / "data"), "--log", "WARNING", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=30,
    )  # fmt: skip


@pytest.mark.parametrize(("args", "words"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_a_bad_value_is_a_usage_error_naming_its_option(tmp_path: Path, args: list[str], words: str) -> None:
    done = server(tmp_path, *args)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"python -m server: error: argument {args[0]}: "), done.stderr
    assert words in last and args[1] in last, last
    assert "Traceback" not in done.stderr


def test_a_host_that_does_not_resolve_is_one_line(tmp_path: Path) -> None:
    done = server(tmp_path, "--host", "nosuchhost.invalid")
    assert done.returncode == 1
    assert done.stderr.strip() == done.stderr.strip().splitlines()[-1], done.stderr  # one line
    assert "--host nosuchhost.invalid" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("where", ["missing", "file"])
def test_a_data_directory_that_cannot_hold_the_store_is_one_line(tmp_path: Path, where: str) -> None:
    data = tmp_path / "a-file"
    data.write_text("not a directory")
    if where == "missing":
        data = Path("/proc/nope")  # a directory that cannot be made
    done = subprocess.run(
        [sys.executable, "-m", "server", "--port", "0", "--data", str(data)],
        cwd=ROOT, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip() == done.stderr.strip().splitlines()[-1], done.stderr
    assert f"--data: cannot keep the store in {data}" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("given", "words"),
    [
        ({"proxies": ("10.0.0.0/8", "999.1.1.1/8")}, "proxies: not an IP address or network"),
        ({"port": 70000}, "port: a port is 0 to 65535"),
        ({"metrics": ("127.0.0.1", -1)}, "metrics: a port is 0 to 65535"),
        ({"grace_ms": -1}, "grace_ms: must not be negative"),
        ({"live_every_s": 0.0}, "live_every_s: must be more than 0"),
        ({"origins": ("grip.example",)}, "origins: an origin is"),
    ],
)
def test_settings_made_in_code_are_judged_by_the_same_rules(given: dict[str, object], words: str) -> None:
    """``App(Settings(...))`` in a test or a tool: the rules the command line applies, as ValueError."""
    with pytest.raises(ValueError, match=words):
        Settings(**given)  # type: ignore[arg-type]
