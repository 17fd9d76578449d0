"""The JavaScript engine (client/web/js/engine) against the Python engine, under node's test runner.

The Python engine makes the fixtures (the JavaScript engine never deals): the
cross-check's recorded games (``crosscheck.py``), the deal of every golden
game, the verdict on every move text, the bad views, a hidden refill. ``tests/js/*.test.mjs``
read them and compare. Skipped without node, except in CI (``.ci/run``
installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from crosscheck import BAD_VIEWS, REVEAL_MISMATCHES, after_a_stock_refill, good_view, probe_pool
from engine_helpers import GOLDEN_DIR

from server.engine import Game, InvalidMove, Move

ROOT = Path(__file__).resolve().parents[2]
JS_TESTS = sorted((ROOT / "tests" / "js").glob("*.test.mjs"))
NODE = shutil.which("node")
NODE_MAJOR = 18  # node --test, and the modern JavaScript the page uses


def node_missing() -> str | None:
    """Why node cannot run these tests here, or None."""
    if NODE is None:
        return "node is not installed"
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0] or 0) < NODE_MAJOR:
        return f"node {version} is older than {NODE_MAJOR}"
    return None


@pytest.fixture(scope="module")
def fixtures(crosscheck_dir: Path) -> Path:
    """The cross-check's records, plus golden.json, notation.json and bad-views.json beside them."""
    golden = []
    for path in sorted(GOLDEN_DIR.glob("*.json")) if GOLDEN_DIR.is_dir() else []:
        recorded = json.loads(path.read_text())
        game = Game.new(recorded["seed"], recorded["variant"])
        golden.append({"path": str(path), "deal": game.player_view() | {"stock": game.state()["stock"]}})
    (crosscheck_dir / "golden.json").write_text(json.dumps(golden))
    texts = [*probe_pool(), "", "X", "W0>A1", "A9:0>B1", "A2:>C5", "A2-B5", "A2~", "5S", " b5~a2\n", "\tt\v"]
    texts += ["T\x1c", "\x1fT", "\x85R", "\ufeffT", "T\u00a0", "\u3000W>A1"]  # blanks to Python or JavaScript
    (crosscheck_dir / "notation.json").write_text(json.dumps([[t, canonical(t)] for t in texts]))
    bad = [[good_view() | change, why] for change, why in BAD_VIEWS]
    (crosscheck_dir / "bad-views.json").write_text(json.dumps(bad))
    game, _ = after_a_stock_refill("classic")
    refill = {"view": Game.new("1").player_view(), "move": game.moves[0].text, "reveal": game.revealed()}
    refill |= {"check": game.check(), "legal": game.legal_texts(), "mismatches": REVEAL_MISMATCHES}
    (crosscheck_dir / "refill.json").write_text(json.dumps(refill))
    return crosscheck_dir


def canonical(text: str) -> str | None:
    try:
        return Move.parse(text).text
    except InvalidMove:
        return None


@pytest.mark.parametrize("script", JS_TESTS, ids=[p.name for p in JS_TESTS])
def test_javascript_engine(script: Path, fixtures: Path) -> None:
    missing = node_missing()
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{missing} (.ci/run installs it)")
        pytest.skip(f"{missing}; .ci/run installs it")
    assert NODE is not None
    if script.name == "golden.test.mjs" and not GOLDEN_DIR.is_dir():
        pytest.skip(f"no golden files: {GOLDEN_DIR} is absent")
    started = time.perf_counter()
    done = subprocess.run(
        [NODE, "--test", str(script)],
        cwd=ROOT,
        env=os.environ | {"ENGINE_FIXTURES": str(fixtures)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(f"{script.name}: node ran {time.perf_counter() - started:.2f} s")
    assert done.returncode == 0, done.stdout[-20000:] + done.stderr[-5000:]
    print(done.stdout)
