"""Moves: small frozen values whose text notation round-trips (RULES.md, "Play").

``Move.parse("A2:1>C5")`` and ``str(move)`` are inverse for every canonical
text; a swap given in the other order (``B5~A2``) parses to its canonical form.
Input may be in any case, with ASCII blanks around it; the JavaScript engine
(``client/web/js/engine/moves.js``) reads the same texts as moves.
A move names spots, not indices, so one ``Move`` means the same on every grid
size; whether a spot exists on this grid is the game's question, not the
parser's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache


class InvalidMove(ValueError):
    """Text that is not a move in any variant's notation."""

    def __init__(self, text: str, why: str = "not a move in RULES.md notation") -> None:
        super().__init__(f"{text!r}: {why}")
        self.text = text
        self.why = why


class MoveKind(StrEnum):
    TURN = "turn"
    REDEAL = "redeal"
    WASTE = "waste"  # waste top to a pile
    PILE = "pile"  # a card and all above it, pile to pile
    SWAP = "swap"


_SPOT = r"([ABC])([1-8])"
_PATTERNS = (
    (MoveKind.WASTE, re.compile(rf"W([1-3]?)>{_SPOT}")),
    (MoveKind.PILE, re.compile(rf"{_SPOT}:(0|[1-9][0-9]?)>{_SPOT}")),
    (MoveKind.SWAP, re.compile(rf"{_SPOT}~{_SPOT}")),
)
# The blanks a move's text may have around it: ASCII only, as str.strip() and JavaScript's trim()
# each take further, different characters (U+001C..U+001F and U+0085; U+FEFF) for blanks.
_BLANKS = " \t\n\r\f\v"


def spot_order(spot: str) -> tuple[str, int]:
    """Sort key for spot names: A1..A8, B1..B8, C1..C8 (any grid width)."""
    return spot[0], int(spot[1:])


@dataclass(frozen=True, slots=True)
class Move:
    """One move. Fields not used by a kind keep their defaults.

    - ``source``: the spot a pile move or swap starts from.
    - ``waste``: for a waste move, 0 for the single waste ``W``, else 1..3.
    - ``depth``: for a pile move, the position of the moved card (0 = bottom).
    - ``target``: the spot a waste or pile move goes to, or a swap's second spot.
    """

    kind: MoveKind
    source: str = ""
    target: str = ""
    depth: int = 0
    waste: int = 0
    text: str = field(init=False, repr=False, compare=False)  # the notation, made once

    @classmethod
    def turn(cls) -> Move:
        return _TURN

    @classmethod
    def redeal(cls) -> Move:
        return _REDEAL

    @classmethod
    def from_waste(cls, target: str, waste: int = 0) -> Move:
        return cls(MoveKind.WASTE, target=target, waste=waste)

    @classmethod
    def from_pile(cls, source: str, depth: int, target: str) -> Move:
        return cls(MoveKind.PILE, source=source, target=target, depth=depth)

    @classmethod
    def swap(cls, first: str, second: str) -> Move:
        if spot_order(second) < spot_order(first):
            first, second = second, first
        return cls(MoveKind.SWAP, source=first, target=second)

    @classmethod
    def parse(cls, text: str) -> Move:
        """The move written ``text``; ``InvalidMove`` naming the text if none."""
        if not isinstance(text, str):
            raise InvalidMove(repr(text), "a move is written as text")
        return _parse(text)

    def __post_init__(self) -> None:
        # The text is asked for on every view (the sorted legal list): make it once per move.
        object.__setattr__(self, "text", self._notation())

    def __str__(self) -> str:
        return self.text

    def _notation(self) -> str:
        kind = self.kind
        if kind is MoveKind.TURN:
            return "T"
        if kind is MoveKind.REDEAL:
            return "R"
        if kind is MoveKind.WASTE:
            return f"W{self.waste or ''}>{self.target}"
        if kind is MoveKind.PILE:
            return f"{self.source}:{self.depth}>{self.target}"
        return f"{self.source}~{self.target}"


@lru_cache(maxsize=4096)  # every move a server decides is parsed; the texts in use are few
def _parse(text: str) -> Move:
    t = text.strip(_BLANKS).upper()
    if t == "T":
        return _TURN
    if t == "R":
        return _REDEAL
    for kind, pattern in _PATTERNS:
        m = pattern.fullmatch(t)
        if m is None:
            continue
        g = m.groups()
        if kind is MoveKind.WASTE:
            return Move.from_waste(g[1] + g[2], int(g[0]) if g[0] else 0)
        if kind is MoveKind.PILE:
            return Move.from_pile(g[0] + g[1], int(g[2]), g[3] + g[4])
        return Move.swap(g[0] + g[1], g[2] + g[3])
    raise InvalidMove(text)


_TURN = Move(MoveKind.TURN)
_REDEAL = Move(MoveKind.REDEAL)
