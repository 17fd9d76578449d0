"""Solver work in worker processes: a task waiting on it stops when it is cancelled."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from server.engine import Game
from server.limits.local import Buckets
from server.solving import Solving


class HeldWorkers(concurrent.futures.Executor):
    """Workers whose answers the test gives, when it chooses."""

    def __init__(self) -> None:
        self.work: list[concurrent.futures.Future[Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.work.append(future)
        return future


ASKS: dict[str, Callable[[Solving], Awaitable[str | None]]] = {
    "bot_move": lambda s: s.bot_move("greedy", Game("5").player_view()),
    "hint": lambda s: s.hint(Game("5"), "ann"),
}


@pytest.mark.parametrize("ask", ASKS)
async def test_a_wait_cancelled_as_the_answer_comes_back_is_cancelled(
    ask: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Hub.close`` cancels a bot waiting on its move; the answer may land in the same loop turn.

    ``asyncio.wait_for`` (Python 3.11) then returned the answer and lost the
    cancellation: the bot played on, and the shutdown waited on it until the
    test timed out.
    """
    solving = Solving(store=None, par_budget_s=1, par_nodes=1, hints=Buckets(rate=1, burst=5))
    workers = HeldWorkers()
    monkeypatch.setattr(solving, "_workers", lambda: workers)
    waiting = asyncio.create_task(ASKS[ask](solving))
    async with asyncio.timeout(10):
        while not workers.work:
            await asyncio.sleep(0)
    workers.work[0].set_result("T")  # its answer reaches the loop at its next turn
    asyncio.get_running_loop().call_soon(waiting.cancel)  # in that same turn, just after it
    with pytest.raises(asyncio.CancelledError):
        await waiting
