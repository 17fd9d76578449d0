"""The fan-out plan sends every peer exactly what deciding at each event sends, as the audience changes mid-race.

Each scenario runs twice over real sockets, on servers alike but for the
fan-out: one with the plan (``FanOutPlan``, settled when a seat or spectator
comes or goes), one whose hub decides at each event, from everything
rendered for everyone, who is in each audience (the rules the plan settles
ahead of time). Every client's frames must be the same in both, once the
match's code, tokens and identities are named alike. Between moves, a v1 and
a v2 spectator come and go, and a racer drops and resumes; racers speak v1
and v2; with two processes sharing Redis, the racers sit in different ones.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from fakeclock import FakeClock
from matchsim import Sim, greedy_moves
from race import client, kick
from wsclient import Msg, WsClient

from server import protocol as p
from server.app import App
from server.engine import Game
from server.hub import Hub
from server.live import LiveMatch
from server.match import Event, Match, Present
from server.match.render import render
from server.match.state import COUNTDOWN_MS

SEED = "12345"
StartApp = Callable[..., Awaitable[App]]


def fan_out_per_event(hub: Hub, lm: LiveMatch, e: Event) -> None:
    """Who receives what, decided at the event from the peers here then: in an audience, speaking its version."""
    for audience, message in render(lm.match, e):  # built for everyone: the bytes are the same
        data = p.encode(message)
        for seat, peer in lm.seats.items():
            if audience.has_seat(seat) and audience.speaks(peer.version):
                peer.send(data)
        if audience.has_spectators:
            for version in lm.spectators.versions():
                if audience.speaks(version):
                    lm.spectators.post(data, version)


async def until(done: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not done():
            await asyncio.sleep(0)  # a yield to the loop, not a wait for time


@dataclass
class Scenario:
    """One run of the script on ``apps`` (Ann, the v1 racer, on the first; Bob, v2, and the spectators on the last)."""

    apps: list[App]
    clients: dict[str, WsClient] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)  # what differs between runs -> its name
    code: str = ""
    tokens: list[str] = field(default_factory=list)
    seqs: list[int] = field(default_factory=lambda: [1, 1])
    games: list[Game] = field(
        default_factory=lambda: [Game.new(SEED, "classic") for _ in range(2)]
    )  # as played
    kept: dict[str, list[Msg]] = field(default_factory=dict)  # the frames of connections closed

    async def connect(self, name: str, version: int, app: App) -> WsClient:
        ws = self.clients[name] = await client(app)
        if version == 2:
            welcome = await ws.request({"type": "hello", "v": 2, "name": name}, "welcome")
            self.secrets |= {welcome["player"]: f"{name}-id", welcome["key"]: f"{name}-key"}
        return ws

    def live(self, app: App) -> LiveMatch:
        return app.hub.live[self.code]

    async def move(self, seat: int) -> None:
        """The seat's next move of the line, once its ack is back and everyone here has applied it."""
        racer = self.clients["ann" if seat == 0 else "bob"]
        seq, text = self.seqs[seat], greedy_moves(self.games[seat])
        assert text is not None
        self.games[seat].play(text)
        await racer.send({"type": "move", "seq": seq, "move": text})
        ack = await racer.expect("ack", seq=seq)
        self.seqs[seat] += 1
        await until(lambda: all(self.live(app).match.ev >= ack["ev"] for app in self.apps))

    async def watch(self, name: str, version: int) -> None:
        ws = await self.connect(name, version, self.apps[-1])
        await ws.request({"type": "watch", "match": self.code}, "watching")

    async def hang_up(self, name: str) -> None:
        """The connection closes once it has read the last event; back once its process has let go of it."""
        lm = self.live(self.apps[-1])
        ws = self.clients.pop(name)
        await read_until(ws, lambda frame: frame.get("ev") == lm.match.ev)
        before = len(lm.seats) + len(lm.spectators)
        await ws.close()
        self.kept[f"{name}, first connection"] = ws.received
        await until(lambda: len(lm.seats) + len(lm.spectators) < before)

    def everywhere(self, holds: Callable[[Match], bool]) -> Callable[[], bool]:
        """Whether the match ``holds`` in every process holding it (so the script's events come in one order)."""
        return lambda: all(
            holds(app.hub.live[self.code].match) for app in self.apps if self.code in app.hub.live
        )

    def connected(self, seat: int, connected: bool) -> Callable[[], bool]:
        """Whether every process has applied the seat's connection as ``connected``."""
        return self.everywhere(
            lambda m: m.seats[seat] is not None and (m.seat(seat).conn is not None) == connected
        )


async def read_until(ws: WsClient, seen: Callable[[Msg], bool]) -> None:
    """Back once ``ws`` has received a frame that is ``seen``."""
    while not any(seen(frame) for frame in ws.received):
        await ws.recv()


async def run(apps: list[App]) -> dict[str, list[Msg]]:
    """The script: every client's frames, in order, with the run's own codes and keys named alike."""
    s = Scenario(apps)
    hang_up = s.hang_up
    ann = await s.connect("ann", 1, apps[0])
    created = await ann.request({"type": "create", "name": "Ann", "seed": SEED}, "created")
    s.code = created["match"]
    await until(s.connected(0, True))
    carl = await s.connect("carl", 1, apps[-1])  # sits down and gets up again, still connected
    taken = await carl.request({"type": "join", "match": s.code, "name": "Carl"}, "joined")
    await until(s.connected(1, True))
    await carl.send({"type": "leave"})
    await until(lambda: s.live(apps[-1]).match.seats[1] is None and 1 not in s.live(apps[-1]).seats)
    other = await carl.request({"type": "create", "name": "Carl", "seed": SEED}, "created")
    bob = await s.connect("bob", 2, apps[-1])
    joined = await bob.request({"type": "join", "match": s.code, "name": "Bob"}, "joined")
    await until(s.connected(1, True))
    s.tokens = [created["token"], joined["token"]]
    s.secrets |= {s.code: "CODE", other["match"]: "OTHER-CODE", taken["token"]: "carl-token"}
    s.secrets |= {s.tokens[0]: "ann-token", s.tokens[1]: "bob-token", other["token"]: "carl-other-token"}
    await s.watch("early v1 spectator", 1)  # watching from the lobby
    for seat, ws in enumerate((ann, bob)):  # one after the other: the same order in every run
        await ws.send({"type": "ready"})
        await until(s.everywhere(lambda m, seat=seat: m.seat(seat).ready))
    await asyncio.gather(ann.expect("countdown"), bob.expect("countdown"))
    apps[0].clock.advance(COUNTDOWN_MS)  # type: ignore[attr-defined]  # the run's one clock
    kick(apps[0], s.code)
    await asyncio.gather(ann.expect("start"), bob.expect("start"))

    await s.move(0)
    await s.move(1)
    await s.watch("v2 spectator", 2)  # joins between moves
    await s.move(0)
    await s.move(0)  # Bob lags: Ann's boards are held back from spectators
    await s.watch("v1 spectator", 1)
    await s.move(1)
    await s.clients["v2 spectator"].request(
        {"type": "watch", "match": other["match"]}, "watching"
    )  # moves on
    await s.move(1)
    await s.move(0)
    await hang_up("early v1 spectator")
    await s.move(0)
    await hang_up("bob")  # drops mid-race; Ann plays on
    await until(s.connected(1, False))
    last_ev = s.kept["bob, first connection"][-1]["ev"]
    await s.move(0)
    await s.move(0)
    bob = await s.connect("bob", 2, apps[-1])
    await bob.request(
        {"type": "resume", "match": s.code, "token": s.tokens[1], "last_ev": last_ev}, "resumed"
    )
    await until(s.connected(1, True))
    await s.watch("v2 spectator, again", 2)
    await s.move(1)
    await s.move(0)
    await s.move(1)
    for seat, ws in enumerate((ann, bob)):
        await ws.send({"type": "finish"})
        await until(s.everywhere(lambda m, seat=seat: m.seat(seat).ended is not None))
    for name in ("ann", "bob", "v1 spectator", "v2 spectator, again"):
        await s.clients[name].expect("result")
    await carl.send({"type": "ready"})  # a last frame for those who left: all before it is in
    for name in ("carl", "v2 spectator"):
        await read_until(
            s.clients[name], lambda frame: frame.get("type") == "lobby" and frame["seats"][0]["ready"]
        )
    kept = s.kept | {name: ws.received for name, ws in s.clients.items()}
    return {name: _named_alike(frames, s.secrets) for name, frames in kept.items()}


def _named_alike(frames: list[Msg], secrets: dict[str, str]) -> list[Msg]:
    """``frames`` with the run's own codes, tokens and keys by their names (a welcome's host by none)."""
    out = []
    for frame in frames:
        text = json.dumps({k: v for k, v in frame.items() if k != "share_host"})
        for secret, name in secrets.items():
            text = text.replace(secret, name)
        out.append(json.loads(text))
    return out


async def deciding_per_event(app: App) -> App:
    app.hub._fan_out = partial(fan_out_per_event, app.hub)  # type: ignore[method-assign]
    return app


async def test_every_peer_gets_what_deciding_per_event_sends(
    start_app: StartApp, backend: dict[str, str]
) -> None:
    planned = await run([await start_app(clock=FakeClock(), **backend)])
    own = {
        **backend,
        "store_url": backend["store_url"].replace("grip.db", "per-event.db"),
    }  # embedded: a file each
    per_event = await run([await deciding_per_event(await start_app(clock=FakeClock(), **own))])
    assert planned == per_event
    assert all(frames for frames in planned.values())


async def test_every_peer_gets_it_with_the_racers_in_two_processes(
    start_app: StartApp, shared_url: str
) -> None:
    urls = {"store_url": shared_url, "bus_url": shared_url}
    clocks = FakeClock(), FakeClock()
    planned = await run([await start_app(clock=clocks[0], **urls) for _ in range(2)])
    per_event = await run(
        [await deciding_per_event(await start_app(clock=clocks[1], **urls)) for _ in range(2)]
    )
    assert planned == per_event


class Listener:
    """A peer that keeps what it is sent."""

    def __init__(self, name: str, version: int) -> None:
        self.id, self.version = name, version
        self.frames: list[bytes] = []

    def send(self, message: p.Outgoing) -> None:
        self.frames.append(p.encode(message))

    def send_many(self, frames: Sequence[bytes]) -> None:
        self.frames.extend(frames)

    def close(self, code: int, reason: str) -> None:
        pass


def test_the_plan_is_settled_again_when_a_seat_or_spectator_changes() -> None:
    """Each change of the audience here, even one no frame shows (a spectator gone: nothing built for it)."""
    lm = LiveMatch(Sim().match)
    ann, bob, watcher = Listener("ann", 1), Listener("bob", 2), Listener("watcher", 2)
    assert lm.fan_out().present == Present({}, ())
    lm.seat(0, ann)
    lm.spectators.add(watcher)
    assert lm.fan_out().present == Present({0: (1,)}, (2,))
    lm.seat(0, bob)  # a newer connection of the seat
    lm.spectators.discard(watcher)
    assert lm.fan_out().present == Present({0: (2,)}, ())
    lm.unseat(0)
    assert lm.fan_out().present == Present({}, ())
