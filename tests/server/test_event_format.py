"""A move's event is a plain class on the move path, but the logs and the bus hold the same text as before.

``Moved`` and ``Numbers`` were pydantic models; a stored log written by
them must still read, a log written now must read on a server of before,
and a corrupt one must still be refused.
"""

from __future__ import annotations

import pydantic
import pytest

from server.match.events import Moved, Numbers, TookBack, decode_events, encode_events, event_json, with_ev

#: What the pydantic model wrote for this move (its fields in declaration order, no spaces).
STORED = (
    '{"ev":5,"at":1700000000123,"kind":"moved","seat":1,"seq":3,"move":"7H-B4",'
    '"numbers":{"leftover":70,"on_grid":26,"complete":1,"moves":4}}'
)
MOVE = Moved(ev=5, at=1700000000123, seat=1, seq=3, move="7H-B4", numbers=Numbers(70, 26, 1, 4))


def test_a_move_is_written_as_the_pydantic_model_wrote_it_and_reads_back_equal() -> None:
    assert event_json(MOVE) == STORED
    assert encode_events([MOVE, MOVE]) == f"[{STORED},{STORED}]"
    assert decode_events(f"[{STORED}]") == [MOVE]


def test_an_undo_holds_its_numbers_as_before() -> None:
    undone = TookBack(ev=6, at=7, seat=0, moves=["W-B4"], numbers=Numbers(71, 25, 1, 3))
    text = event_json(undone)
    assert text == (
        '{"ev":6,"at":7,"kind":"undone","seat":0,"moves":["W-B4"],'
        '"numbers":{"leftover":71,"on_grid":25,"complete":1,"moves":3}}'
    )
    assert decode_events(f"[{text}]") == [undone]


def test_renumbering_a_move_keeps_the_rest() -> None:
    moved = with_ev(MOVE, 9)
    assert (
        isinstance(moved, Moved) and moved.ev == 9 and event_json(moved) == STORED.replace('"ev":5', '"ev":9')
    )
    assert MOVE.ev == 5


@pytest.mark.parametrize(
    "corrupt",
    [
        STORED.replace('"seq":3,', '"seq":3,"extra":1,'),  # a key it never had
        STORED.replace('"complete":1,', '"complete":1,"x":0,'),  # inside its numbers
        STORED.replace('"seat":1,', ""),  # a field missing
        STORED.replace(',"moves":4', ""),  # a number missing
        STORED.replace('"seq":3', '"seq":"three"'),  # mistyped
        STORED.replace('"kind":"moved"', '"kind":"mooved"'),  # no such event
    ],
)
def test_a_corrupt_move_in_a_log_is_refused(corrupt: str) -> None:
    with pytest.raises(pydantic.ValidationError):
        decode_events(f"[{corrupt}]")
