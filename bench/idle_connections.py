"""Memory a server process holds for each idle connection, at two counts.

    .venv/bin/python bench/idle_connections.py --connections 1000 5000

Starts ``python -m server`` (embedded: SQLite; and with ``--redis``, a
``redis-server`` of its own and two server processes on it, the
connections split between them), opens the connections from this process
(each says ``hello``, as the web page does, then idles), and reads each
server's resident memory (``VmRSS``) before and after. Printed: the growth
per connection, for each count: it should not grow with the count. With
``--watch``, every connection also watches one match (a lobby a first
connection opened): the memory a spectator.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

from websockets.asyncio.client import ClientConnection, connect

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import RedisServer  # noqa: E402
from tests.processes import ServerProcess  # noqa: E402


def rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def open_idle(port: int, watch: str | None) -> ClientConnection:
    ws = await connect(f"ws://127.0.0.1:{port}", open_timeout=60, max_size=2**20)
    await ws.send(json.dumps({"type": "hello", "v": 2, "name": "idle"}))
    await ws.recv()
    if watch is not None:
        await ws.send(json.dumps({"type": "watch", "match": watch}))
        assert json.loads(await ws.recv())["type"] == "watching"
    return ws


async def lobby(port: int) -> tuple[ClientConnection, str]:
    """A match to watch: a lobby, kept open by its creator's connection."""
    ws = await connect(f"ws://127.0.0.1:{port}")
    await ws.send(json.dumps({"type": "create"}))
    while (msg := json.loads(await ws.recv()))["type"] != "created":
        pass
    return ws, str(msg["match"])


async def measure(servers: list[ServerProcess], counts: list[int], watch: bool) -> None:
    opened: list[ClientConnection] = []
    creator, code = await lobby(servers[0].port) if watch else (None, None)
    base = [rss(s.proc.pid) for s in servers if s.proc]
    for n in counts:
        while len(opened) < n:
            batch = [
                open_idle(servers[(len(opened) + i) % len(servers)].port, code)
                for i in range(min(200, n - len(opened)))
            ]
            opened += await asyncio.gather(*batch)
        await asyncio.sleep(1)  # let the servers settle (their handshakes' garbage)
        now = [rss(s.proc.pid) for s in servers if s.proc]
        grown = sum(now) - sum(base)
        print(
            f"  {n:5d} connections: servers' RSS {' + '.join(f'{r / 2**20:.1f}' for r in now)} MiB, "
            f"{grown / n / 1024:.1f} KiB a connection"
        )
    await asyncio.gather(*(ws.close() for ws in opened))
    if creator is not None:
        await creator.close()


async def run(counts: list[int], redis: bool, watch: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="idle-") as tmp:
        limits = ("--max-per-address", "100000", "--rate", "1000")
        print("embedded (SQLite), one process")
        server = ServerProcess("--data", f"{tmp}/data", *limits, open_files=20_000).start()
        try:
            await measure([server], counts, watch)
        finally:
            server.kill()
        if not redis:
            return
        print("Redis, two processes")
        r = RedisServer(Path(tmp))
        r.start()
        servers = [ServerProcess("--redis", r.url, *limits, open_files=20_000).start() for _ in range(2)]
        try:
            await measure(servers, counts, watch)
        finally:
            for s in servers:
                s.kill()
            r.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--connections", type=int, nargs="+", default=[1000, 5000])
    ap.add_argument("--redis", action="store_true", help="also two processes on a Redis of their own")
    ap.add_argument("--watch", action="store_true", help="every connection watches one match")
    args = ap.parse_args()
    asyncio.run(run(sorted(args.connections), args.redis, args.watch))


if __name__ == "__main__":
    main()
