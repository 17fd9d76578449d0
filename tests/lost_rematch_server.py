"""``python -m server`` whose rematches are never opened: the new match's log is lost.

What a store rolled back to before the rematch's open leaves: ``rematched``
names a match no process can find, and a client resuming it gets
``not_found`` however long it waits.
"""

from __future__ import annotations

from server.__main__ import main
from server.hub import Hub, LiveMatch
from server.match import Event
from server.match.events import SeatTaken

opened_for_real = Hub.open


async def open_lost(self: Hub, events: list[Event]) -> LiveMatch | None:
    if sum(isinstance(e, SeatTaken) for e in events) > 1:  # a rematch: every seat taken as it opens
        return None
    return await opened_for_real(self, events)


if __name__ == "__main__":
    Hub.open = open_lost  # type: ignore[assignment]
    main()
