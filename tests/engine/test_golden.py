"""Golden games of ../shared/golden, used like perft files: legal-move counts, then the end state."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import GOLDEN_DIR

from server.engine import Game

FILES = sorted(GOLDEN_DIR.glob("*.json")) if GOLDEN_DIR.is_dir() else []


@pytest.mark.skipif(
    not GOLDEN_DIR.is_dir() and os.environ.get("CI") != "true",
    reason=f"no golden files: {GOLDEN_DIR} is absent",
)
def test_golden_files_present() -> None:
    """In CI the shared golden files must be there: a missing directory fails, never skips."""
    assert FILES, f"{GOLDEN_DIR} holds no *.json"


@pytest.mark.skipif(not GOLDEN_DIR.is_dir(), reason=f"no golden files: {GOLDEN_DIR} is absent")
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_game(path: Path) -> None:
    golden: dict[str, Any] = json.loads(path.read_text())
    game = Game.new(golden["seed"], golden["variant"])
    for number, step in enumerate(golden["steps"], 1):
        assert len(game.legal_moves()) == step["legal_count"], f"before step {number} ({step['move']})"
        game.play(step["move"])
    state = game.state()
    for key, expected in golden["final"].items():
        assert state[key] == expected, key
