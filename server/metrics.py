"""``GET /metrics``: a process's figures in Prometheus text."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Collection, Iterator
from itertools import accumulate

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric

from .addresses import Crowded
from .errors import ErrorCode
from .hub import Hub

#: The buckets of ``grip_ack_latency_seconds`` (upper bounds, seconds).
ACK_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0)
_ACK_LE = (*(str(bound) for bound in ACK_BUCKETS), "+Inf")  # as prometheus_client labels them


class Metrics:
    def __init__(self, connections: Collection[object], hub: Hub) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        Gauge("grip_connections", "open WebSocket connections", registry=r).set_function(
            lambda: len(connections)
        )
        self.matches = Gauge("grip_matches", "matches held by this process", ["status"], registry=r)
        self.rejects = Counter("grip_rejects", "commands refused, by code", ["code"], registry=r)
        self.turned_away = Counter(
            "grip_sockets_refused",
            "sockets turned away (server/addresses.py): why, and how (refuse: 429/503, drop, close: 1008)",
            ["why", "how"],
            registry=r,
        )
        # The moves and their ack latencies, counted in plain numbers (``moved``) and reported
        # when scraped: prometheus_client's counter and histogram take a lock at every move.
        self._acks = [0] * (len(ACK_BUCKETS) + 1)  # per bucket, the last one past the largest bound
        self._ack_seconds = 0.0
        self._since = time.time()
        self._hub = hub
        r.register(self)

    def moved(self, seconds: float) -> None:
        """A move accepted, its ack queued ``seconds`` after it was received."""
        self._acks[bisect_left(ACK_BUCKETS, seconds)] += 1
        self._ack_seconds += seconds

    def collect(self) -> Iterator[Metric]:
        """The moves, and the counts the hub and the bus keep themselves (both are made before the metrics)."""
        buckets = list(zip(_ACK_LE, accumulate(self._acks), strict=True))  # a bucket counts those below too
        yield CounterMetricFamily("grip_moves", "moves accepted", value=buckets[-1][1], created=self._since)
        latency = HistogramMetricFamily(
            "grip_ack_latency_seconds",
            "move received to ack queued",
            buckets=buckets,
            sum_value=self._ack_seconds,
        )
        latency.add_sample("grip_ack_latency_seconds_created", {}, self._since)
        yield latency
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

    def socket_refused(self, why: Crowded, how: str) -> None:
        self.turned_away.labels(why.value, how).inc()
