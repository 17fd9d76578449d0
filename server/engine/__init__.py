"""The rules of Devil's Grip (RULES.md), pure: no I/O, no asyncio, no sockets."""

from .cards import card_text, parse_card, shuffled_deck
from .client_game import ClientGame, InvalidView, RevealMismatch
from .game import Game, IllegalMove, rating
from .moves import InvalidMove, Move, MoveKind
from .variants import VARIANTS, UnknownVariant, Variant, get_variant

__all__ = [
    "VARIANTS",
    "ClientGame",
    "Game",
    "IllegalMove",
    "InvalidMove",
    "InvalidView",
    "Move",
    "MoveKind",
    "RevealMismatch",
    "UnknownVariant",
    "Variant",
    "card_text",
    "get_variant",
    "parse_card",
    "rating",
    "shuffled_deck",
]
