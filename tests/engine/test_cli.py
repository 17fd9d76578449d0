"""``python -m server.engine deal|play``, run as a subprocess like a tool would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server.engine import Game

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"grid", "stock", "waste", "leftover", "on_grid", "complete", "legal", "over", "won"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.engine", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def output(*args: str) -> dict[str, Any]:
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    state: dict[str, Any] = json.loads(done.stdout)
    return state


def test_deal() -> None:
    state = output("deal", "12345")
    assert set(state) >= KEYS
    assert state == Game.new("12345").state()
    assert state["legal"] == sorted(state["legal"])


def test_play_with_variant() -> None:
    state = output("play", "1", "--variant", "three-waste", "T")
    assert state["waste"] == [["2D"], ["KH"], ["KC"]] and state["leftover"] == 72


def test_play() -> None:
    game = Game.new("1")
    moves = ["T", game.legal_texts()[0]]
    for text in moves:
        game.play(text)
    assert output("play", "1", *moves) == game.state()


@pytest.mark.parametrize(("move", "reason"), [("A1:0>A1", "onto itself"), ("Q7", "not a move")])
def test_bad_move_exits_2_naming_move_position_and_reason(move: str, reason: str) -> None:
    done = cli("play", "1", "T", move)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert move in lines[0] and "2" in lines[0] and reason in lines[0]


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    """``engine deal 12345 | head -c 100``: the pipe closes under the write, and that is no error to report."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "server.engine", "deal", "12345"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the engine has written a byte: its write finds no reader
    err = proc.stderr.read()
    assert proc.wait(60) == 1
    assert err == b""
