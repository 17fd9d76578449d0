"""Fixtures shared by every test: a real server on port 0, a throwaway Redis.

Integration tests talk to real sockets on 127.0.0.1. Redis tests get their
own ``redis-server`` on a free port with a temporary directory, so they never
touch data they did not create (this machine also runs one on 6379).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from server.app import App, Settings
from server.bus import open_bus
from server.protocol import now_ms
from server.store import open_store

if TYPE_CHECKING:
    from tests.cluster import TestCluster

IN_CI = os.environ.get("CI") == "true"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A redis-server process of our own; ``stop``/``start`` for outage tests."""

    def __init__(self, workdir: Path, *options: str) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.options = options
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", str(self.workdir), *self.options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def freeze(self) -> None:
        """Stop the process without closing its sockets: commands queue up, unanswered."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(5)
            self.proc = None


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        if IN_CI:
            pytest.fail("redis-server is not installed (.ci/run installs it)")
        pytest.skip("redis-server is not installed; .ci/run installs it")
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def snapshot_redis(redis_server: RedisServer, tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of the test's own, without AOF: ``stop``/``start`` goes back to its last SAVE.

    (``redis_server`` only for its check that redis-server is installed.)
    """
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def aof_redis(redis_server: RedisServer, tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of the test's own, with AOF on so that ``stop``/``start`` (an outage) keeps the data.

    (``redis_server`` only for its check that redis-server is installed.)
    """
    server = RedisServer(tmp_path, "--appendonly", "yes", "--appendfsync", "always")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """A URL to a fresh, empty database of the throwaway server."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    client.close()
    return redis_server.url


def need_redis_cluster_programs() -> None:
    for program in ("redis-server", "redis-cli"):
        if shutil.which(program) is None:
            if IN_CI:
                pytest.fail(f"{program} is not installed (.ci/run installs it)")
            pytest.skip(f"{program} is not installed; .ci/run installs it")


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestCluster]:
    """A Redis Cluster (three masters, a replica each) shared by the tests that leave it whole."""
    from tests.cluster import TestCluster

    need_redis_cluster_programs()
    cluster = TestCluster(tmp_path_factory.mktemp("cluster")).start()
    yield cluster
    cluster.stop()


@pytest.fixture
def cluster_url(redis_cluster: TestCluster) -> str:
    """A URL to a node of the shared cluster, emptied first."""
    redis_cluster.wait_ok()
    redis_cluster.flush()
    return redis_cluster.url


@pytest.fixture(params=["redis", "cluster"])
def shared_url(request: pytest.FixtureRequest) -> str:
    """Each shape processes share: a single Redis, a Redis Cluster (the same ``--redis URL``)."""
    return str(request.getfixturevalue(f"{request.param}_url"))


BACKENDS = ["embedded", "redis", "cluster"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """Store and bus URLs for each backend: every scenario runs on each."""
    if request.param == "embedded":
        return {"store_url": f"sqlite:///{tmp_path / 'grip.db'}", "bus_url": "memory://"}
    url = request.getfixturevalue("redis_url" if request.param == "redis" else "cluster_url")
    return {"store_url": url, "bus_url": url}


@pytest.fixture
async def start_app(tmp_path: Path) -> AsyncIterator[Callable[..., object]]:
    """Start in-process servers on port 0: ``app = await start_app(clock=..., **settings)``."""
    apps: list[App] = []

    async def start(clock: Callable[[], int] = now_ms, **overrides: object) -> App:
        settings = Settings(port=0, store_url=f"sqlite:///{tmp_path / 'grip.db'}", sweep_s=3600)
        settings = replace(settings, **overrides)  # type: ignore[arg-type]
        app = App(
            settings, await open_store(settings.store_url), await open_bus(settings.bus_url), clock=clock
        )
        await app.start()
        apps.append(app)
        return app

    yield start
    for app in apps:
        await app.shutdown()
