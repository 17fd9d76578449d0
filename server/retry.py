"""Trying again: the one backoff every retry loop of the server uses.

A store or a bus that does not answer is tried again after 0.1 s, then
0.2, 0.4, ... up to every 2 s: soon enough to notice it is back within a
beat, and rarely enough to cost nothing while it is away.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

FIRST_PAUSE_S = 0.1
LONGEST_PAUSE_S = 2.0

T = TypeVar("T")


def _always() -> bool:
    return True


async def retry(
    attempt: Callable[[], Awaitable[T]],
    *,
    retry_on: type[BaseException] | tuple[type[BaseException], ...],
    keep_going: Callable[[], bool] = _always,
    tries: int | None = None,
    pause_first: bool = False,
) -> T | None:
    """``attempt()``'s answer, tried again after each ``retry_on``; None once given up.

    It gives up after ``tries`` attempts, or when ``keep_going()`` says so
    (asked before each attempt, after the pause). ``pause_first``: the caller
    has just tried once itself.
    """
    pause, tried = FIRST_PAUSE_S, 0
    while tries is None or tried < tries:
        if pause_first or tried:
            await asyncio.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE_S)
        if not keep_going():
            return None
        tried += 1
        try:
            return await attempt()
        except retry_on:
            continue
    return None
