"""A decided match's replay is built once and served as kept; ``/api/`` has a quota per address (issue 19).

A long game's replay is a megabyte that took the engine tens of milliseconds
to build, for every request: four clients asking seven times a second held
a bystander's moves up by a third of a second. These tests count the work
instead of timing it (``bench/abuse.py`` times it).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from counting import count_calls
from race import MakeAppT, start_race

import server.replay
from server.app import App

Backend = dict[str, str]


async def get(app: App, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any, bytes]:
    def fetch() -> tuple[int, Any, bytes]:
        request = urllib.request.Request(f"http://127.0.0.1:{app.port}{path}", headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=5) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers, exc.read()

    return await asyncio.to_thread(fetch)


async def test_a_decided_matchs_replay_is_built_once_then_served_as_kept(
    make_app: MakeAppT, backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = count_calls(monkeypatch, server.replay, "seat_plays")
    app = await make_app(**backend)
    race = await start_race(app)
    a, b = race.players
    await race.move(0)
    for c in (a, b):
        await c.send({"type": "finish"})
    await a.expect("result")
    async with asyncio.timeout(5):  # kept where it was decided
        while await app.store.replay(race.code) is None:
            await asyncio.sleep(0.01)
    assert built[0] == 2  # once for each seat
    bodies = {(await get(app, f"/api/replay/{race.code}"))[2] for _ in range(3)}
    assert len(bodies) == 1 and json.loads(body := bodies.pop())["match"] == race.code
    status, headers, packed = await get(app, f"/api/replay/{race.code}", {"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Encoding"] == "gzip" and gzip.decompress(packed) == body  # served as kept
    replay = await a.request({"type": "replay", "match": race.code}, "replay")
    assert [len(s["moves"]) for s in replay["seats"]] == [1, 0]
    assert built[0] == 2  # no request built it again, nor replayed the logs to check them


async def test_a_replay_not_kept_is_built_on_the_first_request_and_kept(
    make_app: MakeAppT, backend: Backend
) -> None:
    """A match decided before replays were kept (or whose keeping failed)."""
    app = await make_app(**backend)
    app.hub.followers = [f for f in app.hub.followers if not isinstance(f, server.replay.Replays)]
    race = await start_race(app)
    for c in race.players:
        await c.send({"type": "finish"})
    await race.players[0].expect("result")
    assert await app.store.replay(race.code) is None
    status, _, body = await get(app, f"/api/replay/{race.code}")
    kept = await app.store.replay(race.code)
    assert status == 200 and kept is not None and gzip.decompress(kept[1]) == body


async def test_a_replay_kept_in_an_earlier_format_is_built_again_and_kept(
    make_app: MakeAppT, backend: Backend
) -> None:
    """A replay kept by a version that sent a whole board per step (``steps``/``view``): the page
    of this version reads moves (``plays``), so it gets those, and the store keeps them from then."""
    app = await make_app(**backend)
    race = await start_race(app)
    await race.move(0)
    for c in race.players:
        await c.send({"type": "finish"})
    await race.players[0].expect("result")
    async with asyncio.timeout(5):
        while await app.store.replay(race.code) is None:
            await asyncio.sleep(0.01)
    old = {
        "match": race.code,
        "variant": "classic",
        "seed": "12345",
        "seats": [{"seat": 0, "steps": [{"move": None, "auto": [], "view": {"grid": {}}}]}],
    }
    await app.store.save_replay(race.code, None, gzip.compress(json.dumps(old).encode()))
    status, _, body = await get(app, f"/api/replay/{race.code}")
    replay = json.loads(body)
    assert status == 200 and replay["format"] == server.replay.FORMAT
    assert [len(s["plays"]) for s in replay["seats"]] == [1, 0] and "steps" not in replay["seats"][0]
    kept = await app.store.replay(race.code)
    assert kept is not None and gzip.decompress(kept[1]) == body


async def test_api_requests_past_an_address_quota_get_429_with_retry_after(make_app: MakeAppT) -> None:
    app = await make_app(api_rate_per_s=0.01, api_burst=3)
    for _ in range(3):
        assert (await get(app, "/api/variants"))[0] == 200
    status, headers, body = await get(app, "/api/replay/ACDEFGHJ")
    assert status == 429 and json.loads(body)["error"] == "rate_limited"
    assert 1 <= int(headers["Retry-After"]) <= 100
    assert (await get(app, "/healthz"))[0] == 200  # the page and the probes are not the API


async def test_behind_a_proxy_the_quota_is_each_clients_address(make_app: MakeAppT) -> None:
    app = await make_app(api_rate_per_s=0.01, api_burst=1, proxies=("127.0.0.1/32",))
    assert (await get(app, "/api/variants", {"X-Real-IP": "192.0.2.1"}))[0] == 200
    assert (await get(app, "/api/variants", {"X-Real-IP": "192.0.2.1"}))[0] == 429
    assert (await get(app, "/api/variants", {"X-Real-IP": "192.0.2.2"}))[0] == 200
