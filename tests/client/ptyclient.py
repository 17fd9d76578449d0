"""``python -m client`` run for real under a pseudo-terminal: what it shows, keys typed, its exit."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import sys
import termios
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class PtyClient:
    """``python -m client ARGS`` with a pty as its terminal: what it shows, keys typed, its exit."""

    def __init__(self, *args: str, columns: int = 0) -> None:
        self.output = b""
        self.status: int | None = None
        pid, self.fd = pty.fork()
        if pid == 0:  # the child: its own interpreter, by full path, with the worktree's code
            if columns:  # the terminal's size (a new pty has none)
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
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
