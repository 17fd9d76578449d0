"""The server's collection policy still frees cyclic garbage (it only turns the automatic collector off)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from server import __main__ as server_main


class Node:
    other: Node | None = None


@pytest.fixture
def restored_collector() -> Iterator[None]:
    """The policy changes the whole process's collector: give the other tests theirs back."""
    try:
        yield
    finally:
        gc.unfreeze()
        gc.enable()


def cycle() -> asyncio.Event:
    """Two objects that only reference each other; the event is set when they are freed."""
    freed = asyncio.Event()
    a, b = Node(), Node()
    a.other, b.other = b, a  # reference counting alone never frees these two
    weakref.finalize(a, freed.set)
    return freed


@pytest.mark.parametrize("trigger", ["time", "objects"])
async def test_a_cycle_made_after_startup_is_collected(
    trigger: str, monkeypatch: pytest.MonkeyPatch, restored_collector: None
) -> None:
    if trigger == "time":
        monkeypatch.setattr(server_main, "COLLECT_EVERY_S", 0.0)
    else:
        monkeypatch.setattr(server_main, "COLLECT_AFTER_OBJECTS", 5_000)
    server_main._schedule_gc()
    freed = cycle()
    kept = [[] for _ in range(10_000)] if trigger == "objects" else []  # made and kept: past the bound
    await asyncio.wait_for(freed.wait(), 10)
    del kept


async def test_the_automatic_collector_is_off(
    monkeypatch: pytest.MonkeyPatch, restored_collector: None
) -> None:
    """The control: the cycle outlives thousands of allocations (it would not with the collector on)."""
    monkeypatch.setattr(server_main, "COLLECT_AFTER_OBJECTS", 10**9)
    server_main._schedule_gc()
    assert not gc.isenabled()
    freed = cycle()
    kept = [[] for _ in range(10_000)]  # an automatic collection would have run inside this
    assert not freed.is_set()
    del kept
