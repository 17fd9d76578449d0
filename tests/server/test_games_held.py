"""Started games a client can make the server hold (adversarial audit): counted, not timed.

A started game holds about 20 KB, and was kept a minute and more after its
player went to another: the grace period to come back, then the minute a
decided match stays loaded. A connection creating and readying practice games
at its frame rate held some 1,800 of them (36 MB).
"""

from __future__ import annotations

import asyncio

from race import MakeAppT, client, start_race
from wsclient import Msg, WsClient

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


async def test_connections_creating_and_joining_races_hold_at_most_their_quota(make_app: MakeAppT) -> None:
    """A lobby its creator replaced stays held while someone sits in it: each create and join held one."""
    app = await make_app(games_per_player=3)
    ann, bob = await client(app), await client(app)
    made = 0
    for _ in range(8):
        await ann.send({"type": "create"})
        answer = await first_of(ann, "created", "error")
        if answer["type"] == "error":
            assert answer["code"] == "not_allowed" and "3 games going" in answer["message"]
            continue
        made += 1
        await bob.request({"type": "join", "match": answer["match"]}, "joined")
    assert made == 3 and held(app) == 3
    refused = await bob.request({"type": "create"}, "error")  # Bob sits in all three
    assert refused["code"] == "not_allowed"
    await ann.close()
    await bob.close()
    async with asyncio.timeout(5):
        while any(lm.seats for lm in app.hub.live.values()):
            await asyncio.sleep(0)  # a yield to the loop, not a wait for time
    app.hub.sweep()  # lobbies called off, nobody in them: let go of (they were held half an hour)
    assert held(app) == 1  # the last one, still open
    again = await client(app)
    await again.request({"type": "create"}, "created")


async def test_an_address_keeps_a_limited_number_of_lobbies_open_whatever_identities_it_makes(
    make_app: MakeAppT,
) -> None:
    """One open lobby per creator, but a ``hello`` makes a new creator: the rule holds per address too."""
    app = await make_app(lobbies_per_address=3, proxies=("127.0.0.1/32",))
    c = await client(app, additional_headers={"X-Real-IP": "203.0.113.5"})
    welcomes = []
    for _ in range(3):  # a new identity each time: each is a creator with one open lobby
        welcomes.append(await c.request({"type": "hello"}, "welcome"))
        await c.request({"type": "create"}, "created")
    await c.request({"type": "hello"}, "welcome")
    refused = await c.request({"type": "create"}, "error")
    assert refused["code"] == "not_allowed" and "lobbies are open from your address" in refused["message"]
    assert open_lobbies(app) == 3
    # A creator's "New race" replaces their own lobby: allowed at the cap.
    last = welcomes[-1]
    await c.request({"type": "hello", "player": last["player"], "key": last["key"]}, "welcome")
    await c.request({"type": "create"}, "created")
    await c.request({"type": "ratings"}, "ratings")  # a connection's messages run in turn: the create is done
    assert open_lobbies(app) == 3
    other = await client(app, additional_headers={"X-Real-IP": "203.0.113.6"})  # another address
    await other.request({"type": "create"}, "created")


def open_lobbies(app: App) -> int:
    return sum(lm.match.status == "lobby" and lm.match.called_off is None for lm in app.hub.live.values())


async def first_of(c: WsClient, *kinds: str) -> Msg:
    """The next message of one of ``kinds``, skipping others."""
    async with asyncio.timeout(10):
        while True:
            msg = await c.recv(10)
            if msg["type"] in kinds:
                return msg


async def test_playing_practice_game_after_game_with_rematch_holds_one(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """ "Play again" (a rematch) opened game after game, each decided one held a minute after it."""
    app = await make_app(**backend)
    c = await client(app)
    created = await c.request({"type": "create", "seats": 1}, "created")
    code, token = created["match"], created["token"]
    codes = [code]
    for _ in range(10):
        await c.request({"type": "ready"}, "start")
        await c.request({"type": "finish"}, "result")
        code = (await c.request({"type": "rematch"}, "rematched"))["match"]
        await c.request({"type": "resume", "match": code, "token": token}, "resumed")
        codes.append(code)
    assert list(app.hub.live) == [code]  # the one being played: the decided ones were let go of
    back = await c.request({"type": "resume", "match": codes[0], "token": token}, "resumed")
    assert back["result"] is not None  # read back from the store


async def test_a_rematch_is_refused_past_the_quota_of_matches_going(make_app: MakeAppT) -> None:
    """A rematch opens a match, as a create does: held to the same quota (decided ones do not count)."""
    app = await make_app(games_per_player=2)
    race = await start_race(app)
    ann, bob = race.players
    me = await ann.request({"type": "hello"}, "welcome")
    await race.finish_both()
    tab = await client(app)  # Ann's other tab, the same identity: a lobby going
    await tab.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
    await tab.request({"type": "create"}, "created")
    await ann.send({"type": "rematch"})
    code = (await bob.request({"type": "rematch"}, "rematched"))["match"]
    await ann.request({"type": "resume", "match": code, "token": race.tokens[0]}, "resumed")
    other = await client(app)
    lobby = (await other.request({"type": "create"}, "created"))["match"]
    refused = await tab.request({"type": "join", "match": lobby}, "error")  # the lobby and the rematch
    assert refused["code"] == "not_allowed" and "2 games going" in refused["message"]


async def test_a_race_watched_on_another_process_is_let_go_of_there_once_its_watchers_went(
    make_app: MakeAppT, shared_url: str
) -> None:
    """Each watch of a race played elsewhere made this process follow its every move to the end: the
    sweep lets go of those nobody here watches any more."""
    shared = {"store_url": shared_url, "bus_url": shared_url}
    racing, watching = await make_app(**shared), await make_app(**shared)
    races = [await start_race(racing) for _ in range(3)]
    spectator = await client(watching)
    for race in races:  # one after the other, as a connection watching race after race does
        await spectator.request({"type": "watch", "match": race.code}, "watching")
    held = watching.hub.live[races[-1].code]
    assert sorted(watching.hub.live) == sorted(r.code for r in races)  # watched by turns: kept a while
    watching.hub.sweep()
    assert list(watching.hub.live) == [races[-1].code]  # the one still watched
    await spectator.close()
    async with asyncio.timeout(5):
        while held.spectators:
            await asyncio.sleep(0)  # a yield to the loop, not a wait for time
    watching.hub.sweep()
    assert not watching.hub.live and racing.hub.sweep() == [] and len(racing.hub.live) == 3
    await races[0].move(0)  # the race goes on where it is played
    late = await client(watching)
    assert (await late.request({"type": "watch", "match": races[0].code}, "watching"))["ev"] > 0


async def test_a_rematch_past_the_quota_is_refused(make_app: MakeAppT) -> None:
    app = await make_app(games_per_player=1)
    race = await start_race(app)
    ann = race.players[0]
    me = await ann.request({"type": "hello"}, "welcome")
    await race.finish_both()
    tab = await client(app)  # Ann's other tab: a lobby going
    await tab.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
    await tab.request({"type": "create"}, "created")
    refused = await ann.request({"type": "rematch"}, "error")
    assert refused["code"] == "not_allowed" and "1 games going" in refused["message"]
