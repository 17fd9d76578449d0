"""Ctrl-C ends ``python -m client play`` at once, run for real under a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import sys
from pathlib import Path

import pytest

from tests.client.netkit import wait_until

ROOT = Path(__file__).resolve().parents[2]


class PtyClient:
    """``python -m client ARGS`` with a pty as its terminal: what it shows, keys typed, its exit."""

    def __init__(self, *args: str) -> None:
        self.output = b""
        self.status: int | None = None
        pid, self.fd = pty.fork()
        if pid == 0:  # the child: its own interpreter, by full path, with the worktree's code
            env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm"}
            os.chdir(ROOT)
            os.execve(sys.executable, [sys.executable, "-m", "client", *args], env)
        self.pid = pid
        os.set_blocking(self.fd, False)

    def text(self) -> str:
        try:
            while chunk := os.read(self.fd, 65536):
                self.output += chunk
        except (BlockingIOError, OSError):
            pass
        return self.output.decode(errors="replace")

    def exited(self) -> bool:
        self.text()
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
        return self.status is not None

    def kill(self) -> None:
        if not self.exited():
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


@pytest.mark.parametrize("when", ["lobby", "race"])
async def test_ctrl_c_exits_at_once(url: str, tmp_path: Path, when: str) -> None:
    term = PtyClient("play", url, "--bot", "greedy", "--no-color", "--identity", str(tmp_path / "id.json"))
    try:
        await wait_until(lambda: "type ready" in term.text(), 30, "the match is created")
        if when == "race":
            os.write(term.fd, b"ready\r")
            await wait_until(lambda: "Legal (" in term.text(), 15, "the race starts")
        mark = len(term.output)
        os.write(term.fd, b"\x03")
        await wait_until(term.exited, 10, "the exit after Ctrl-C (no Enter typed)")
        assert term.status == 130, term.text()[mark:]
        assert "Traceback" not in term.text()
    finally:
        term.kill()
