"""A spectator that stops reading stalls nobody and is closed once too far behind (real sockets)."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from race import MakeAppT, client, start_race
from websockets.asyncio.client import connect

from server import transport


async def test_a_stalled_spectator_is_dropped_while_the_others_keep_up(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small buffers everywhere, so a few dozen frames fill them: the socket's
    # (both ends), the transport's, and the outbox.
    monkeypatch.setattr(transport, "OUTBOX_LIMIT", 8)
    monkeypatch.setattr(transport, "WRITE_BUFFER_LIMIT", 1)
    app = await make_app()
    race = await start_race(app)
    # Seat 1 is done, so seat 0's boards go to spectators as they are made (no spectator lag).
    await race.players[1].request({"type": "finish"}, "finished", seat=1)

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", app.port))
    before = set(app.connections)
    stalled = await connect(f"ws://127.0.0.1:{app.port}/", sock=sock)
    await stalled.send(json.dumps({"type": "watch", "match": race.code}))
    assert json.loads(await stalled.recv())["type"] == "watching"
    (on_server,) = set(app.connections) - before
    on_server.ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    stalled.transport.pause_reading()

    watcher = await client(app)
    await watcher.request({"type": "watch", "match": race.code}, "watching")

    async def dropped() -> None:
        while on_server in app.connections and on_server._closer is None:
            ack = await race.move(0)
            await watcher.seen(
                "board", ev=ack["ev"]
            )  # the others never wait on it (a wait would be for good)

    await asyncio.wait_for(dropped(), 30)
    assert race.views[0]["moves"] < 60  # dropped after a few dozen frames, not at the game's end
    stalled.transport.abort()
