"""The benchmarks at a tiny size: each runs, prints every figure, and counts no errors."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import re
import signal
import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


async def run_bench(script: str, *args: str, timeout: float = 60) -> str:
    """Run ``bench/<script>`` to its end; its standard output, once it exited with 0.

    With this checkout first on the path: a script's own directory is, and an
    editable install of the package may point at another checkout. A failure
    shows both outputs whole: the figures printed so far, and every traceback
    (a client worker's among them); one that does not end in ``timeout`` is
    interrupted (SIGINT, to its workers too) so its tracebacks say where it waited.
    """
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "bench" / script), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT, env=env,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    outputs = asyncio.gather(proc.stdout.read(), proc.stderr.read())
    timed_out = False
    try:
        try:
            out, err = await asyncio.wait_for(asyncio.shield(outputs), timeout)
        except TimeoutError:
            timed_out = True
            os.killpg(proc.pid, signal.SIGINT)
            out, err = await asyncio.wait_for(outputs, 30)
        await proc.wait()
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    text = out.decode()
    ended = f"no end in {timeout} s" if timed_out else f"exit {proc.returncode}"
    assert proc.returncode == 0 and not timed_out, f"{ended}\n--- stdout\n{text}\n--- stderr\n{err.decode()}"
    return text


@pytest.mark.timeout(240)  # two rounds of four phases of 4 s, each after its races start: 40-80 s
async def test_load_benchmark_smoke() -> None:
    # The measured window opens once every race is playing (a warm-up of 3.1 s is shorter than
    # a race's late start and countdown), and lasts longer than a race's cycle between two games
    # (a game of ~0.15 s, a new match and its 3 s countdown): every phase measures moves.
    text = await run_bench(
        "load.py", "--races", "2", "--spectators", "1", "--duration", "4", "--warmup", "3.1",
        "--server-cpus", "", "--client-cpus", "", "--repeat", "2",
        timeout=180,
    )  # fmt: skip
    moves = [int(n) for n in re.findall(r"\((\d+) moves in ", text)]
    assert len(moves) == 8 and min(moves) > 0, text  # four phases, two rounds
    for figure in (
        "sustained moves/s",
        "move -> ack",
        "move -> opp. progress",
        "server CPU",
        "KiB per connection",
        "server CPU per move",
    ):
        assert text.count(figure) >= 8, f"{figure}\n{text}"  # four phases, two rounds
    assert "ratios to the bare echo relay" in text, text
    assert "rejects+errors: 0" in text, text
    assert "who was the limit" in text, text
    assert "over 2 rounds (median, and the range)" in text, text


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


def test_load_worker_that_failed_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client worker that cannot connect is reported with its error, not taken for ready.

    It once said "ready" on its way out: the bench then sent the window to a
    dead process, its pipe broke, and the worker's own error was never read.
    A message to a worker that is gone says what became of it.
    """
    spec = importlib.util.spec_from_file_location("bench_load", ROOT / "bench" / "load.py")
    assert spec is not None and spec.loader is not None
    load = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, load)  # its dataclasses look their module up
    spec.loader.exec_module(load)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    job = load.Job("races", [("127.0.0.1", port)], races=[0])
    pool = load.Pool([job])
    with pytest.raises(RuntimeError, match=r"failed before 'ready'.*ConnectionRefusedError"):
        pool.wait("ready", timeout=60)
    pool.procs[0].join(10)
    gone = load.Pool([job])
    gone.procs[0].join(60)  # told nothing, it has exited
    with pytest.raises(RuntimeError, match=r"failed before 'go'.*ConnectionRefusedError"):
        gone.send(("go", None))
