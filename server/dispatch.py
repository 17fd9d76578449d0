"""Client messages to their handlers: one handler for each message class, checked at start-up.

A handler is registered beside its code with ``@routes.handles(p.Join)``
(``server/handlers/``). The server's table joins those modules' routes and is
checked against the ``ClientMessage`` union when the ``App`` is made: a
message class without a handler stops the server from starting, rather than
answering "something went wrong on our side" the first time a client sends it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any, Protocol, TypeVar

from . import protocol as p
from .addresses import PerAddress
from .errors import GripError
from .holdings import Holdings
from .hub import Hub
from .limits import Limiter
from .live import LiveMatch
from .live_races import LiveRaces
from .metrics import Metrics
from .quick import QuickRaces
from .seating import Client as Client  # the handlers' own type, where they import the rest
from .settings import Settings
from .solving import Solving
from .store import Store


class Bots(Protocol):
    """ "Race a bot": the process's bot races (``server/bots.py``'s ``BotRaces``), given to the
    handlers rather than imported, since the bots' commands run through the handlers."""

    def check(self, owner: Client) -> None:
        """Refused if ``owner`` may not start another bot race now."""

    async def seat(self, lm: LiveMatch, strategy: str, owner: Client) -> None:
        """Seat a bot in ``lm``'s free seat and let it play."""


class Context(Protocol):
    """What a handler may use of its server process (``App``)."""

    settings: Settings
    store: Store
    hub: Hub
    addresses: PerAddress
    holdings: Holdings  # matches held per connection, identity, address (server/holdings.py)
    lobbies: dict[
        str, tuple[str, str]
    ]  # creator (player id, else connection id) -> their last lobby, token hash
    solving: Solving
    metrics: Metrics
    quick: QuickRaces
    live_races: LiveRaces
    resumes: Limiter  # a seat's resumes that replay its log or record a connect
    address_snapshots: Limiter  # a client address's resumes, watches and replays (``wait_turn``)
    clock: Callable[[], int]
    instance: str
    daily_secret: str

    @property
    def bots(self) -> Bots:
        """The process's bot races."""

    @property
    def port(self) -> int:
        """The port this process listens on."""

    async def dispatch(self, client: Client, message: p.ClientMessage) -> None:
        """Run ``message`` as if ``client`` had sent it (a bot's commands)."""


M = TypeVar("M", bound=p.Message)
Handler = Callable[[Context, Client, M], Awaitable[None]]


class Unhandled(GripError):
    """Client message classes that no handler is registered for (raised at start-up)."""


class Routes:
    """Handlers by message class."""

    def __init__(self, *parts: Routes) -> None:
        self._handlers: dict[type[p.Message], Handler[Any]] = {}
        for part in parts:
            for message, handler in part._handlers.items():
                self._add(message, handler)

    def handles(self, message: type[M]) -> Callable[[Handler[M]], Handler[M]]:
        """Register the decorated function as the handler of ``message``."""

        def register(handler: Handler[M]) -> Handler[M]:
            self._add(message, handler)
            return handler

        return register

    def _add(self, message: type[p.Message], handler: Handler[Any]) -> None:
        if message in self._handlers:
            raise ValueError(f"two handlers for {message.__name__}")
        self._handlers[message] = handler

    def check(self, messages: Collection[type[p.Message]] = p.CLIENT_MESSAGES) -> None:
        """Unhandled unless every class in ``messages`` has a handler."""
        missing = sorted(m.__name__ for m in messages if m not in self._handlers)
        if missing:
            raise Unhandled(f"no handler for {', '.join(missing)}")

    async def run(self, ctx: Context, client: Client, message: p.Message) -> None:
        await self._handlers[type(message)](ctx, client, message)
