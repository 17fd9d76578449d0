"""One open lobby per creator: a new lobby calls off the one its creator made before."""

from __future__ import annotations

from race import MakeAppT, client, lobby_pair, start_race

from server.app import App
from server.store.redis import CALLED_OFF_TTL_S, RedisStore, match_keys


def open_lobbies(app: App) -> list[str]:
    return [
        mid for mid, lm in app.hub.live.items() if lm.match.status == "lobby" and lm.match.called_off is None
    ]


async def test_a_connection_making_lobbies_keeps_one_open_and_none_in_memory(make_app: MakeAppT) -> None:
    app = await make_app()
    c = await client(app)
    codes = [(await c.request({"type": "create"}, "created"))["match"] for _ in range(50)]
    await c.request(
        {"type": "hello"}, "welcome"
    )  # a connection's messages run in turn: the last create is done
    assert open_lobbies(app) == [codes[-1]]
    assert list(app.hub.live) == [codes[-1]]  # the others were let go of, nobody being in them
    late = await client(app)
    refused = await late.request({"type": "join", "match": codes[0]}, "error")  # read back from the store
    assert refused["code"] == "not_found" and "called off" in refused["message"]


async def test_whoever_joined_the_earlier_lobby_is_told_it_is_called_off(make_app: MakeAppT) -> None:
    app = await make_app()
    race = await lobby_pair(app)
    ann, bob = race.players
    second = (await ann.request({"type": "create"}, "created"))["match"]
    assert (await bob.expect("lobby", called_off=True))["match"] == race.code
    assert (await bob.request({"type": "ready"}, "error"))["code"] == "wrong_phase"
    assert open_lobbies(app) == [second]
    assert race.code in app.hub.live  # Bob still sits in it


async def test_the_creator_is_their_identity_on_any_connection(make_app: MakeAppT) -> None:
    app = await make_app()
    tab1, tab2 = await client(app), await client(app)
    me = await tab1.request({"type": "hello", "name": "Ann"}, "welcome")
    await tab2.request({"type": "hello", "player": me["player"], "key": me["key"]}, "welcome")
    first = (await tab1.request({"type": "create"}, "created"))["match"]
    second = (await tab2.request({"type": "create"}, "created"))["match"]
    assert (await tab1.expect("lobby", called_off=True))["match"] == first
    assert open_lobbies(app) == [second]
    other = await client(app)  # somebody else's lobby is not theirs to close
    third = (await other.request({"type": "create"}, "created"))["match"]
    await other.request({"type": "hello"}, "welcome")
    assert sorted(open_lobbies(app)) == sorted([second, third])


async def test_a_started_race_is_not_called_off(make_app: MakeAppT) -> None:
    app = await make_app()
    race = await start_race(app)
    ann = race.players[0]
    await ann.request({"type": "create"}, "created")
    await ann.request({"type": "hello"}, "welcome")
    assert app.hub.live[race.code].match.status == "playing"  # Bob plays on; Ann may resume
    assert app.hub.live[race.code].match.called_off is None


async def test_a_lobby_called_off_leaves_redis_within_the_hour(make_app: MakeAppT, redis_url: str) -> None:
    """Its keys stayed the undecided day: 4.7 KB of Redis memory for each lobby of a creator making
    lobby after lobby, each called off by the next (docs/benchmarks.md)."""
    app = await make_app(store_url=redis_url, bus_url=redis_url)
    c = await client(app)
    first = (await c.request({"type": "create"}, "created"))["match"]
    second = (await c.request({"type": "create"}, "created"))["match"]
    await c.request({"type": "hello"}, "welcome")  # messages run in turn: both creates are done
    store = app.store
    assert isinstance(store, RedisStore)

    async def ttls(code: str) -> list[int]:
        events, meta = match_keys(code)[:2]
        return [await store._redis.ttl(events), await store._redis.ttl(meta)]

    assert all(0 < ttl <= CALLED_OFF_TTL_S for ttl in await ttls(first))
    assert all(ttl > CALLED_OFF_TTL_S for ttl in await ttls(second))  # open: the undecided day
    refused = await (await client(app)).request({"type": "join", "match": first}, "error")
    assert refused["code"] == "not_found" and "called off" in refused["message"]  # still read back
