"""``python -m server`` whose store is slow to open a rematch's match: the hub's ``open`` of it stalls first.

What a busy Redis (or one more round trip) does to that write, made long
enough that whatever happens meanwhile is seen: a ``rematched`` sent before
the new match exists sends the racers to resume a code nobody can find yet.
"""

from __future__ import annotations

import asyncio

from server.__main__ import main
from server.hub import Hub, LiveMatch
from server.match import Event
from server.match.events import SeatTaken

STALL_S = 1.0
opened_at_once = Hub.open


async def open_slowly(self: Hub, events: list[Event]) -> LiveMatch:
    if sum(isinstance(e, SeatTaken) for e in events) > 1:  # a rematch: every seat taken as it opens
        await asyncio.sleep(STALL_S)
    return await opened_at_once(self, events)


if __name__ == "__main__":
    Hub.open = open_slowly  # type: ignore[method-assign]
    main()
