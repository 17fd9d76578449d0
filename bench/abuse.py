"""Abuse benchmark: a bystander's round trip while one client makes the server spend CPU (issue 19).

    .venv/bin/python bench/abuse.py                              # this checkout's server
    .venv/bin/python bench/abuse.py --server-root /tmp/abuse-base  # another checkout's (before/after)

The server runs as ``python -m server`` (embedded, a fresh data directory,
``--rate 1000`` so that setting up a 2,000-play game takes seconds) from
``--server-root`` in a subprocess. A bystander plays a practice game on it,
one move every 50 ms, and its move-to-ack round trips are taken first
without an attack, then during each attack in turn (``--seconds`` each):

- ``resume``: one connection resumes a 2,000-play practice game from
  ``last_ev`` 0, 7 times a second;
- ``replay``: four HTTP clients each GET a 2,000-play game's
  ``/api/replay/CODE`` 7 times a second;
- ``bots``: eight connections each create a race against the ``lookahead``
  bot on ``open``, ready, and leave once the countdown runs, again and again;
- ``hints``: four connections in practice games ask hint after hint.

Each line prints the bystander's median, p95 and worst round trip (ms), its
median as a ratio of the no-attack one, and what the attack got (answers,
refusals). The attackers run in this process, the server in its own: on a
machine with two cores they share the CPU, as they would the server's host.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
LONG_GAME_PLAYS = 2000
BYSTANDER_EVERY_S = 0.05


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_server(root: Path, port: int, data: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "server", "--port", str(port), "--data", str(data), "--rate", "1000"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    server = subprocess.Popen(argv, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with (
            contextlib.suppress(OSError),
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1),
        ):
            return server
        time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not come up")


class Line:
    """A WebSocket client that reads into a list and waits for a message of a type."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    @classmethod
    async def open(cls, url: str) -> Line:
        return cls(await connect(url, max_size=None, compression=None))

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def expect(self, *kinds: str, timeout: float = 30) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                msg: dict[str, Any] = json.loads(await self.ws.recv())
                if msg["type"] in kinds:
                    return msg

    async def request(self, message: dict[str, Any], *kinds: str, timeout: float = 30) -> dict[str, Any]:
        await self.send(message)
        return await self.expect(*kinds, timeout=timeout)


async def practice(url: str, variant: str = "free-swap") -> tuple[Line, dict[str, Any], dict[str, Any]]:
    """A started practice game: its line, its ``created`` and its ``start``."""
    line = await Line.open(url)
    created = await line.request(
        {"type": "create", "seats": 1, "variant": variant, "time_limit_s": 3600}, "created"
    )
    await line.send({"type": "ready"})
    start = await line.expect("start", timeout=15)
    return line, created, start


def swap_of(view: dict[str, Any]) -> str:
    """A swap of two piles: played again and again, it never ends the game."""
    return next(m for m in view["legal"] if "~" in m)


async def long_game(url: str, finish: bool) -> tuple[str, str]:
    """A practice game of ``LONG_GAME_PLAYS`` plays: its code and seat token."""
    line, created, start = await practice(url)
    swap = swap_of(start["view"])
    for seq in range(1, LONG_GAME_PLAYS + 1):
        await line.send({"type": "move", "seq": seq, "move": swap})
    while (await line.expect("ack"))["seq"] < LONG_GAME_PLAYS:
        pass
    if finish:
        await line.request({"type": "finish"}, "result")
    await line.ws.close()
    return created["match"], created["token"]


async def bystander(line: Line, swap: str, until: Callable[[], bool]) -> list[float]:
    """Round trips (ms) of a practice game's moves, one every ``BYSTANDER_EVERY_S``."""
    seq, trips = 0, []
    while not until():
        seq += 1
        sent = time.perf_counter()
        await line.send({"type": "move", "seq": seq, "move": swap})
        while (await line.expect("ack", timeout=60))["seq"] != seq:
            pass
        trips.append((time.perf_counter() - sent) * 1000)
        await asyncio.sleep(max(0.0, BYSTANDER_EVERY_S - (time.perf_counter() - sent)))
    await line.ws.close()
    return trips


Attack = Callable[[Callable[[], bool], Counter[str]], Awaitable[None]]


async def paced(
    times_a_second: float, until: Callable[[], bool], step: Callable[[], Awaitable[None]]
) -> None:
    while not until():
        began = time.perf_counter()
        await step()
        await asyncio.sleep(max(0.0, 1 / times_a_second - (time.perf_counter() - began)))


def resume_attack(url: str, code: str, token: str) -> Attack:
    async def attack(until: Callable[[], bool], got: Counter[str]) -> None:
        line = await Line.open(url)

        async def resume() -> None:
            msg = {"type": "resume", "match": code, "token": token, "last_ev": 0}
            got[(await line.request(msg, "resumed", "error"))["type"]] += 1

        await paced(7, until, resume)
        await line.ws.close()

    return attack


def replay_attack(port: int, code: str) -> Attack:
    async def get() -> int:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            f"GET /api/replay/{code} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
        )
        answer = await reader.read()
        writer.close()
        return int(answer.split(b" ", 2)[1])

    async def attack(until: Callable[[], bool], got: Counter[str]) -> None:
        async def one_client() -> None:
            async def step() -> None:
                got[str(await get())] += 1

            await paced(7, until, step)

        await asyncio.gather(*(one_client() for _ in range(4)))

    return attack


def bots_attack(url: str) -> Attack:
    async def attack(until: Callable[[], bool], got: Counter[str]) -> None:
        async def one_client() -> None:
            while not until():
                line = await Line.open(url)
                msg = {"type": "create", "variant": "open", "bot": "lookahead"}
                answer = await line.request(msg, "created", "error")
                got[answer.get("code", "created")] += 1
                if answer["type"] == "created":
                    await line.send({"type": "ready"})
                    with contextlib.suppress(TimeoutError):
                        await line.expect("countdown", timeout=5)
                await line.ws.close()

        await asyncio.gather(*(one_client() for _ in range(8)))

    return attack


def hints_attack(url: str) -> Attack:
    async def attack(until: Callable[[], bool], got: Counter[str]) -> None:
        async def one_client() -> None:
            line, _, _ = await practice(url, "classic")
            while not until():
                answer = await line.request({"type": "hint"}, "hint", "error")
                got[answer.get("code", "hint")] += 1
            await line.ws.close()

        await asyncio.gather(*(one_client() for _ in range(4)))

    return attack


def summary(trips: list[float], base: float | None) -> str:
    if not trips:
        return "    0 moves acknowledged"
    trips = sorted(trips)
    median = statistics.median(trips)
    p95 = trips[min(len(trips) - 1, int(len(trips) * 0.95))]
    ratio = "" if base is None else f" ({median / base:.1f}x)"
    return f"{len(trips):5d} moves  median {median:7.1f}{ratio:>9}  p95 {p95:7.1f}  worst {trips[-1]:7.1f}"


async def phase(url: str, seconds: float, attack: Attack | None) -> tuple[list[float], Counter[str]]:
    """The bystander's round trips while ``attack`` runs (its game started before the clock does)."""
    line, _, start = await practice(url)
    got: Counter[str] = Counter()
    end = time.monotonic() + seconds

    def over() -> bool:
        return time.monotonic() >= end

    jobs: list[Awaitable[Any]] = [bystander(line, swap_of(start["view"]), over)]
    if attack is not None:
        jobs.append(attack(over, got))
    trips, *_ = await asyncio.gather(*jobs)
    return trips, got


async def run(args: argparse.Namespace) -> None:
    port = free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    with tempfile.TemporaryDirectory() as data:
        server = start_server(Path(args.server_root).resolve(), port, Path(data))
        try:
            playing = await long_game(url, finish=False)
            decided, _ = await long_game(url, finish=True)
            attacks: dict[str, Attack] = {
                "resume": resume_attack(url, *playing),
                "replay": replay_attack(port, decided),
                "bots": bots_attack(url),
                "hints": hints_attack(url),
            }
            print(f"server: {args.server_root}; bystander round trip, ms ({args.seconds:g} s a phase)")
            trips, _ = await phase(url, args.seconds, None)
            base = statistics.median(trips)
            print(f"{'none':8}{summary(trips, None)}")
            for name in args.attacks:
                trips, got = await phase(url, args.seconds, attacks[name])
                print(f"{name:8}{summary(trips, base)}  attack got: {dict(sorted(got.items()))}")
        finally:
            server.terminate()
            server.wait(30)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server-root", default=str(ROOT), help="the checkout whose server to run")
    ap.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    ap.add_argument("--attacks", nargs="*", default=["resume", "replay", "bots", "hints"])
    asyncio.run(run(ap.parse_args(argv)))


if __name__ == "__main__":
    main()
