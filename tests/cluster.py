"""A real Redis Cluster for tests: six ``redis-server`` processes on free local ports.

Three masters and a replica each, joined by ``redis-cli --cluster create``,
with a short ``cluster-node-timeout`` so that a killed master's replica takes
over within a few seconds. Nothing waits a fixed time: every step polls its
condition with a deadline.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import redis
from redis.cluster import RedisCluster

NODE_TIMEOUT_MS = 2000


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting: {what}")
        time.sleep(0.05)


def _cli(node: ClusterNode, *command: str) -> str:
    return subprocess.run(
        ["redis-cli", "-p", str(node.port), *command], capture_output=True, text=True, timeout=5
    ).stdout


def free_ports(n: int) -> list[int]:
    """n distinct free ports: all held open at once while they are picked."""
    with contextlib.ExitStack() as held:
        socks = [held.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in socks]


def _flags(view: list[list[str]]) -> str:
    """The flags of the node whose view this is (``myself,master``, ``myself,slave``)."""
    return next(f[2] for f in view if "myself" in f[2])


class ClusterNode:
    def __init__(self, workdir: Path, ports: tuple[int, int], options: tuple[str, ...] = ()) -> None:
        self.options = options
        # the node's own link to the others is on a port of its own (port + 10000 by default: past 65535 for some)
        self.port, self.bus_port = ports
        self.dir = workdir / str(self.port)
        self.dir.mkdir()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start (or start again: ``nodes.conf`` in its directory keeps its place in the cluster)."""
        self.proc = subprocess.Popen(
            [
                "redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-port", str(self.bus_port),
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--save", "", "--appendonly", "no",
                *self.options,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until(self.answers, 10, f"redis-server on {self.port}")

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=1, socket_connect_timeout=0.5)

    def answers(self) -> bool:
        try:
            with self.client() as c:
                return bool(c.ping())
        except redis.RedisError:
            return False

    def kill(self) -> None:
        """kill -9: no goodbye to the cluster, its sockets just close."""
        if self.proc is not None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
            self.proc = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class TestCluster:
    """Three masters with ``replicas`` each (1, or 0); ``url`` names one node, as a server is told.

    ``options``: more ``redis-server`` options for every node (AOF, to survive a restart).
    """

    __test__ = False  # not a test class, whatever its name

    def __init__(self, workdir: Path, *options: str, replicas: int = 1) -> None:
        self.replicas = replicas
        count = 3 * (1 + replicas)
        ports = free_ports(2 * count)
        self.nodes = [ClusterNode(workdir, (ports[2 * i], ports[2 * i + 1]), options) for i in range(count)]

    def start(self) -> TestCluster:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        for node in self.nodes:
            node.start()
        subprocess.run(
            [
                "redis-cli", "--cluster", "create", *(f"127.0.0.1:{n.port}" for n in self.nodes),
                "--cluster-replicas", str(self.replicas), "--cluster-yes",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.wait_ok()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def node(self, port: int) -> ClusterNode:
        return next(n for n in self.nodes if n.port == port)

    def _view(self, node: ClusterNode) -> list[list[str]]:
        """``CLUSTER NODES`` as that node sees it: one line of fields per node."""
        return [line.split() for line in _cli(node, "cluster", "nodes").splitlines() if line.strip()]

    def masters(self) -> list[ClusterNode]:
        """The masters holding slots, as the running nodes agree (``wait_ok`` first)."""
        node = next(n for n in self.nodes if n.running)
        return [
            self.node(int(f[1].split("@")[0].rsplit(":", 1)[1]))
            for f in self._view(node)
            if "master" in f[2] and "fail" not in f[2] and len(f) > 8
        ]

    def master_of(self, key: str) -> ClusterNode:
        with self.client() as c:
            node = c.get_node_from_key(key)
            assert node is not None
            return self.node(int(node.port))

    def client(self) -> RedisCluster:
        node = next(n for n in self.nodes if n.running)
        return RedisCluster(host="127.0.0.1", port=node.port, socket_timeout=2)

    def ok(self) -> bool:
        """Every running node says ``cluster_state:ok``, sees no failed node and 3 masters with a replica each."""
        try:
            for node in self.nodes:
                if not node.running:
                    continue
                if "cluster_state:ok" not in _cli(node, "cluster", "info"):
                    return False
                view = self._view(node)
                if any("fail" in f[2] or "handshake" in f[2] for f in view):
                    return False
                masters = [f for f in view if "master" in f[2] and len(f) > 8]
                replicas = [f for f in view if "slave" in f[2]]
                if len(masters) != 3 or len(replicas) != sum(n.running for n in self.nodes) - 3:
                    return False
                if "slave" in _flags(view) and "master_link_status:up" not in _cli(
                    node, "info", "replication"
                ):
                    return False  # a replica still copying its master
            return True
        except (redis.RedisError, subprocess.TimeoutExpired):
            return False

    def wait_ok(self, timeout: float = 30) -> None:
        wait_until(self.ok, timeout, "cluster_state:ok on every node")

    def flush(self) -> None:
        for node in self.masters():
            with node.client() as c:
                c.flushall()

    def stop(self) -> None:
        for node in self.nodes:
            node.kill()
