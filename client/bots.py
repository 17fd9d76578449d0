"""Bots over the protocol: a ``Client`` that plays from its own view only.

``run_bot`` readies, then plays ``speed`` moves a second (as fast as the
acks come when ``speed`` is 0), each decided by ``view_players`` from the
last view the server sent, until the result arrives.
"""

from __future__ import annotations

import asyncio
import time

from server import protocol as p
from server.engine.view_players import STRATEGIES

from .api import Client, ConnectionLost, MoveRejected


async def run_bot(
    client: Client, strategy: str = "greedy", speed: float = 2.0, *, ready: bool = True
) -> p.Result:
    """Play the seated match of ``client`` to its result and return it."""
    decide = STRATEGIES[strategy]
    if ready:
        await client.ready()
    interval = 1.0 / speed if speed > 0 else 0.0
    async for event in client.events():
        if isinstance(event, p.Result):
            return event
        if not isinstance(event, p.Start) or event.view is None:
            continue
        view: p.View | None = event.view
        next_at = time.monotonic()
        while view is not None and not view.over:
            move = decide(view.model_dump())
            if move is None:
                await client.finish()
                break
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            try:
                view = (await client.play(move)).view
            except MoveRejected as exc:
                if exc.code == p.ErrorCode.WRONG_PHASE:
                    break  # the time is up or the game ended
                view = exc.view
    raise ConnectionLost("the connection ended before the result")
