"""Move notation: parse and str round-trip every form of RULES.md; bad text names itself."""

from __future__ import annotations

import pytest

from server.engine import InvalidMove, Move, MoveKind

CANONICAL = ["T", "R", "W>B3", "W1>A1", "W2>B3", "W3>C8", "A2:1>C5", "C8:0>A1", "B4:3>B5", "A2~B5", "A1~C8"]


@pytest.mark.parametrize("text", CANONICAL)
def test_round_trip(text: str) -> None:
    move = Move.parse(text)
    assert str(move) == text
    assert Move.parse(str(move)) == move


def test_fields() -> None:
    assert Move.parse("W2>B3") == Move(MoveKind.WASTE, target="B3", waste=2)
    assert Move.parse("W>B3") == Move(MoveKind.WASTE, target="B3", waste=0)
    assert Move.parse("A2:1>C5") == Move(MoveKind.PILE, source="A2", target="C5", depth=1)
    assert Move.parse("T").kind is MoveKind.TURN
    assert Move.parse("R").kind is MoveKind.REDEAL


def test_swap_is_canonical_in_either_order() -> None:
    assert Move.parse("B5~A2") == Move.parse("A2~B5")
    assert str(Move.parse("B5~A2")) == "A2~B5"
    assert str(Move.swap("C1", "B8")) == "B8~C1"


@pytest.mark.parametrize(
    "text", ["", "X", "TT", "W>D1", "W4>A1", "W0>A1", "A9:0>B1", "A2:>C5", "A2-B5", "A2~", "5S"]
)
def test_malformed_text_raises_naming_it(text: str) -> None:
    with pytest.raises(InvalidMove) as caught:
        Move.parse(text)
    assert caught.value.text == text
    assert repr(text) in str(caught.value)
    assert caught.value.why


@pytest.mark.parametrize(
    ("text", "canonical"), [(" t\t", "T"), ("\r\nb5~a2\f\v", "A2~B5"), ("w2>c1 ", "W2>C1")]
)
def test_any_case_and_ascii_blanks_around(text: str, canonical: str) -> None:
    assert str(Move.parse(text)) == canonical


# Blanks to str.strip() (U+001C..U+001F, U+0085) or to JavaScript's trim() (U+FEFF), not to both:
# the two engines must read the same texts as moves, so neither takes them.
@pytest.mark.parametrize("text", ["T\x1c", "\x1fT", "\x85R", "\ufeffT", "T\u00a0", "\u3000W>A1"])
def test_no_other_blanks_around(text: str) -> None:
    with pytest.raises(InvalidMove):
        Move.parse(text)
