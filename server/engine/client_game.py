"""A player's own copy of their game, built from what they see: the engine of a protocol v2 client.

The server deals and knows every card. A client knows what a v1 ``view``
shows: every pile, each waste's top and count, the stock's count (its order
only in ``open``), the redeals left. ``ClientGame.from_view`` builds the
position from such a snapshot with ``HIDDEN`` cards for the rest, and plays on
it by the same rules as the server's ``Game`` (it is the same ``BaseGame``
class): a hidden card fits nowhere, nothing fits on it and its pile swaps with
nothing, so every move it offers stays legal whatever the card turns out to be.

A play that brings cards into view leaves them hidden: ``revealed()`` then
names each with ``??`` (a face-down card to draw), and ``reveal(cards)`` puts
in the cards of the server's ack. The client then compares ``check()`` with
the ack's; a difference means it has diverged and must resync from a snapshot.

A client that played on before the ack of an earlier play came takes the
later plays back, reveals, and plays them again (they stay legal)::

    later = [game.undo()[0] for _ in range(plays_since)]
    game.reveal(ack_reveal)
    agrees = game.check() == ack_check
    for move in reversed(later):
        game.play(move)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cards import HIDDEN, parse_card
from .game import BaseGame, spot_names
from .variants import get_variant


class InvalidView(ValueError):
    """A snapshot that is not a view of a game of its variant."""


class RevealMismatch(ValueError):
    """A reveal this position cannot hold: the client has diverged from the server and must resync."""

    def __init__(self, key: str, card: str, why: str) -> None:
        super().__init__(f"reveal {key}={card}: {why}")
        self.key = key
        self.card = card
        self.why = why


def _count(view: Mapping[str, Any], name: str, most: int) -> int:
    value = view.get(name)
    if type(value) is not int or not 0 <= value <= most:
        raise InvalidView(f"{name} must be a whole number from 0 to {most}, not {value!r}")
    return value


def _cards(texts: Any, where: str) -> list[int]:
    if not isinstance(texts, list | tuple) or not all(isinstance(t, str) for t in texts):
        raise InvalidView(f"{where} must be a list of cards, not {texts!r}")
    try:
        return [parse_card(t) for t in texts]
    except ValueError as e:
        raise InvalidView(f"{where}: {e}") from None


class ClientGame(BaseGame):
    """One player's game as their client holds it: built from a view, never dealt."""

    _moves_before = 0  # the view's count of moves: the moves themselves are not known here

    @classmethod
    def from_view(cls, view: Mapping[str, Any]) -> ClientGame:
        """The position a v1 ``view`` shows (``Game.player_view()``, the protocol's ``View``).

        Raises ``InvalidView`` naming what does not fit, ``UnknownVariant`` for
        an unknown variant.
        """
        variant = get_variant(str(view.get("variant")))
        grid = view.get("grid")
        names = spot_names(variant)
        if not isinstance(grid, Mapping) or sorted(grid) != sorted(names):
            raise InvalidView(f"a {variant.name} grid has the spots {', '.join(names)}")
        piles = [_cards(grid[name], name) for name in names]
        waste = view.get("waste")
        if not isinstance(waste, list) or len(waste) != variant.wastes:
            raise InvalidView(f"{variant.name} has {variant.wastes} waste(s), as a list of {{top, count}}")
        wastes = []
        for number, shown in enumerate(waste, 1):
            count = _count(shown, "count", variant.cards) if isinstance(shown, Mapping) else -1
            top = shown.get("top") if isinstance(shown, Mapping) else None
            if count < 0 or (top is None) != (count == 0):
                raise InvalidView(f"waste {number} must show its count, and its top card when not empty")
            wastes.append([HIDDEN] * (count - 1) + _cards([top], f"waste {number}") if count else [])
        stock_count = _count(view, "stock_count", variant.cards)
        shown_stock = view.get("stock")
        if shown_stock is None:
            stock = [HIDDEN] * stock_count
        else:
            stock = _cards(shown_stock, "stock")[::-1]
            if len(stock) != stock_count:
                raise InvalidView(f"the stock shows {len(stock)} cards, stock_count says {stock_count}")
        held = sum(map(len, piles)) + sum(map(len, wastes)) + stock_count
        if held != variant.cards:
            raise InvalidView(f"the view holds {held} cards; {variant.name} is played with {variant.cards}")
        game = cls(variant, piles, stock, wastes, _count(view, "redeals_left", variant.redeals))
        game._moves_before = _count(view, "moves", 1 << 30)
        return game

    @property
    def move_count(self) -> int:
        return self._moves_before + len(self.moves)

    def reveal(self, cards: Mapping[str, str]) -> None:
        """Put in the cards the server revealed for the last play (an ack's or a board's ``reveal``).

        Each names a spot (the card a refill from the stock put there) or a
        waste (its top card). A card this engine already knew must be the same.
        Raises ``RevealMismatch``, the position unchanged, for a reveal that
        does not fit: a key that is no spot or waste here, an empty waste, a
        spot not holding exactly one card, or another card than the one known.
        """
        wastes, piles, spots = self._wastes, self._piles, self._t.index
        changes: list[tuple[list[int], int, int]] = []  # (the waste or pile, spot or -1, card)
        for key, text in cards.items():
            try:
                card = parse_card(text)
            except (ValueError, AttributeError):
                raise RevealMismatch(key, str(text), "not a card") from None
            if key in self._waste_names:
                cards_there, x = wastes[self._waste_names.index(key)], -1
                if not cards_there:
                    raise RevealMismatch(key, text, "the waste is empty")
            elif key in spots:
                x = spots[key]
                cards_there = piles[x]
                if len(cards_there) != 1:
                    raise RevealMismatch(key, text, f"the spot holds {len(cards_there)} cards, not a refill")
            else:
                raise RevealMismatch(key, text, f"no spot or waste {key} in {self.variant.name}")
            known = cards_there[-1]
            if known not in (HIDDEN, card):
                raise RevealMismatch(key, text, "another card is there")
            changes.append((cards_there, x, card))
        for cards_there, x, card in changes:
            if cards_there[-1] != HIDDEN:
                continue
            if x < 0:
                cards_there[-1] = card
            else:
                self._take(x, 0)  # through the pile edits, which keep the indexes
                self._put_card(x, card)


__all__ = ["ClientGame", "InvalidView", "RevealMismatch"]
