"""A bare websockets relay with the race server's message sizes: the baseline of bench/load.py.

It does what the race server does per move minus all the work: no parsing
beyond finding a few fields, no validation, no store. A client first sends
``{"type":"echo_join","group":G,"role":"p0"|"p1"|"spec"}``; then for each
``move`` frame from a player the relay sends an ack-sized frame back, a
progress-sized frame to the other player of the group and a board-sized
frame to each spectator of the group, with the fields the load generator
reads (``seq``, ``seat``, ``moves``) and padding up to the given sizes.

    python bench/echo_server.py --port 0 --ack 1400 --progress 120 --board 1500
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

SEQ = re.compile(r'"seq":\s*(\d+)')


def frame(fields: str, size: int) -> str:
    """``{fields,"pad":"..."}`` padded to ``size`` characters (at least the fields)."""
    head = "{" + fields + ',"pad":"'
    return head + "x" * max(0, size - len(head) - 2) + '"}'


class Relay:
    def __init__(self, ack: int, progress: int, board: int) -> None:
        self.sizes = ack, progress, board
        self.groups: dict[Any, dict[str, Any]] = {}

    async def handle(self, ws: ServerConnection) -> None:
        first = json.loads(await ws.recv())
        group = self.groups.setdefault(
            first["group"], {"p0": None, "p1": None, "spec": set(), "moves": [0, 0]}
        )
        role = first["role"]
        if role == "spec":
            group["spec"].add(ws)
        else:
            group[role] = ws
        seat = 0 if role == "p0" else 1
        ack_n, prog_n, board_n = self.sizes
        await ws.send(frame('"type":"echo_joined"', 0))
        try:
            async for text in ws:
                m = SEQ.search(text) if isinstance(text, str) else None
                if m is None:
                    continue
                group["moves"][seat] += 1
                moves = group["moves"][seat]
                await ws.send(frame(f'"type":"ack","seq":{m.group(1)}', ack_n))
                other = group["p1" if seat == 0 else "p0"]
                progress = f'"type":"progress","seat":{seat},"moves":{moves}'
                if other is not None:
                    await other.send(frame(progress, prog_n))
                board = frame(f'"type":"board","seat":{seat},"moves":{moves}', board_n)
                for spec in group["spec"]:
                    await spec.send(board)
        except ConnectionClosed:
            pass
        finally:
            group["spec"].discard(ws)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--ack", type=int, default=1400)
    ap.add_argument("--progress", type=int, default=120)
    ap.add_argument("--board", type=int, default=1500)
    args = ap.parse_args()
    relay = Relay(args.ack, args.progress, args.board)
    async with serve(relay.handle, "127.0.0.1", args.port, max_size=2**16, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        print(f"echo listening on http://127.0.0.1:{port}/", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
