"""``GET /metrics``: a process's figures in Prometheus text."""

from __future__ import annotations

from collections.abc import Collection, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric

from .errors import ErrorCode
from .hub import Hub


class Metrics:
    def __init__(self, connections: Collection[object], hub: Hub) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        Gauge("grip_connections", "open WebSocket connections", registry=r).set_function(
            lambda: len(connections)
        )
        self.matches = Gauge("grip_matches", "matches held by this process", ["status"], registry=r)
        self.moves = Counter("grip_moves", "moves accepted", registry=r)
        self.rejects = Counter("grip_rejects", "commands refused, by code", ["code"], registry=r)
        self.ack_latency = Histogram(
            "grip_ack_latency_seconds",
            "move received to ack queued",
            registry=r,
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
        )
        self._hub = hub
        r.register(self)

    def collect(self) -> Iterator[Metric]:
        """The counts the hub and the bus keep themselves (both are made before the metrics)."""
        yield CounterMetricFamily(
            "grip_bus_handler_errors",
            "bus messages whose handling raised (skipped, then caught up from the store)",
            value=self._hub.bus.failures,
        )
        yield CounterMetricFamily(
            "grip_tick_errors",
            "match timers whose work raised unexpectedly (tried again a second later)",
            value=self._hub.tick_failures,
        )

    def render(self) -> bytes:
        counts: dict[str, int] = {"lobby": 0, "countdown": 0, "playing": 0, "finished": 0}
        for lm in self._hub.live.values():
            counts[lm.match.status] += 1
        for status, n in counts.items():
            self.matches.labels(status).set(n)
        return generate_latest(self.registry)

    def refused(self, code: ErrorCode) -> None:
        self.rejects.labels(code.value).inc()
