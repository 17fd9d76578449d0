"""The hub publishes a decided batch only where another process can hear it (``Bus.shared``)."""

from __future__ import annotations

import pytest

from server.bus.memory import MemoryBus
from server.hub import Hub
from server.match import decode_events
from server.store.sqlite import SqliteStore
from tests.store_events import opening


class RecordingBus(MemoryBus):
    """The embedded bus, keeping what it is asked to publish, and claiming other listeners or not."""

    def __init__(self, shared: bool) -> None:
        self.shared = shared
        self.published: list[tuple[str, str]] = []

    async def publish(self, channel: str, data: str) -> None:
        self.published.append((channel, data))


@pytest.mark.parametrize("shared", [True, False])
async def test_a_batch_is_published_once_to_other_processes_and_never_to_none(shared: bool) -> None:
    bus = RecordingBus(shared)
    hub = Hub(SqliteStore(":memory:"), bus, clock=lambda: 1_000)
    lm = await hub.open(opening("AAAAAAAA"))
    decided = await hub.execute(lm, lambda m: m.decide_ready(0, 1_000))
    assert isinstance(decided, list) and [e.kind for e in decided] == ["readied"]
    if shared:
        assert [(ch, [e.ev for e in decode_events(data)]) for ch, data in bus.published] == [
            ("grip:match:{AAAAAAAA}", [3])
        ]
    else:
        assert bus.published == []
    assert lm.match.seat(0).ready  # applied either way
    await hub.close()
