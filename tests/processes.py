"""Real server processes for tests: start, find the port, kill -9."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"listening on http://[\d.]+:(\d+)/")


class ServerProcess:
    """``python -m server`` in a subprocess, on a free port."""

    def __init__(
        self,
        *args: str,
        log: Path | None = None,
        open_files: int | None = None,
        module: str = "server",
        env: dict[str, str] | None = None,
    ) -> None:
        self.args = args
        self.module = module  # ``python -m`` this: the server, or a test's variant of it
        self.env = env  # more environment variables
        self.open_files = open_files  # the soft limit the server starts with, if given
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.log = log or Path(tempfile.mkstemp(prefix="grip-server-", suffix=".log")[1])

    def start(self, timeout: float = 20) -> ServerProcess:
        """Start it and wait for its "listening" line (output goes to a file, never a full pipe)."""
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", self.module, "--port", "0", "--log", "WARNING", *self.args],
                cwd=ROOT,
                env=None if self.env is None else {**os.environ, **self.env},
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=None if self.open_files is None else self._limit_open_files,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            m = LISTENING.search(self.log.read_text(errors="replace"))
            if m:
                self.port = int(m.group(1))
                return self
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"server did not start: {self.args}\n{self.log.read_text(errors='replace')}")

    def _limit_open_files(self) -> None:
        import resource

        assert self.open_files is not None
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, hard))

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def terminate(self, timeout: float = 10) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
