"""Counting the calls of a function: the cost tests count work instead of timing it."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """A counter of the calls of ``owner.name`` from now on."""
    calls = [0]
    real = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def record_waits(monkeypatch: pytest.MonkeyPatch, buckets: Any) -> list[float]:
    """The answers of ``buckets.take`` (a ``Limiter``) from now on: 0 for a turn taken, else the wait."""
    waits: list[float] = []
    real_take = buckets.take

    async def take(key: str) -> float:
        waits.append(await real_take(key))
        return waits[-1]

    monkeypatch.setattr(buckets, "take", take)
    return waits


@contextlib.contextmanager
def sqlite_steps(db: sqlite3.Connection) -> Iterator[list[int]]:
    """The virtual-machine instructions SQLite runs on ``db`` inside: the work of a query, rows
    read and sorted, counted instead of timed (a scan grows with the table, an index look-up does not)."""
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    db.set_progress_handler(step, 1)
    try:
        yield steps
    finally:
        db.set_progress_handler(None, 1)
