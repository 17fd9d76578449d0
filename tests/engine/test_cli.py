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


# A won game of deal 4 in suitless as `engine solve 4 --variant suitless` prints it: the last 13
# moves are the automatic arrangement the engine made and recorded after the winning W>C8.
WON_LOG = (
    "A6:0>B7 C4:0>B8 A1:0>C6 B7:0>A4 B8:0>B3 B7:0>B8 C6:0>A6 A4:0>B6 A2:0>A4 A4:0>A2 B2:0>C7 B8:0>B2 "
    "A1:0>B8 B8:0>B5 B5:0>A1 B1:0>B5 B5:0>C7 B1:0>A4 B1:0>A5 B2:0>B4 B3:0>C2 C4:0>B3 B3:0>A4 C4:0>B3 "
    "A2:0>A3 A6:0>A7 A6:0>A2 T B1:0>A2 A6:0>B1 A8:0>A6 C6:0>A8 A8:0>B3 C6:0>A5 C6:0>C4 C6:0>C4 "
    "B2:0>B8 B5:0>B2 B7:0>B5 B7:0>A5 B2:0>A6 B5:0>B1 A2:0>B5 B2:0>C3 B2:0>C4 A2:0>B2 W>A2 C6:0>A2 "
    "C5:0>C6 C5:0>A8 C5:0>B7 C6:0>B8 C5:0>C8 C6:0>C5 C6:0>A8 T C6:0>B7 B7:0>C6 A8:0>B7 A8:0>C5 "
    "C1:0>A8 C1:0>A8 C1:0>B2 C1:0>A2 W>A8 W>B2 W>C5 W>C1 T W>C3 W>C3 W>C1 T W>C8 W>C1 W>C8 A1~C2 "
    "A1~B1 A2~B2 A2~C3 A4~B3 A4~C4 A4~B5 A4~C5 A4~B6 A4~C6 A5~B7 A5~C8 A5~B8"
)
WON = WON_LOG.split()


def test_play_takes_a_won_game_as_recorded_with_or_without_the_automatic_swaps() -> None:
    won = Game.replay("4", "suitless", WON)
    assert won.is_won and won.complete == 24 and [str(m) for m in won.moves] == WON
    assert output("play", "4", "--variant", "suitless", *WON) == won.state()
    assert output("play", "4", "--variant", "suitless", *WON[:-13]) == won.state()
    done = cli("play", "4", "--variant", "suitless", *WON[:-13], "A1~B1")  # not the engine's first swap
    assert done.returncode == 2
    assert done.stderr == "move 77 'A1~B1': differs from the automatic arrangement\n"


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


def test_help_says_what_a_seed_and_a_move_are() -> None:
    done = cli("play", "--help")
    assert done.returncode == 0
    words = " ".join(done.stdout.split())
    assert "SEED any text" in words and "MOVE a move in the rule book's notation" in words, words
    assert output("deal", "abc") == Game.new("abc").state()  # as it says: any text is a seed
