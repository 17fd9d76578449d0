"""A spectator that stops reading stalls nobody and is closed once too far behind (real sockets)."""

from __future__ import annotations

import asyncio
import json
import socket

import pytest
from race import MakeAppT, client, start_race
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from server import transport
from server.live import CLOSE_TRY_AGAIN


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


async def test_a_client_that_asks_and_never_reads_is_closed_once_its_answers_reach_the_byte_bound(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each `watch` is answered with a snapshot of both boards (kilobytes: 36 KB for a long game).
    # The outbox's 2,048 frames bounded what an unread connection held only at 2,048 snapshots,
    # and a burst of requests answered in one turn was written whole to the socket's buffer. Its
    # unsent bytes bound it now: here 64 KiB (1 MiB in production).
    monkeypatch.setattr(transport, "OUTBOX_BYTES", 64 * 1024)
    app = await make_app(rate_per_s=1000.0, burst=1000)
    race = await start_race(app)

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", app.port))
    before = set(app.connections)
    asker = await connect(f"ws://127.0.0.1:{app.port}/", sock=sock, max_size=None)
    await asker.send(json.dumps({"type": "watch", "match": race.code}))
    assert json.loads(await asker.recv())["type"] == "watching"
    (on_server,) = set(app.connections) - before
    on_server.ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    asker.transport.pause_reading()

    def unsent() -> int:
        return int(on_server.ws.transport.get_write_buffer_size()) + on_server._outbox_bytes

    asked = 0
    while on_server._closer is None and asked < 400:  # 400 snapshots: a fifth of OUTBOX_LIMIT
        await asker.send(json.dumps({"type": "watch", "match": race.code}))
        asked += 1
        assert unsent() <= transport.OUTBOX_BYTES
    async with asyncio.timeout(10):  # the last ones asked are answered, or the connection closed
        while on_server._closer is None:
            await asyncio.sleep(0.01)
    # Closed once its unsent answers reached the bound (64 KiB), not at 2,048 of them (5 MB).
    assert unsent() <= transport.OUTBOX_BYTES

    # Once it reads, it gets what was queued, then the close: come back (resume, watch) to catch up.
    asker.transport.resume_reading()
    with pytest.raises(ConnectionClosed):
        while True:
            await asyncio.wait_for(asker.recv(), 15)
    assert asker.close_code == CLOSE_TRY_AGAIN
    watcher = await client(app)
    await watcher.request({"type": "watch", "match": race.code}, "watching")
