"""Started games a client can make the server hold (adversarial audit): counted, not timed.

A started game holds about 20 KB, and was kept a minute and more after its
player went to another: the grace period to come back, then the minute a
decided match stays loaded. A connection creating and readying practice games
at its frame rate held some 1,800 of them (36 MB).
"""

from __future__ import annotations

from race import MakeAppT, client

from server.app import App


def held(app: App) -> int:
    """Matches loaded in this process."""
    return len(app.hub.live)


async def test_a_new_practice_game_ends_the_one_its_creator_left_and_lets_go_of_it(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    app = await make_app(**backend)
    c = await client(app)
    tokens: list[tuple[str, str]] = []
    for _ in range(25):  # 50 frames: within a connection's burst
        created = await c.request({"type": "create", "seats": 1}, "created")
        tokens.append((created["match"], created["token"]))
        await c.request({"type": "ready"}, "start")
    assert held(app) == 1  # the one being played
    first, token = tokens[0]
    assert app.hub.live[tokens[-1][0]].match.status == "playing"
    # The game left is ended as it stood and stored: resume and replay still find it.
    other = await client(app)
    back = await other.request({"type": "resume", "match": first, "token": token}, "resumed")
    assert back["result"]["seats"][0]["reason"] == "finish"
    assert (await other.request({"type": "replay", "match": first}, "replay"))["match"] == first
