"""Racing through real server processes: seat two players, play, check what everyone saw."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

from tests.processes import ServerProcess
from tests.server.wsclient import TIMEOUT, WsClient


@contextlib.contextmanager
def running_servers(url: str, n: int, *args: str) -> Iterator[list[ServerProcess]]:
    """n ``python -m server --redis url`` processes, killed (-9) on the way out."""
    procs: list[ServerProcess] = []
    try:
        for _ in range(n):
            procs.append(ServerProcess("--redis", url, "--rate", "1000", *args).start())
        yield procs
    finally:
        for proc in procs:
            proc.kill()


async def seat_two(
    url_a: str, url_b: str, seed: str = "1"
) -> tuple[WsClient, WsClient, dict[str, Any], dict[str, Any]]:
    a, b = await WsClient.connect(url_a), await WsClient.connect(url_b)
    await a.send({"type": "create", "seed": seed, "name": "Ann"})
    created = await a.expect("created")
    await b.send({"type": "join", "match": created["match"], "name": "Bob"})
    joined = await b.expect("joined")
    return a, b, created, joined


async def start(a: WsClient, b: WsClient) -> tuple[dict[str, Any], dict[str, Any]]:
    await a.send({"type": "ready"})
    await b.send({"type": "ready"})
    return await a.expect("start", timeout=15), await b.expect("start", timeout=15)


async def play_turns(c: WsClient, first_seq: int, n: int) -> list[dict[str, Any]]:
    """Send n turns (T) with consecutive seqs; return their acks."""
    acks = []
    for seq in range(first_seq, first_seq + n):
        await c.send({"type": "move", "seq": seq, "move": "T"})
        ack = await reply(c)
        assert ack["type"] == "ack", ack
        acks.append(ack)
    return acks


async def reply(c: WsClient, timeout: float = TIMEOUT) -> dict[str, Any]:
    """The answer to a move: its ack or its rejection."""
    while True:
        m = await c.recv(timeout)
        if m["type"] in ("ack", "rejected"):
            return m


def assert_consecutive(client: WsClient) -> None:
    """Every match event reached this party once, in order: ev goes up by one.

    One event may render as more than one message (a countdown also updates
    the lobby; a racer's draw shows spectators the other's boards held back
    for it, one each), so messages share an ev but never repeat one.
    """
    seen = [
        (m["ev"], m["type"], m.get("seat"), m["view"]["moves"] if m["type"] == "board" else None)
        for m in client.received
        if "ev" in m and m["type"] not in ("watching", "resumed")
    ]
    evs = [ev for ev, *_ in seen]
    assert evs == sorted(evs) and len(set(seen)) == len(seen), seen
    assert sorted(set(evs)) == list(range(evs[0], evs[-1] + 1)), repr(seen)


#: How long a request to a server process may take to be answered. Its ``/healthz`` asks the
#: store (half a second at most), but on a busy machine the answer can wait longer than that.
ANSWER_S = 15


def healthz(proc: ServerProcess) -> tuple[int, dict[str, Any]]:
    """``/healthz``'s status and JSON; anything else it answers (an error page) fails the test, saying what."""
    try:
        with urllib.request.urlopen(f"{proc.http}/healthz", timeout=ANSWER_S) as response:
            status, body = int(response.status), response.read()
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    try:
        return status, json.loads(body)
    except ValueError:
        raise AssertionError(f"/healthz answered {status} {body[:300]!r}") from None


def fully_degraded(proc: ServerProcess) -> bool:
    """Both the store and the pub/sub connection have noticed Redis is gone."""
    return healthz(proc) == (503, {"status": "degraded", "bus": False, "store": False})


def healthy(proc: ServerProcess) -> bool:
    return healthz(proc)[0] == 200


async def wait_for(condition: Any, timeout: float = 15) -> None:
    async with asyncio.timeout(timeout):
        while not await asyncio.to_thread(condition):
            await asyncio.sleep(0.05)


async def play_through(c: WsClient, first_seq: int, n: int, timeout: float = 30) -> list[dict[str, Any]]:
    """Send n turns with consecutive seqs, each sent again while it is refused as ``unavailable``.

    What a client does while Redis fails over: a move not confirmed is sent
    again with the same seq, which counts once. An answer to an earlier seq
    (a move that was refused, then landed after all, is acked when its
    writer finds it in the log) is passed over. Returns one ack per seq.
    """
    acks = []
    async with asyncio.timeout(timeout):
        for seq in range(first_seq, first_seq + n):
            while True:
                await c.send({"type": "move", "seq": seq, "move": "T"})
                answer = await reply(c, timeout)  # a failover may hold it a few seconds
                while answer["seq"] < seq:
                    answer = await reply(c, timeout)
                if answer["type"] == "ack":
                    break
                assert answer["code"] == "unavailable", answer
                await asyncio.sleep(0.05)  # the pause of a client's retry, not a wait for a condition
            assert answer["seq"] == seq, answer
            acks.append(answer)
    return acks
