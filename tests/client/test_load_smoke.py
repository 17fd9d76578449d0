"""The benchmarks at a tiny size: each runs, prints every figure, and counts no errors."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


async def run_bench(script: str, *args: str, timeout: float = 60) -> str:
    """Run ``bench/<script>`` to its end; its standard output, once it exited with 0.

    With this checkout first on the path: a script's own directory is, and an
    editable install of the package may point at another checkout.
    """
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "bench" / script), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    text = out.decode()
    assert proc.returncode == 0, text + err.decode()[-2000:]
    return text


async def test_load_benchmark_smoke() -> None:
    # A race starts up to a countdown late, then counts down (``--warmup``'s help): a shorter
    # warm-up measured no move in some phases, and a half load of nothing.
    text = await run_bench(
        "load.py", "--races", "2", "--spectators", "1", "--duration", "1", "--warmup", "6.5",
        "--server-cpus", "", "--client-cpus", "", "--repeat", "2",
        timeout=180,
    )  # fmt: skip
    for figure in (
        "sustained moves/s",
        "move -> ack",
        "move -> opp. progress",
        "server CPU",
        "KiB per connection",
        "server CPU per move",
    ):
        assert text.count(figure) >= 8, figure  # four phases, two rounds
    assert "ratios to the bare echo relay" in text
    assert "rejects+errors: 0" in text
    assert "who was the limit" in text
    assert "over 2 rounds (median, and the range)" in text


async def test_dispatch_benchmark_smoke() -> None:
    """bench/dispatch.py races two deals in process, watched; it checks every move was accepted and watched."""
    text = await run_bench("dispatch.py", "--games", "2", "--spectators", "1")
    assert " moves in 2 races, 1 at a time, protocol v2, each watched by 1: " in text
    assert "us CPU per move" in text


async def test_match_memory_benchmark_smoke() -> None:
    """bench/match_memory.py plays a few matches to their decision and prints both figures."""
    text = await run_bench("match_memory.py", "--matches", "3")
    assert "playing, 30 moves each:" in text and "decided:" in text
    assert text.count("KiB per match") == 2
