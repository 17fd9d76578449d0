"""What the server does with each client message, by concern; ``HANDLERS`` is the whole table.

A new message: its class in ``server/protocol.py`` (and in the
``ClientMessage`` union), its handler under ``@routes.handles`` in the module
of its concern. The ``App`` checks at start-up that every client message has one.
"""

from ..dispatch import Routes
from . import daily, ratings, records, seat

HANDLERS = Routes(seat.routes, daily.routes, records.routes, ratings.routes)
