"""A bystander's round trip while one client floods the server: frames, or connections and lobbies.

    .venv/bin/python bench/edges.py                       # this checkout
    .venv/bin/python bench/edges.py --against /tmp/main   # and a copy of another version, same run

Each version is ``python -m server --host 0.0.0.0`` (embedded, fresh data)
started from its own directory. The attacker is another process connecting
from this machine's network address (as another machine on the LAN would:
loopback is not counted per address), the bystander a third one... in this
process, on 127.0.0.1, sending a ``hello`` with its identity every 50 ms.

- **quiet**: nobody else.
- **frames**: one connection sending 4,350 frames a second for 3 s (the
  issue's flood): how many ``rate_limited`` answers it got, and whether and
  when it was closed.
- **lobbies64**, **lobbies1000**: 64 (the cap per address) or 1,000
  connections opened at once, each creating a lobby 20 times a second for
  5 s: connections held, lobbies in the server's memory at the end
  (``/metrics``, read on loopback), the server's RSS. 64 offers both
  versions the same load; 1,000 is what one address could hold before.

Printed per version and scenario: the bystander's round trip p50/p95/max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import connect  # noqa: E402
from websockets.exceptions import ConnectionClosed, InvalidStatus  # noqa: E402

from server.reach import lan_address  # noqa: E402

LISTENING = re.compile(rb"listening on http://\S+?:(\d+)/")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Server:
    def __init__(self, root: Path) -> None:
        self.data = tempfile.mkdtemp(prefix="grip-edges-")
        self.log = Path(self.data) / "server.log"
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "server", "--host", "0.0.0.0", "--port", "0", "--data", self.data],
                cwd=root,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 20
        while not (m := LISTENING.search(self.log.read_bytes())):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text(errors="replace"))
            time.sleep(0.05)
        self.port = int(m.group(1))

    def lobbies(self) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            text = r.read().decode()
        m = re.search(r'^grip_matches\{status="lobby"\} (\S+)$', text, re.M)
        return int(float(m.group(1))) if m else -1

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        m = re.search(r"VmRSS:\s+(\d+) kB", status)
        return int(m.group(1)) / 1024 if m else 0.0

    def stop(self) -> None:
        """SIGTERM; a server still closing its thousand sockets after 30 s is killed."""
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def bystander(url: str, stop: asyncio.Event) -> list[float]:
    """Round trips (ms) of a ``hello`` with its identity, every 50 ms until ``stop``."""
    rtts: list[float] = []
    async with connect(url, proxy=None) as ws:
        await ws.send(json.dumps({"type": "hello", "name": "bystander"}))
        me = json.loads(await ws.recv())
        again = json.dumps({"type": "hello", "player": me["player"], "key": me["key"]})
        while not stop.is_set():
            t0 = time.perf_counter()
            await ws.send(again)
            while json.loads(await ws.recv())["type"] != "welcome":
                pass
            rtts.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.05)
    return rtts


# ------------------------------------------------------------------ the attacker (its own process)


async def flood_frames(url: str) -> dict[str, Any]:
    told, closed_after = 0, None
    async with connect(url, proxy=None, max_queue=None) as ws:

        async def read() -> None:
            nonlocal told
            async for frame in ws:
                told += json.loads(frame).get("code") == "rate_limited"

        reader = asyncio.create_task(read())
        t0 = time.monotonic()
        frame = json.dumps({"type": "move", "seq": 1, "move": "T"})
        try:
            while (elapsed := time.monotonic() - t0) < 3:
                for _ in range(44):  # 4,400 a second in batches every 10 ms
                    await ws.send(frame)
                await asyncio.sleep(max(0.0, 0.01 - (time.monotonic() - t0 - elapsed)))
        except ConnectionClosed:
            closed_after = time.monotonic() - t0
        await asyncio.wait_for(asyncio.gather(reader, return_exceptions=True), 5)
        if closed_after is None and ws.close_code is not None:
            closed_after = time.monotonic() - t0
    return {"rate_limited answers": told, "closed after s": closed_after and round(closed_after, 2)}


async def flood_lobbies(url: str, connections: int) -> dict[str, Any]:
    refused = 0

    async def one() -> Any:
        nonlocal refused
        try:
            return await connect(url, proxy=None, open_timeout=20, max_queue=None)
        except (InvalidStatus, OSError, TimeoutError, ConnectionClosed):
            refused += 1
            return None

    conns = [c for c in await asyncio.gather(*(one() for _ in range(connections))) if c is not None]
    create = json.dumps({"type": "create"})

    async def creating(ws: Any) -> None:
        t0 = time.monotonic()
        try:
            while time.monotonic() - t0 < 5:
                await ws.send(create)
                await asyncio.sleep(0.05)
        except ConnectionClosed:
            pass

    await asyncio.gather(*(creating(ws) for ws in conns))
    held = sum(ws.close_code is None for ws in conns)
    print(json.dumps({"connections held": held, "refused": refused}), flush=True)
    sys.stdin.readline()  # held open until the bench has read the server's figures
    for ws in conns:
        ws.transport.abort()
    return {}


def attack(kind: str, url: str) -> None:
    if kind == "frames":
        result = asyncio.run(flood_frames(url))
    else:
        result = asyncio.run(flood_lobbies(url, int(kind.removeprefix("lobbies"))))
    if result:
        print(json.dumps(result), flush=True)


# ------------------------------------------------------------------ the bench


async def scenario(server: Server, kind: str) -> dict[str, Any]:
    local = f"ws://127.0.0.1:{server.port}/"
    stop = asyncio.Event()
    watching = asyncio.create_task(bystander(local, stop))
    figures: dict[str, Any] = {}
    if kind == "quiet":
        await asyncio.sleep(5)
    else:
        lan = f"ws://{lan_address()}:{server.port}/"
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            __file__,
            "--attack",
            kind,
            lan,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert proc.stdout is not None and proc.stdin is not None
        figures = json.loads(await proc.stdout.readline())
        if kind.startswith("lobbies"):
            figures["lobbies in memory"] = await asyncio.to_thread(server.lobbies)
            figures["server RSS MB"] = round(server.rss_mb())
        proc.stdin.write(b"\n")
        await proc.stdin.drain()
        await proc.wait()
    stop.set()
    rtts = await watching
    figures |= {
        "bystander p50 ms": round(statistics.median(rtts), 1),
        "p95 ms": round(pct(rtts, 0.95), 1),
        "max ms": round(max(rtts), 1),
    }
    return figures


async def bench(roots: list[Path]) -> None:
    for root in roots:
        for kind in ("quiet", "frames", "lobbies64", "lobbies1000"):
            server = Server(root)
            try:
                print(f"{root.name} {kind}: {await scenario(server, kind)}", flush=True)
            finally:
                server.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", type=Path, action="append", default=[], help="another version's checkout")
    ap.add_argument("--attack", nargs=2, metavar=("KIND", "URL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.attack:
        attack(*args.attack)
        return
    if lan_address() is None:
        sys.exit("bench/edges.py: the attacker needs this machine's network address, and there is none")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    asyncio.run(bench([*args.against, ROOT]))


if __name__ == "__main__":
    main()
