"""Every kind of bad input gets its typed error; the server keeps serving."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from race import MakeAppT, Race, client, start_race
from test_http_edges import UPGRADE
from websockets.exceptions import ConnectionClosed, InvalidStatus
from wsclient import TIMEOUT, Closed, WsClient

from server.app import App
from server.store.redis import RedisStore
from server.transport import FLOOD_CLOSE_S


@pytest.fixture
async def app(make_app: MakeAppT) -> App:
    return await make_app()


@pytest.fixture
async def race(app: App) -> Race:
    """A race in progress with one move each: it must survive every bad input."""
    race = await start_race(app)
    await race.move(0)
    await race.move(1)
    return race


async def still_serving(app: App, race: Race) -> None:
    """Earlier moves are all there, and both racers move on."""
    m = app.hub.live[race.code].match
    assert [m.seat(n).last_seq for n in (0, 1)] == [race.seqs[0] - 1, race.seqs[1] - 1]
    for seat in (0, 1):
        ack = await race.move(seat)
        assert ack["seq"] == race.seqs[seat] - 1


async def error_for(c: WsClient, frame: object) -> dict[str, object]:
    await c.send(frame)  # type: ignore[arg-type]
    return await c.expect("error")


async def test_non_json_text(app: App, race: Race) -> None:
    c = await client(app)
    assert (await error_for(c, "this is {not json"))["code"] == "bad_json"
    await still_serving(app, race)


@pytest.mark.parametrize(
    "frame",
    ["[" * 1000 + "]" * 1000, '{"type": "hello", "v": 1, "name": ' + "[" * 1900 + "]" * 1900 + "}"],
)
async def test_json_nested_deeper_than_the_parser_goes(app: App, race: Race, frame: str) -> None:
    """Under the 4 KiB limit but deeper than Python's stack: a typed error, and the seat stays."""
    a = race.players[0]
    assert (await error_for(a, frame))["code"] == "bad_json"
    await still_serving(app, race)


async def test_binary_frame(app: App, race: Race) -> None:
    c = await client(app)
    assert (await error_for(c, b'{"type": "hello"}'))["code"] == "bad_message"
    await still_serving(app, race)


async def test_frame_over_4_kib_closes_with_1009(app: App, race: Race) -> None:
    c = await client(app)
    await c.send({"type": "hello", "name": "x" * 5000})
    assert await c.closed() == 1009
    await still_serving(app, race)


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "move", "seq": "one", "move": "T"},
        {"type": "move", "seq": 0, "move": "T"},
        {"type": "move", "seq": 1, "move": 7},
        {"type": "move", "seq": "1", "move": "T"},  # a seq is a JSON integer
        # Every field is of its JSON type: these were taken as 1 seat, True, 600, deal 1 and v1.
        {"type": "create", "seats": True},
        {"type": "create", "private": "yes"},
        {"type": "create", "time_limit_s": "600"},
        {"type": "create", "deal": True},
        {"type": "hello", "v": True},
        {"type": "quick", "time_limit_s": 300.0},
        {"type": "live", "limit": 5.0},
        {"type": "join", "match": "not a code"},
        {"type": "create", "seats": 3},
        {"type": "ready", "extra": True},
        ["type", "hello"],
    ],
)
async def test_wrong_field_types(app: App, race: Race, frame: object) -> None:
    c = await client(app)
    assert (await error_for(c, frame))["code"] == "bad_message"
    await still_serving(app, race)


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        ({"type": "create", "seats": 1, "bot": "greedy"}, "second seat"),
        ({"type": "create", "seed": "5", "deal": 5}, "not both"),
        ({"type": "create", "daily": True, "deal": 5}, "its own deal"),
        ({"type": "create", "ranked": True}, "daily challenge only"),
    ],
)
async def test_create_fields_that_would_be_ignored(app: App, race: Race, frame: object, says: str) -> None:
    """A field the server could only drop (a solo game's bot, a seed beside a deal) is refused by name."""
    c = await client(app)
    error = await error_for(c, frame)
    assert error["code"] == "bad_message" and says in str(error["message"])
    assert str(error["message"]).startswith("create: ") and "create: create" not in str(error["message"])
    assert len(app.hub.live) == 1  # nothing was opened: only the race
    await still_serving(app, race)


async def test_unknown_type(app: App, race: Race) -> None:
    c = await client(app)
    assert (await error_for(c, {"type": "teleport"}))["code"] == "unknown_type"
    assert (await error_for(c, {"no": "type"}))["code"] == "unknown_type"
    await still_serving(app, race)


@pytest.mark.parametrize("kind", [["move"], {"move": 1}, 7, True])
async def test_a_type_that_is_not_text_is_unknown_and_the_seat_stays(
    app: App, race: Race, kind: object
) -> None:
    """A list or an object as ``type`` (unhashable) once closed the connection with 1011, seat and all."""
    a = race.players[0]
    assert (await error_for(a, {"type": kind, "seq": race.seqs[0], "move": "T"}))["code"] == "unknown_type"
    await still_serving(app, race)


async def test_move_before_the_start(app: App, race: Race) -> None:
    c = await client(app)
    created = await c.request({"type": "create"}, "created")
    rejected = await c.request({"type": "move", "seq": 1, "move": "T"}, "rejected")
    assert rejected["code"] == "wrong_phase" and rejected["seq"] == 1
    m = app.hub.live[created["match"]].match
    assert m.status == "lobby"
    nobody = await client(app)
    rejected = await nobody.request({"type": "move", "seq": 1, "move": "T"}, "rejected")
    assert rejected["code"] == "wrong_phase"
    await still_serving(app, race)


async def test_move_after_the_end(app: App, race: Race) -> None:
    other = await start_race(app)
    a, b = other.players
    first = await other.move(0)
    await a.send({"type": "finish"})
    await b.send({"type": "finish"})
    await a.expect("result")
    rejected = await a.request({"type": "move", "seq": 2, "move": "T"}, "rejected")
    assert rejected["code"] == "wrong_phase"
    again = await a.request({"type": "move", "seq": 1, "move": first["move"]}, "ack")  # a resend still acks
    assert again == first
    await still_serving(app, race)


async def test_resume_with_a_made_up_token(app: App, race: Race) -> None:
    c = await client(app)
    frame = {"type": "resume", "match": race.code, "token": "made-up-token-0123456789"}
    assert (await error_for(c, frame))["code"] == "bad_token"
    await still_serving(app, race)


@pytest.mark.parametrize("token", ["x", "", "not a token!"])
async def test_resume_with_text_that_is_no_token(app: App, race: Race, token: str) -> None:
    c = await client(app)
    frame = {"type": "resume", "match": race.code, "token": token}
    assert (await error_for(c, frame))["code"] == "bad_token"
    await still_serving(app, race)


async def test_resume_with_a_token_of_another_match(app: App, race: Race) -> None:
    other = await start_race(app)
    c = await client(app)
    for token in other.tokens:
        frame = {"type": "resume", "match": race.code, "token": token}
        assert (await error_for(c, frame))["code"] == "bad_token"
    await still_serving(app, race)


async def test_out_of_order_seq(app: App, race: Race) -> None:
    a = race.players[0]
    rejected = await a.request({"type": "move", "seq": race.seqs[0] + 1, "move": "T"}, "rejected")
    assert rejected["code"] == "out_of_order"
    assert rejected["view"] == race.views[0]  # the current view, to resync
    await still_serving(app, race)


async def test_an_applied_seq_sent_again_with_another_move_is_refused(app: App, race: Race) -> None:
    """It was answered with the first move's ack, as if the other had been played."""
    a = race.players[0]
    first = a.received[[m["type"] for m in a.received].index("ack")]  # seq 1's
    other = next(m for m in first["view"]["legal"] if m != first["move"])
    rejected = await a.request({"type": "move", "seq": 1, "move": other}, "rejected")
    assert rejected["code"] == "out_of_order" and first["move"] in rejected["message"]
    assert rejected["view"] == race.views[0]  # nothing changed: the current view, to resync from
    again = await a.request({"type": "move", "seq": 1, "move": first["move"].lower()}, "ack")  # its resend
    assert again == first
    await still_serving(app, race)


async def test_illegal_move(app: App, race: Race) -> None:
    a = race.players[0]
    rejected = await a.request({"type": "move", "seq": race.seqs[0], "move": "A1~A2"}, "rejected")
    assert rejected["code"] == "illegal" and rejected["view"] == race.views[0]
    await still_serving(app, race)


async def test_join_of_an_unknown_code(app: App, race: Race) -> None:
    c = await client(app)
    assert (await error_for(c, {"type": "join", "match": "CCCCCCCC"}))["code"] == "not_found"
    assert (await error_for(c, {"type": "watch", "match": "CCCCCCCC"}))["code"] == "not_found"
    await still_serving(app, race)


async def test_third_join_is_full(app: App, race: Race) -> None:
    c = await client(app)
    lobby = await client(app)
    code = (await lobby.request({"type": "create"}, "created"))["match"]
    await c.request({"type": "join", "match": code}, "joined")
    third = await client(app)
    assert (await error_for(third, {"type": "join", "match": code}))["code"] == "full"
    assert (await error_for(third, {"type": "join", "match": race.code}))["code"] in ("full", "wrong_phase")
    await still_serving(app, race)


async def test_flood_is_rate_limited_then_closed_only_when_it_persists(make_app: MakeAppT) -> None:
    app = await make_app(rate_per_s=0.001, burst=5, flood_limit=30)
    race = await start_race(app)  # uses 2 + 1 frames of each player's burst
    a = race.players[0]
    for _ in range(10):  # a short flood: refused, not closed
        await a.send({"type": "move", "seq": 1, "move": "T"})
    await a.expect("error", code="rate_limited")
    await (await a.ws.ping())  # still open
    codes = [m["code"] for m in a.received if m["type"] == "error"]
    assert set(codes) == {"rate_limited"}
    for _ in range(40):  # the flood goes on: closed with 1008
        await a.send({"type": "move", "seq": 1, "move": "T"})
    assert await a.closed() == 1008
    # Nothing Ann did is lost: she resumes on a new connection.
    a2 = await client(app)
    resumed = await a2.request({"type": "resume", "match": race.code, "token": race.tokens[0]}, "resumed")
    assert resumed["last_seq"] == app.hub.live[race.code].match.seat(0).last_seq
    assert resumed["view"]["moves"] == resumed["last_seq"]


async def test_a_ping_flood_is_closed_like_a_message_flood_and_the_others_play_on(
    make_app: MakeAppT,
) -> None:
    """websockets answers pings itself, each a pong written: they count against the frame rate all the same."""
    app = await make_app(rate_per_s=1.0, burst=20, flood_limit=30)
    race = await start_race(app)
    flooder = await client(app)
    await flooder.request({"type": "hello"}, "welcome")
    with contextlib.suppress(ConnectionClosed):
        for n in range(2000):  # not waiting for the pongs
            await flooder.ws.ping(str(n))
    assert await flooder.closed() == 1008
    assert flooder.ws.close_reason == "flooding"
    assert [(m["type"], m["code"]) for m in flooder.received[1:2]] == [("error", "rate_limited")]
    assert app.metrics.rejects.labels("rate_limited")._value.get() > 30
    await still_serving(app, race)


async def raw_socket(app: App) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A WebSocket opened by hand, for frames no client library sends."""
    reader, writer = await asyncio.open_connection("127.0.0.1", app.port)
    writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % app.port + UPGRADE + b"\r\n")
    async with asyncio.timeout(TIMEOUT):
        assert b" 101 " in await reader.readline()
        while await reader.readline() != b"\r\n":
            pass
    return reader, writer


async def test_a_flooder_that_never_answers_the_close_is_dropped_soon(make_app: MakeAppT) -> None:
    """websockets waits 10 s for the client's close, reading and answering every ping meanwhile: a
    flooder that ignores the 1008 had 10 s more of pongs. Now its socket goes FLOOD_CLOSE_S after."""
    app = await make_app(rate_per_s=1.0, burst=5, flood_limit=10)
    reader, writer = await raw_socket(app)

    async def flood() -> None:  # masked pings (mask 0), whatever comes back
        with contextlib.suppress(OSError):
            while True:
                writer.write(b"\x89\x80\x00\x00\x00\x00" * 20)
                await writer.drain()
                await asyncio.sleep(0)  # a yield, for the reads

    pinging = asyncio.create_task(flood())
    loop = asyncio.get_running_loop()
    close: bytes | None = None
    closed_at = gone_at = 0.0
    try:
        async with asyncio.timeout(TIMEOUT + FLOOD_CLOSE_S):
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while True:  # the server's frames: unmasked, short
                    head = await reader.readexactly(2)
                    body = await reader.readexactly(head[1] & 0x7F)
                    if head[0] == 0x88 and close is None:
                        close, closed_at = body, loop.time()
            gone_at = loop.time()
    finally:
        pinging.cancel()
        writer.close()
    assert close is not None and int.from_bytes(close[:2], "big") == 1008
    assert gone_at - closed_at < FLOOD_CLOSE_S + 3  # it was 10 s


def client_frame(opcode: int, payload: bytes, fin: bool) -> bytes:
    """A client's frame (RFC 6455, 5.2), masked with a zero key, so the payload goes as is."""
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    return head + (bytes([0x80 | n]) if n < 126 else b"\xfe" + n.to_bytes(2, "big")) + b"\0\0\0\0" + payload


async def server_frames(reader: asyncio.StreamReader) -> list[tuple[int, bytes]]:
    """The server's frames (opcode, payload) until it closes the socket."""
    frames = []
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while True:
            head = await reader.readexactly(2)
            n = head[1] & 0x7F
            if n == 126:
                n = int.from_bytes(await reader.readexactly(2), "big")
            elif n == 127:
                n = int.from_bytes(await reader.readexactly(8), "big")
            frames.append((head[0] & 0x0F, await reader.readexactly(n)))
    return frames


async def test_a_message_in_thousands_of_fragments_is_a_flood(make_app: MakeAppT) -> None:
    """websockets joins a message's fragments, at about 3 us each: they count against the frame rate, so
    a request cut into one-byte fragments is closed as a flood before it is ever answered."""
    app = await make_app()
    race = await start_race(app)
    reader, writer = await raw_socket(app)
    message = b'{"type":"days","limit":60' + b" " * 3000 + b"}"
    wire = client_frame(1, message[:1], False) + b"".join(
        client_frame(0, message[i : i + 1], i == len(message) - 1) for i in range(1, len(message))
    )
    with contextlib.suppress(OSError):
        for _ in range(5):
            writer.write(wire)
        await writer.drain()
    async with asyncio.timeout(TIMEOUT + FLOOD_CLOSE_S):
        frames = await server_frames(reader)
    writer.close()
    closes = [payload for opcode, payload in frames if opcode == 0x8]
    assert closes and int.from_bytes(closes[0][:2], "big") == 1008
    assert not [payload for opcode, payload in frames if b'"days"' in payload]  # never answered
    await still_serving(app, race)


async def test_a_message_in_a_few_fragments_is_answered(app: App) -> None:
    """A client may fragment a message (RFC 6455 allows it): a few fragments are well inside the burst."""
    c = await client(app)
    await c.ws.send(iter(['{"type":', '"hello"', "}"]))
    await c.expect("welcome")


async def test_keepalive_pings_are_answered_and_pongs_never_counted(make_app: MakeAppT) -> None:
    """The server's own pings' pongs cost the client nothing; a client's ping past its rate still gets its pong."""
    app = await make_app(rate_per_s=0.001, burst=3, flood_limit=10)
    c = await client(app)
    await c.request({"type": "hello"}, "welcome")
    [conn] = app.connections
    for _ in range(50):  # the server's keepalive, many times over: 50 pongs read
        await asyncio.wait_for(await conn.ws.ping(), TIMEOUT)
    refused = app.metrics.rejects.labels("rate_limited")
    assert refused._value.get() == 0
    for _ in range(2):
        await c.send({"type": "hello"})
    await c.expect("welcome")
    await c.expect("welcome")  # its burst spent: what follows is refused
    await asyncio.wait_for(await c.ws.ping(), TIMEOUT)  # refused, counted, and answered all the same
    assert refused._value.get() == 1
    assert (await c.expect("error"))["code"] == "rate_limited"  # told, as a message past the rate is
    assert conn.flood_close is None


async def test_origin_allowlist(make_app: MakeAppT) -> None:
    app = await make_app(origins=("https://grip.example",))
    url = f"ws://127.0.0.1:{app.port}/"
    with pytest.raises(InvalidStatus) as exc:
        await WsClient.connect(url, origin="https://evil.example")
    assert exc.value.response.status_code == 403
    ok = await WsClient.connect(url, origin="https://grip.example")
    await ok.request({"type": "hello", "name": "Ann"}, "welcome")
    no_origin = await WsClient.connect(url)  # not a browser
    await no_origin.request({"type": "hello"}, "welcome")


async def test_same_origin_only_by_default(app: App) -> None:
    url = f"ws://127.0.0.1:{app.port}/"
    with pytest.raises(InvalidStatus) as exc:
        await WsClient.connect(url, origin="https://evil.example")
    assert exc.value.response.status_code == 403
    ok = await WsClient.connect(url, origin=f"http://127.0.0.1:{app.port}")
    await ok.request({"type": "hello"}, "welcome")


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("<b>Ann</b>", "bAnn/b"),
        ("Ann\u202egnirts", "Anngnirts"),  # a right-to-left override would show it reversed
        ("\u200b", "Player"),  # zero-width: a name that shows as nothing
        ("Bo\u00adb \u2066x\u2069", "Bob x"),  # soft hyphen, bidi isolates
        ("  Zoë  ", "Zoë"),
        ("\u3164\u3164", "Player"),  # Hangul fillers are letters that draw nothing
        ("\u115f\u1160\uffa0 \u2800", "Player"),  # the other fillers, the Braille blank
        ("\u0301" * 3 + "\ufe0f", "Player"),  # marks with no letter under them
        ("Ann\u3164", "Ann"),
        ("Z" + "\u0336" * 20 + "oe", "Z" + "\u0336" * 3 + "oe"),  # stacked marks: three a letter
        ("Nguy\u1ec5n", "Nguy\u1ec5n"),  # a letter with its marks is kept
    ],
)
async def test_names_lose_markup_and_invisible_characters(app: App, sent: str, shown: str) -> None:
    c = await client(app)
    assert (await c.request({"type": "hello", "name": sent}, "welcome"))["name"] == shown
    await c.send({"type": "create", "seed": "7", "name": sent})
    assert (await c.expect("lobby"))["seats"][0]["name"] == shown  # a name given with a seat too


async def test_a_chosen_seed_is_cleaned_like_a_name(app: App) -> None:
    """Others see a chosen seed (with the result): it may not be invisible, nor read backwards."""
    c = await client(app)
    for seed in ("\u3164", "\u200b\u0301"):
        refused = await c.request({"type": "create", "seed": seed}, "error")
        assert refused["code"] == "bad_message"
    await c.request({"type": "create", "seed": "12\u202e34\u3164", "seats": 1}, "created")
    await c.send({"type": "ready"})
    await c.expect("start")
    await c.send({"type": "finish"})
    assert (await c.expect("result"))["seed"] == "1234"


@pytest.mark.parametrize(
    "tamper",
    [
        "UPDATE events SET body = 'not json' WHERE match = ? AND ev = 2",
        "DELETE FROM events WHERE match = ? AND ev = 2",  # a gap
        # a move the engine refuses (the events between an opening and a decision are kept a match's
        # run of them to a row, their JSON joined: the first move of the run holding one)
        "UPDATE event_runs SET body = (SELECT substr(j, 2, length(j) - 2) FROM (SELECT json_set("
        "'[' || body || ']', '$[' || (SELECT key FROM json_each('[' || body || ']')"
        " WHERE json_extract(value, '$.kind') = 'moved' LIMIT 1) || '].move', 'A1:0>A1') AS j))"
        " WHERE match = ? AND body LIKE '%\"moved\"%'",
    ],
)
async def test_a_stored_log_that_does_not_replay_is_corrupt_not_try_again(
    app: App, race: Race, tamper: str
) -> None:
    app.hub.drop(race.code)  # read back from the store on the next use
    app.store._flush()  # type: ignore[attr-defined]  # the journaled events into the table, as its timer would
    assert app.store._db.execute(tamper, (race.code,)).rowcount == 1  # type: ignore[attr-defined]
    c = await client(app)
    assert (await c.request({"type": "watch", "match": race.code}, "error"))["code"] == "corrupt"


@pytest.mark.parametrize("player", ["x:results", "a b", "{tag}", "", "ü" * 3, "A" * 65])
@pytest.mark.parametrize("on", ["sqlite", "redis"])
async def test_a_player_id_of_another_form_is_refused_where_it_enters(
    make_app: MakeAppT, request: pytest.FixtureRequest, on: str, player: str
) -> None:
    """It would name other store keys (on Redis, ``x:results`` met a sorted set: WRONGTYPE)."""
    url = request.getfixturevalue("redis_url") if on == "redis" else None
    c = await client(await make_app(store_url=url, bus_url=url) if url else await make_app())
    for frame in (
        {"type": "hello", "player": player, "key": "k"},
        {"type": "stats", "player": player},
        {"type": "history", "player": player},
        {"type": "ratings", "player": player},
    ):
        assert (await error_for(c, frame))["code"] == "bad_message"
    await c.request({"type": "hello", "name": "Ann"}, "welcome")  # and the connection goes on


async def test_the_redis_store_takes_no_player_id_of_another_form(redis_url: str) -> None:
    store = await RedisStore.connect(redis_url)
    try:
        for call in (store.player("x:results"), store.totals("a}b{c"), store.player_results("x y")):
            with pytest.raises(ValueError, match="not a player id"):
                await call
    finally:
        await store.close()


async def test_a_flood_is_told_rate_limited_once_a_second_not_once_a_frame(make_app: MakeAppT) -> None:
    app = await make_app(rate_per_s=0.001, burst=5, flood_limit=10**6)
    a = await client(app)
    for _ in range(200):
        await a.send({"type": "hello"})
    refused = app.metrics.rejects.labels("rate_limited")
    async with asyncio.timeout(5):  # every frame read: each answer was written at the end of its turn
        while refused._value.get() < 195:
            await asyncio.sleep(0)  # a yield to the loop, not a wait for time
    await a.ws.close()
    with contextlib.suppress(Closed):
        while True:
            await a.recv()
    assert [m["type"] for m in a.received] == ["welcome"] * 5 + ["error"]
    assert a.received[-1]["code"] == "rate_limited"
