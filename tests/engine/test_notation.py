"""Move notation: parse and str round-trip every form of RULES.md; bad text names itself."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


spots = st.builds("{}{}".format, st.sampled_from("ABC"), st.integers(1, 8))
moves = st.one_of(
    st.just(Move.turn()),
    st.just(Move.redeal()),
    st.builds(Move.from_waste, spots, st.integers(0, 3)),
    st.builds(Move.from_pile, spots, st.integers(0, 99), spots),
    st.builds(Move.swap, spots, spots),
)
# Texts near the notation, well-formed or not, and any text at all.
texts = st.one_of(
    st.from_regex(r"\A\s?(T|R|W[0-4]?>[A-D]\d|[A-D]\d:\d{1,3}>[A-D]\d|[A-D]\d~[A-D]\d)\s?\Z"),
    st.text(alphabet="TRWABCD0123456789:>~ -tw", max_size=10),
    st.text(max_size=10),
)


@given(moves)
def test_every_move_round_trips(move: Move) -> None:
    assert Move.parse(move.text) == move
    assert Move.parse(f" {move.text.lower()}\n").text == move.text


@settings(max_examples=50)
@given(texts)
def test_any_text_is_a_move_written_canonically_or_invalid_naming_it(text: str) -> None:
    try:
        move = Move.parse(text)
    except InvalidMove as e:
        assert e.text == text
        return
    assert Move.parse(move.text) == move
    written = text.strip(" \t\n\r\f\v").upper()
    if move.kind is MoveKind.SWAP:
        written = "~".join(sorted(written.split("~"), key=lambda spot: (spot[0], int(spot[1:]))))
    assert move.text == written
