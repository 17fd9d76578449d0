"""Solver work off the event loop: a past day's par, hints for practice games, bots' moves.

Each may take the solver seconds of CPU, which must not stall the event loop
that serves every match (nor share its GIL), so they run in worker processes. A day's par is solved
once and stored (published with the day's seed); a hint that takes too long
gives way to the greedy move, so a player always gets an answer, and so
does a bot whose move takes longer than ``BOT_THINK_S``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import multiprocessing
import os
import random
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from . import daily
from .engine import Game
from .engine.players import greedy_move, hint
from .engine.solver import solve
from .engine.view_players import STRATEGIES, greedy_view
from .errors import ErrorCode, Refused
from .limits import Limiter
from .store import Store, StoreUnavailable

log = logging.getLogger(__name__)

HINT_TIMEOUT_S = 3.0
#: The workers yield the CPU to the server's process: on a box with as many cores as
#: workers, their solving must not slow down the event loop that serves every match.
WORKER_NICENESS = 10
BOT_THINK_S = 1.0  # a bot's time for a move (it plays one every second or so)


def solve_par(seed: str, budget_s: float, max_nodes: int) -> int:
    return solve(seed, daily.VARIANT, budget_s=budget_s, max_nodes=max_nodes).par


def hint_text(seed: str, variant: str, moves: list[str]) -> str | None:
    """The hint for the game reached by ``moves``: it sees only what that player sees."""
    move = hint(Game.replay(seed, variant, moves), random.Random())
    return None if move is None else str(move)


def bot_move(strategy: str, view: dict[str, Any]) -> str | None:
    """A bot's move from its view (``engine.view_players``): what a racer at the table sees."""
    return STRATEGIES[strategy](view)


class Solving:
    def __init__(self, store: Store, par_budget_s: float, par_nodes: int, hints: Limiter) -> None:
        self._store = store
        self._hints = hints  # by asker
        self._par_budget_s = par_budget_s
        self._par_nodes = par_nodes
        self._pool: ProcessPoolExecutor | None = None
        self._solving: dict[str, asyncio.Task[None]] = {}

    def _workers(self) -> ProcessPoolExecutor:
        if self._pool is None:  # started on first use: most processes never need it
            self._pool = ProcessPoolExecutor(
                2,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=os.nice,
                initargs=(WORKER_NICENESS,),
            )
        return self._pool

    async def par(self, day: str, seed: str) -> int | None:
        """The stored par of a past day; if unknown, start solving it and say None for now.

        One par is solved at a time (the next is started by a later request),
        so asking for the leaderboards of many past days keeps at most one
        worker busy, and practice hints always have the other.
        """
        stored = await self._store.setting(f"par:{day}")
        if stored is not None:
            return int(stored)
        if not self._solving:
            self._solving[day] = asyncio.create_task(self._solve_par(day, seed))
        return None

    async def _solve_par(self, day: str, seed: str) -> None:
        loop = asyncio.get_running_loop()
        try:
            par = await loop.run_in_executor(
                self._workers(), solve_par, seed, self._par_budget_s, self._par_nodes
            )
            await self._store.setting(f"par:{day}", str(par))
        except StoreUnavailable:
            log.warning("could not store the par of %s; it will be solved again", day)
        finally:
            del self._solving[day]

    async def hint(self, game: Game, asker: str) -> str | None:
        """A suggested move for ``game``; the greedy one if the hint player runs out of time.

        Each hint may keep a worker busy for seconds: ``asker`` (a player, or
        a connection without one) has a quota, past which it is refused.
        """
        wait = await self._hints.take(asker)
        if wait:
            raise Refused(ErrorCode.RATE_LIMITED, f"that is a lot of hints: the next in {math.ceil(wait)} s")
        moves = [str(m) for m in game.moves]
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._workers(), hint_text, game.seed, game.variant.name, moves)
        try:
            async with asyncio.timeout(HINT_TIMEOUT_S):  # not wait_for: see bot_move
                return await work
        except TimeoutError:
            fallback = greedy_move(game)
            return None if fallback is None else str(fallback)

    async def bot_move(self, strategy: str, view: dict[str, Any]) -> str | None:
        """A bot's move, decided in a worker; the greedy one if it takes longer than ``BOT_THINK_S``.

        ``asyncio.timeout``, not ``wait_for``: on Python 3.11, ``wait_for``
        returns the answer when its task is cancelled just as the answer
        comes back, losing the cancellation. The bot then played on after
        ``Hub.close`` had cancelled it, and the shutdown waited on it for good.
        """
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self._workers(), bot_move, strategy, view)
        try:
            async with asyncio.timeout(BOT_THINK_S):
                return await work
        except TimeoutError:
            return greedy_view(view)

    async def close(self) -> None:
        for task in list(self._solving.values()):
            task.cancel()
        await asyncio.gather(*self._solving.values(), return_exceptions=True)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
