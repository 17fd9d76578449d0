"""Requests a client can repeat cheaply that made the server redo work out of proportion (adversarial audit).

Each test counts the work (store reads, pairing rounds), not time.
"""

from __future__ import annotations

import pytest
from counting import count_calls
from race import MakeAppT, client


async def test_joining_and_leaving_the_quick_queue_again_and_again_does_not_bring_a_round_each(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``quick`` brought a pairing round on at once, and a round reads the whole queue."""
    app = await make_app(quick_pair_every_s=60.0)  # rounds brought on by joins: at most one in 12 s
    rounds = count_calls(monkeypatch, app.quick, "pair_now")
    c = await client(app)
    await c.request({"type": "hello"}, "welcome")
    for _ in range(20):
        await c.request({"type": "quick"}, "queued")
        await c.request({"type": "quick_cancel"}, "unqueued")
    await c.request({"type": "quick"}, "queued")
    assert rounds[0] <= 2  # the first join's (and, on a slow machine, one more); it was 21


async def test_asking_for_the_live_list_again_and_again_reads_it_once_a_period(
    make_app: MakeAppT, backend: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``live`` read (and sorted) every race of every process from the store."""
    app = await make_app(live_every_s=60.0, **backend)
    reads = count_calls(monkeypatch, app.store, "live_races")
    c = await client(app)
    for order in ["newest", "closest"] * 10:
        await c.request({"type": "live", "order": order}, "live", order=order)
        await c.send({"type": "live_stop"})
    assert reads[0] == 1  # it was 20
