"""HTTP on the WebSocket port, expiry of idle matches, clean shutdown."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
import urllib.error
import urllib.request
from pathlib import Path

from race import MakeAppT, client, drained, kick, start_race
from wsclient import WsClient

from server.app import App
from server.engine import VARIANTS
from server.hub import FINISHED_TTL_MS, LOBBY_TTL_MS, UNLOAD_DECIDED_AFTER_MS
from server.settings import WEB_ROOT

ROOT = Path(__file__).resolve().parents[2]


async def get(app: App, path: str) -> tuple[int, str, bytes]:
    def fetch() -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{app.port}{path}", timeout=5) as r:
                return r.status, r.headers["Content-Type"], r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers["Content-Type"], exc.read()

    return await asyncio.to_thread(fetch)


async def test_healthz(make_app: MakeAppT) -> None:
    app = await make_app()
    status, kind, body = await get(app, "/healthz")
    assert status == 200 and kind.startswith("application/json")
    assert json.loads(body) == {"status": "ok", "bus": True, "store": True}


async def test_healthz_is_degraded_when_the_store_cannot_write(make_app: MakeAppT) -> None:
    """A full disk still answers reads: only a write tells that moves are being refused."""
    app = await make_app()
    app.store._db.execute("PRAGMA query_only = 1")  # type: ignore[attr-defined]  # SQLite refuses writes
    status, _, body = await get(app, "/healthz")
    assert status == 503 and json.loads(body)["store"] is False
    app.store._db.execute("PRAGMA query_only = 0")  # type: ignore[attr-defined]
    assert (await get(app, "/healthz"))[0] == 200


async def test_metrics(make_app: MakeAppT) -> None:
    app = await make_app()
    race = await start_race(app)
    await race.move(0)
    await race.players[1].send("not json")
    await race.players[1].expect("error")
    status, kind, body = await get(app, "/metrics")
    assert status == 200 and kind.startswith("text/plain")
    text = body.decode()
    assert re.search(r"^grip_connections 2\.0$", text, re.M)
    assert re.search(r'^grip_matches\{status="playing"\} 1\.0$', text, re.M)
    assert re.search(r'^grip_matches\{status="lobby"\} 0\.0$', text, re.M)
    assert re.search(r"^grip_moves_total 1\.0$", text, re.M)
    assert re.search(r'^grip_rejects_total\{code="bad_json"\} 1\.0$', text, re.M)
    assert re.search(r"^grip_ack_latency_seconds_count 1\.0$", text, re.M)
    assert 'grip_ack_latency_seconds_bucket{le="0.01"}' in text


async def test_ack_latencies_fall_in_the_buckets_prometheus_counts_them_in(make_app: MakeAppT) -> None:
    """Counted in plain numbers at each move, the histogram reads as prometheus_client's did."""
    app = await make_app()
    for seconds in (0.001, 0.0011, 0.3, 2.0):  # a bound is in its own bucket; 2 s in none but +Inf
        app.metrics.moved(seconds)
    text = app.metrics.render().decode()
    counts = dict(re.findall(r'^grip_ack_latency_seconds_bucket\{le="([^"]+)"\} (\S+)$', text, re.M))
    assert counts == {
        "0.0005": "0.0",
        "0.001": "1.0",
        "0.002": "2.0",
        **{le: "2.0" for le in ("0.005", "0.01", "0.02", "0.05", "0.1", "0.25")},
        "1.0": "3.0",
        "+Inf": "4.0",
    }
    assert re.search(r"^grip_ack_latency_seconds_count 4\.0$", text, re.M)
    assert re.search(r"^grip_ack_latency_seconds_sum 2\.302", text, re.M)
    assert re.search(r"^grip_moves_total 4\.0$", text, re.M)


async def test_static_index(make_app: MakeAppT) -> None:
    app = await make_app()
    status, kind, body = await get(app, "/")
    assert status == 200 and kind.startswith("text/html")
    assert body == (WEB_ROOT / "index.html").read_bytes()
    status, _, _ = await get(app, "/../pyproject.toml")
    assert status == 404


async def test_the_pages_own_paths_get_the_page_and_others_404(make_app: MakeAppT) -> None:
    app = await make_app()
    index = (WEB_ROOT / "index.html").read_bytes()
    for path in (
        "/practice",
        "/rules/",
        "/daily",
        "/daily/2026-11-28",
        "/stats/abc_D-1",
        "/m/9YRGATDH",
        "/w/9YRGATDH",
        "/r/9YRGATDH",
    ):
        status, _, body = await get(app, path)
        assert (status, body) == (200, index), path
    # A path the page cannot show still gets the page (which says so, with a way home), as a 404;
    # a missing file is a plain 404.
    for path in ("/nonexistent", "/a/b/c", "/healthz/x", "/metricsx", "/m/not-a-code", "/w/ZZZZZ", "/r/"):
        status, kind, body = await get(app, path)
        assert (status, body) == (404, index), path
        assert kind.startswith("text/html")
    for path in ("/missing.js", "/js/nothing.js", "/m/ABC.png"):
        status, kind, body = await get(app, path)
        assert (status, body) == (404, b"not found\n"), path


async def test_the_variant_list_comes_from_the_engine(make_app: MakeAppT) -> None:
    app = await make_app()
    status, kind, body = await get(app, "/api/variants")
    assert status == 200 and kind.startswith("application/json")
    listed = {v["name"]: v for v in json.loads(body)["variants"]}
    assert list(listed) == list(VARIANTS)
    for name, variant in VARIANTS.items():
        assert listed[name]["cards"] == variant.cards == 4 * variant.spots
        assert (listed[name]["columns"], listed[name]["wastes"]) == (variant.columns, variant.wastes)
    assert listed["single-deck"]["cards"] == 48 and listed["classic"]["cards"] == 96


async def test_a_replay_tells_an_unknown_code_from_an_unfinished_race(make_app: MakeAppT) -> None:
    app = await make_app()
    race = await start_race(app)
    status, _, body = await get(app, f"/api/replay/{race.code}")
    assert (status, json.loads(body)["error"]) == (409, "wrong_phase")
    status, _, body = await get(app, "/api/replay/ACDEFGHJ")
    assert (status, json.loads(body)["error"]) == (404, "not_found")


async def test_sweep_drops_old_lobbies_and_finished_matches(make_app: MakeAppT) -> None:
    app = await make_app()
    c = await client(app)
    lobby_code = (await c.request({"type": "create"}, "created"))["match"]
    await c.close()
    race = await start_race(app)
    a, b = race.players
    await a.send({"type": "finish"})
    await b.send({"type": "finish"})
    await a.expect("result")
    finished = app.hub.live[race.code]
    assert app.hub.sweep() == []
    kick_clock = app.clock.advance  # type: ignore[attr-defined]
    kick_clock(FINISHED_TTL_MS + 1)
    assert app.hub.sweep() == [race.code]
    assert (await a.expect("error"))["code"] == "not_found"
    assert finished.timer is None or finished.timer.cancelled()
    kick_clock(LOBBY_TTL_MS - FINISHED_TTL_MS)
    assert app.hub.sweep() == [lobby_code]
    await drained(app)
    assert app.hub.live == {} and not app.hub._tasks
    # An expired match is gone for good, even though its log is kept.
    late = await client(app)
    assert (await late.request({"type": "watch", "match": race.code}, "error"))["code"] == "not_found"
    assert app.hub.live == {}
    assert await app.store.result(race.code) is not None


async def test_a_decided_match_idle_decided_leaves_memory_and_comes_back(make_app: MakeAppT) -> None:
    app = await make_app()
    race = await start_race(app)
    result = await race.finish_both()
    app.clock.advance(UNLOAD_DECIDED_AFTER_MS + 1)  # type: ignore[attr-defined]
    assert app.hub.sweep() == [] and race.code in app.hub.live  # its racers are still here
    await race.leave()
    assert app.hub.sweep() == []  # not expired: nobody is told anything
    assert race.code not in app.hub.live  # but no longer held in memory
    late = await client(app)
    watching = await late.request({"type": "watch", "match": race.code}, "watching")
    assert watching["result"] == result  # read back from the store, as it was
    assert [board["progress"]["leftover"] for board in watching["boards"]] == [
        seat["score"] for seat in result["seats"]
    ]
    assert race.code in app.hub.live
    app.clock.advance(UNLOAD_DECIDED_AFTER_MS + 1)  # type: ignore[attr-defined]
    assert app.hub.sweep() == [] and race.code in app.hub.live  # a spectator is here


async def test_a_match_in_play_is_not_swept(make_app: MakeAppT) -> None:
    app = await make_app()
    race = await start_race(app)
    app.clock.advance(LOBBY_TTL_MS * 2)  # type: ignore[attr-defined]
    assert app.hub.sweep() == []
    kick(app, race.code)  # now past the time limit: both time out
    result = await race.players[0].expect("result")
    assert [s["reason"] for s in result["seats"]] == ["timeout", "timeout"]


async def test_sigterm_tells_clients_and_exits_cleanly(tmp_path: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "--port", "0", "--data", str(tmp_path), "--log", "WARNING",
        stdout=asyncio.subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 10)).decode()
        found = re.search(r"listening on http://([\d.]+:\d+)/", line)
        assert found, line
        c = await WsClient.connect(f"ws://{found.group(1)}/")
        await c.request({"type": "create"}, "created")
        proc.send_signal(signal.SIGTERM)
        error = await c.expect("error")
        assert error["code"] == "unavailable"
        assert await c.closed() == 1001
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
