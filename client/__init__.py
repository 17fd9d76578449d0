"""Python client of the Devil's Grip race server: library, terminal client, bots.

``client.connect(url)`` gives a ``Client`` (see ``client.api``); ``python -m
client`` plays, watches or runs a bot from a terminal.
"""

from .api import (
    DEFAULT_URL,
    Client,
    ClientError,
    Closed,
    ConnectionLost,
    MoveRejected,
    ServerError,
    connect,
)

__all__ = [
    "DEFAULT_URL",
    "Client",
    "ClientError",
    "Closed",
    "ConnectionLost",
    "MoveRejected",
    "ServerError",
    "connect",
]
