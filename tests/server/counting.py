"""Counting the calls of a function: the cost tests count work instead of timing it."""

from __future__ import annotations

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
    """The answers of ``buckets.take`` (a ``Buckets``) from now on: 0 for a turn taken, else the wait."""
    waits: list[float] = []
    real_take = buckets.take

    def take(key: str) -> float:
        waits.append(real_take(key))
        return waits[-1]

    monkeypatch.setattr(buckets, "take", take)
    return waits
