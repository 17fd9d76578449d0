"""A result acknowledged is a result kept: SIGKILL the server right after, restart, find it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from race import MakeAppT, start_race
from wsclient import WsClient

from server import daily
from server.protocol import now_ms
from tests.client.netkit import wait_until
from tests.processes import ServerProcess
from tests.store_events import disk_full


@pytest.fixture(params=["embedded", "redis", "cluster"])
def server_args(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    if request.param == "embedded":
        yield ["--data", str(tmp_path / "data")]
    else:
        yield ["--redis", request.getfixturevalue(f"{request.param}_url")]


async def test_result_and_leaderboard_survive_sigkill(server_args: list[str]) -> None:
    server = ServerProcess(*server_args).start()
    try:
        c = await WsClient.connect(server.url)
        me = await c.request({"type": "hello", "name": "Ann"}, "welcome")
        created = await c.request({"type": "create", "daily": True, "seats": 1}, "created")
        await c.send({"type": "ready"})
        await c.expect("start", timeout=10)
        await c.send({"type": "move", "seq": 1, "move": "T"})
        await c.expect("ack")
        await c.send({"type": "finish"})
        result = await c.expect("result")
        server.kill()  # SIGKILL, right after the result reached the player
        assert result["ranked"]

        server = ServerProcess(*server_args).start()
        c = await WsClient.connect(server.url)
        await c.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
        board = await c.request({"type": "leaderboard", "day": daily.day_of(now_ms())}, "leaderboard")
        assert board["you"]["match"] == created["match"]
        assert board["you"]["score"] == result["seats"][0]["score"]
        again = await c.request({"type": "create", "daily": True, "seats": 1, "ranked": True}, "error")
        assert again["code"] == "already_played"
        # an ordinary game's result is kept the same way, and its replay verifies
        solo = await c.request({"type": "create", "seats": 1, "seed": "7"}, "created")
        await c.send({"type": "ready"})
        await c.expect("start", timeout=10)
        await c.send({"type": "finish"})
        await c.expect("result")
        server.kill()
        server = ServerProcess(*server_args).start()
        c = await WsClient.connect(server.url)
        replay = await c.request({"type": "replay", "match": solo["match"]}, "replay")
        assert replay["seed"] == "7" and replay["seats"][0]["moves"] == []
    finally:
        server.kill()


async def test_every_move_acknowledged_before_a_sigkill_is_there_after_it(server_args: list[str]) -> None:
    """The ack promises the move is durable (SQLite: its journal, before any flush to the table)."""
    server = ServerProcess(*server_args).start()
    try:
        c = await WsClient.connect(server.url)
        created = await c.request({"type": "create", "seats": 1, "seed": "7"}, "created")
        await c.send({"type": "ready"})
        view = (await c.expect("start", timeout=10))["view"]
        played = []
        for seq in range(1, 13):
            move = next(m for m in view["legal"] if m != "T") if seq % 3 else "T"
            await c.send({"type": "move", "seq": seq, "move": move})
            view = (await c.expect("ack"))["view"]
            played.append(move)
        server.kill()  # SIGKILL, right after the last ack

        server = ServerProcess(*server_args).start()
        c = await WsClient.connect(server.url)
        resumed = await c.request(
            {"type": "resume", "match": created["match"], "token": created["token"], "last_ev": 0}, "resumed"
        )
        assert resumed["last_seq"] == 12
        assert resumed["view"]["grid"] == view["grid"] and resumed["view"]["moves"] == view["moves"]
    finally:
        server.kill()


async def test_after_a_sigkill_a_racer_who_never_comes_back_is_abandoned(server_args: list[str]) -> None:
    """The restarted server finds the race's seats 'connected' to the dead process: it lets go of them."""
    args = [*server_args, "--grace-s", "2"]
    server = ServerProcess(*args).start()
    try:
        ann, bob = await WsClient.connect(server.url), await WsClient.connect(server.url)
        created = await ann.request({"type": "create", "seed": "3"}, "created")
        await bob.request({"type": "join", "match": created["match"]}, "joined")
        for c in (ann, bob):
            await c.send({"type": "ready"})
        await ann.expect("start", timeout=10)
        await ann.request({"type": "move", "seq": 1, "move": "T"}, "ack")
        server.kill()
        server = ServerProcess(*args).start()
        ann = await WsClient.connect(server.url)
        resume = {"type": "resume", "match": created["match"], "token": created["token"], "last_ev": 0}
        assert (await ann.request(resume, "resumed"))["last_seq"] == 1
        ended = await ann.expect("finished", timeout=30, seat=1)  # Bob never resumed
        assert ended["reason"] == "abandoned"
    finally:
        server.kill()


def test_a_second_server_on_the_same_data_is_refused(tmp_path: Path) -> None:
    """Each would take the other's players for gone and abandon them: one server per data file."""
    first = ServerProcess("--data", str(tmp_path / "data")).start()
    try:
        second = ServerProcess("--data", str(tmp_path / "data"))
        data_file = re.escape(str((tmp_path / "data" / "grip.db").resolve()))
        with pytest.raises(RuntimeError, match=rf"another server is using {data_file}: stop it"):
            second.start()
        assert second.proc is not None and second.proc.wait(5) == 1
        first.terminate()
        ServerProcess("--data", str(tmp_path / "data")).start().terminate()  # free again once it stops
    finally:
        first.kill()


def test_a_port_in_use_is_said_in_a_line_not_a_traceback(tmp_path: Path) -> None:
    first = ServerProcess("--data", str(tmp_path / "first")).start()
    try:
        second = ServerProcess("--data", str(tmp_path / "second"), "--port", str(first.port))
        with pytest.raises(
            RuntimeError, match=r"cannot listen: .*address already in use; .*--port 0"
        ) as refused:
            second.start()
        assert "Traceback" not in str(refused.value)
        assert second.proc is not None and second.proc.wait(5) == 1
    finally:
        first.kill()


async def test_a_drop_the_store_could_not_take_is_recorded_once_it_can(make_app: MakeAppT) -> None:
    """Unrecorded, the seat would count as connected for good and never be abandoned."""
    app = await make_app()
    race = await start_race(app)
    match = app.hub.live[race.code].match
    with disk_full(app.store):
        await race.players[1].close()
        await wait_until(lambda: 1 not in app.hub.live[race.code].seats, what="the server lets go of it")
        assert match.seat(1).conn is not None  # not recorded: the store refused
    await wait_until(lambda: match.seat(1).conn is None, what="the drop recorded once the store takes it")
    assert match.seat(1).gone_since is not None  # so the grace period runs, then abandonment
