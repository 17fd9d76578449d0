"""What one client may make this process hold of matches: a quota, per connection, identity and address.

A match a client creates or joins is held in memory (a started game about
20 KB) for as long as it lasts, and for a while after everyone left it: a
lobby up to ``LOBBY_TTL_MS``, a race left mid-play for the grace period and
then a minute more once decided (``UNLOAD_DECIDED_AFTER_MS``). The rules of
the core keep one open lobby and one practice game per creator
(``Match.decide_replaced``), but a creator is an identity, and identities
and connections are cheap: two connections creating and joining races at
their frame rate held thousands. So a ``create``, a ``join`` or a ``rematch`` is refused
(``not_allowed``) while the connection, or its identity, already has
``per_player`` matches going here (held, not decided: lobbies, races), or its
address ``per_address`` (several
people can share an address behind a NAT: a school, an office), or while
its address has ``lobbies_per_address`` lobbies open that it created: the
one-lobby rule, held per address as well, since a new ``hello`` makes a new
creator. This machine's own connections (no address: the tests, the
benches, the bots) are held to the per-connection and per-identity quota
only. A ``resume`` counts the match it takes a seat in (a rematch's, say), never refused.
Decided matches do not count: a race is decided no sooner than its 3 s
countdown allows, so they come at a person's pace (a practice game, which has
no countdown, leaves memory with its player), and a player going from race
to race quickly must not be refused. The entries are dropped once their
match has left memory.

Matches opened are counted over time as well (``opening``): a lobby called
off or a practice game replaced leaves memory at once, but its log stays in
the store (a practice game's for good), so a creator replacing game after
game at their frame rate would fill it. A ``create`` and a ``rematch`` each
take one of ``opens`` (a token bucket, ``server/limits/``: shared by every
process on one Redis) per identity and one of ``address_opens`` per address (ten times as many by default: many people
may share an address), refused (``rate_limited``) past either with the
seconds until the next; connections with
neither (this machine's, the bots) are not counted. A quick race's ``quick``
takes one too, for the race it will be paired into (``server/quick.py``),
and a place that leaves the queue unpaired gives it back (``unopened``):
people join and cancel, and that opens nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from .errors import ErrorCode, Refused
from .limits import Limiter
from .live import LiveMatch


class Holdings:
    """The matches held here that each connection, identity and address took a seat in."""

    def __init__(
        self,
        holds: Callable[[LiveMatch], bool],
        *,
        per_player: int,
        per_address: int,
        lobbies_per_address: int,
        opens: Limiter,
        address_opens: Limiter,
    ) -> None:
        self._holds = holds  # whether a match is still held in memory (``Hub.holds``)
        self.per_player, self.per_address = per_player, per_address
        self.lobbies_per_address = lobbies_per_address
        self.opens = opens  # matches opened, by identity key
        self.address_opens = address_opens  # and by address key
        # key -> match id -> (the match, whether this key created it)
        self._by_key: dict[str, dict[str, tuple[LiveMatch, bool]]] = {}

    @staticmethod
    def keys(conn: str, player: str | None, address: str | None) -> list[str]:
        """The keys a client counts under: its connection, its identity, its address (if any)."""
        keys = [f"c:{conn}"]
        if player is not None:
            keys.append(f"p:{player}")
        if address is not None:
            keys.append(f"a:{address}")
        return keys

    def check(self, keys: Iterable[str], *, creating: bool, replacing: str | None = None) -> None:
        """Refused if one of ``keys`` holds its share; ``replacing``: a match this request lets go of."""
        for key in keys:
            held = {mid: v for mid, v in self._held(key).items() if mid != replacing}
            address = key.startswith("a:")
            cap = self.per_address if address else self.per_player
            going = sum(lm.match.status != "finished" for lm, _ in held.values())
            if 0 < cap <= going:
                whose = "your address has" if address else "you have"
                raise Refused(
                    ErrorCode.NOT_ALLOWED,
                    f"{whose} {going} games going at once (lobbies and races not decided): "
                    "play, finish or leave one first",
                )
            if address and creating and self.lobbies_per_address > 0:
                lobbies = sum(
                    created and lm.match.status == "lobby" and lm.match.called_off is None
                    for lm, created in held.values()
                )
                if lobbies >= self.lobbies_per_address:
                    raise Refused(
                        ErrorCode.NOT_ALLOWED,
                        f"{lobbies} lobbies are open from your address: start one, or leave one first",
                    )

    async def opening(self, keys: Iterable[str]) -> None:
        """Count one match opened for each identity and address of ``keys``; refused past their allowance.

        Refused, it counts nothing: the tokens taken for the keys before the one refused are given back.
        """
        taken: list[str] = []
        for key, buckets in self._counted(keys):
            if wait := await buckets.take(key):
                await self.unopened(taken)
                whose = "your address has" if key.startswith("a:") else "you have"
                raise Refused(
                    ErrorCode.RATE_LIMITED,
                    f"{whose} opened a lot of games lately: the next in {math.ceil(wait)} s",
                )
            taken.append(key)

    async def unopened(self, keys: Iterable[str]) -> None:
        """Give back what ``opening`` counted for ``keys``: the match it was counted for was not opened
        (a place in the quick queue left before it was paired)."""
        for key, buckets in self._counted(keys):
            await buckets.give_back(key)

    def _counted(self, keys: Iterable[str]) -> Iterable[tuple[str, Limiter]]:
        """The keys of ``keys`` whose matches opened are counted (identities, addresses), with their buckets."""
        for key in keys:
            if key.startswith("p:"):
                yield key, self.opens
            elif key.startswith("a:"):
                yield key, self.address_opens

    def took_seat(self, keys: Iterable[str], lm: LiveMatch, *, created: bool) -> None:
        for key in keys:
            self._by_key.setdefault(key, {})[lm.match.id] = (lm, created)

    def forget_gone(self) -> None:
        """Drop the entries of matches no longer held, and the keys left with none (the sweep)."""
        for key in list(self._by_key):
            self._held(key)

    def _held(self, key: str) -> dict[str, tuple[LiveMatch, bool]]:
        """``key``'s entries still held, the others dropped."""
        entries = self._by_key.get(key)
        if entries is None:
            return {}
        gone = [mid for mid, (lm, _) in entries.items() if not self._holds(lm)]
        for mid in gone:
            del entries[mid]
        if not entries:
            del self._by_key[key]
        return entries
