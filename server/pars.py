"""The par of each past daily deal: solved once, in a worker process, then stored.

Solving takes seconds of CPU, which must not stall the event loop that
serves every match, so it runs in a separate process. The par is published
only with the seed, once the day is over; until it is known, it is null.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from .engine.solver import solve
from .store import Store, StoreUnavailable

log = logging.getLogger(__name__)


def solve_par(seed: str, budget_s: float, max_nodes: int) -> int:
    return solve(seed, "classic", budget_s=budget_s, max_nodes=max_nodes).par


class Pars:
    def __init__(self, store: Store, budget_s: float, max_nodes: int) -> None:
        self._store = store
        self._budget_s = budget_s
        self._max_nodes = max_nodes
        self._pool: ProcessPoolExecutor | None = None
        self._solving: dict[str, asyncio.Task[None]] = {}

    async def get(self, day: str, seed: str) -> int | None:
        """The stored par of a past day; if unknown, start solving it and say None for now."""
        stored = await self._store.setting(f"par:{day}")
        if stored is not None:
            return int(stored)
        if day not in self._solving:
            self._solving[day] = asyncio.create_task(self._solve(day, seed))
        return None

    async def _solve(self, day: str, seed: str) -> None:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        loop = asyncio.get_running_loop()
        try:
            par = await loop.run_in_executor(self._pool, solve_par, seed, self._budget_s, self._max_nodes)
            await self._store.setting(f"par:{day}", str(par))
        except StoreUnavailable:
            log.warning("could not store the par of %s; it will be solved again", day)
        finally:
            del self._solving[day]

    async def close(self) -> None:
        for task in list(self._solving.values()):
            task.cancel()
        await asyncio.gather(*self._solving.values(), return_exceptions=True)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
