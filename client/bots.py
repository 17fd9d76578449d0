"""Bots over the protocol: a ``Client`` that plays from its own view only.

``run_bot`` readies, then plays ``speed`` moves a second (as fast as the
acks come when ``speed`` is 0), each decided by ``view_players`` from the
client's board (``Client.view``: in protocol v2 its own game's), until the
result arrives; with ``rematches`` it asks for that many rematches and plays
each (the client takes its seat in the new match itself).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

from server import protocol as p
from server.engine.view_players import STRATEGIES

from .api import Client, ConnectionLost, MoveRejected

#: How long a bot waits for the opponent to ask for the rematch too.
REMATCH_WAIT_S = 600.0


async def run_bot(
    client: Client,
    strategy: str = "greedy",
    speed: float = 2.0,
    *,
    ready: bool = True,
    rematches: int = 0,
    on_result: Callable[[p.Result], None] | None = None,
) -> p.Result:
    """Play the seated match of ``client`` (and ``rematches`` more) to its result; the last result."""
    result = await play_match(client, strategy, speed, ready=ready)
    for _ in range(rematches):
        if on_result is not None:
            on_result(result)
        await client.rematch()
        await client.next_event(p.Rematched, timeout=REMATCH_WAIT_S)
        result = await play_match(client, strategy, speed)
    return result


async def play_match(client: Client, strategy: str, speed: float, *, ready: bool = True) -> p.Result:
    """Ready, then play each start's game until the result arrives."""
    decide = STRATEGIES[strategy]
    if ready:
        await client.ready()
    interval = 1.0 / speed if speed > 0 else 0.0
    async for event in client.events():
        if isinstance(event, p.Result):
            return event
        if isinstance(event, p.Start) and event.view is not None:
            await _play_game(client, decide, interval)
    raise ConnectionLost("the connection ended before the result")


async def _play_game(
    client: Client, decide: Callable[[Mapping[str, Any]], str | None], interval: float
) -> None:
    """Play on the client's board (each move waits for its ack, so no card is still to come)."""
    next_at = time.monotonic()
    while (view := client.view) is not None and not view.over:
        move = decide(view.model_dump())
        if move is None:
            await client.finish()
            return
        next_at += interval
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        try:
            await client.play(move)
        except MoveRejected as exc:
            if exc.code == p.ErrorCode.WRONG_PHASE:
                return  # the time is up or the game ended: the result follows
