"""IllegalMove names the move and the reason and leaves the game as it was."""

from __future__ import annotations

import pytest

from server.engine import Game, IllegalMove, InvalidMove

CASES = [
    ("classic", "W>A1", "waste is empty"),
    ("classic", "W2>A1", "plays from W"),
    ("three-waste", "W>A1", "W1, W2 or W3"),
    ("classic", "R", "no redeal"),
    ("relaxed", "R", "stock is not empty"),
    ("single-deck", "A5~B1", "no spot A5"),
    ("classic", "A1:3>B1", "no card at position 3"),
    ("classic", "A1:0>A1", "onto itself"),
    ("classic", "A1~A2", "different rows"),
    ("classic", "A1:0>B1", "does not fit"),
]


@pytest.mark.parametrize(("variant", "text", "reason"), CASES)
def test_illegal_move_names_move_and_reason_and_changes_nothing(variant: str, text: str, reason: str) -> None:
    game = Game.new("1", variant)
    before = (game.state(), game.player_view())
    with pytest.raises(IllegalMove) as caught:
        game.play(text)
    assert str(caught.value.move) == text
    assert reason in caught.value.reason
    assert text in str(caught.value)
    assert (game.state(), game.player_view()) == before
    assert game.moves == []


def test_malformed_text_raises_invalid_move_and_changes_nothing() -> None:
    game = Game.new("1")
    before = game.state()
    with pytest.raises(InvalidMove) as caught:
        game.play("Z9")
    assert caught.value.text == "Z9"
    assert game.state() == before


def test_undo_with_nothing_to_undo() -> None:
    with pytest.raises(IndexError):
        Game.new("1").undo()
