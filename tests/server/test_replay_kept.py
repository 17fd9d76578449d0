"""The replay at a match's decision is built from the plays the match kept as it applied them.

Each play's reveal and check are taken off the engine once, when the play
is applied (``Match.apply``); the replay built from them must be, byte for
byte, the one the engine builds by replaying the logs (``seat_plays``'s
other path: a replay asked for later, or a copy whose kept plays are not
the whole log), whatever the variant, undos, a win's automatic swaps, or a
copy rebuilt from its log mid-game (a restart, another process).
"""

from __future__ import annotations

import asyncio
import gzip
import random

import orjson
import pytest
from counting import count_calls
from matchsim import SPECTATOR, Sim, rebuilt
from race import MakeAppT, client, kick, lobby_pair

import server.match.state
import server.replay
from server import protocol as p
from server.engine import Game
from server.engine.variants import VARIANTS, Variant
from server.errors import ErrorCode, Refused
from server.match.state import COUNTDOWN_MS, Match
from server.replay import replay_body
from tests.engine.engine_helpers import won_but_one

#: What a spectator's board frame has that a replay's play has not.
HEAD = ("type", "ev", "seat")


def count_log_replays(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of the seats' logs replayed through the engine from now on."""
    return count_calls(monkeypatch, server.replay, "_replayed")


def random_race(variant: str, rng: random.Random, seats: int) -> Sim:
    """A race (practice when one seat) of random legal plays, undos in practice, each seat finishing
    at a random point (or its game over), its copy rebuilt from the log at a random point."""
    sim = Sim(seats=seats, seed=str(rng.randrange(10**6)), variant=variant, version=2)
    sim.start()
    restart = rng.randrange(1, 120)
    seqs = [1] * seats
    for step in range(rng.randrange(1, 300)):
        if step == restart:  # a restart: the copy folded again from the stored log
            sim.match = rebuilt(sim.log)
        playing = [n for n in range(seats) if sim.match.seat(n).ended is None]
        if not playing:
            break
        n = rng.choice(playing)
        game = sim.match.game(n)
        if sim.match.practice and game.moves and rng.random() < 0.15:
            sim.do("decide_undo", n)
        elif rng.random() < 0.01:
            sim.do("decide_finish", n)
        else:
            sim.move(n, seqs[n], rng.choice(game.legal_texts()))
            seqs[n] += 1
    for n in range(seats):
        if sim.match.seat(n).ended is None:
            sim.do("decide_finish", n)
    assert sim.match.result is not None
    return sim


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_kept_plays_give_the_log_replay_s_bytes(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(f"kept-{variant}")
    replayed = count_log_replays(monkeypatch)
    for game in range(24):
        sim = random_race(variant, rng, seats=1 + game % 2)
        result = sim.match.result
        assert result is not None
        kept = sim.match.take_plays()
        assert kept is not None and sim.match.take_plays() is None  # handed over once
        assert all(not s.plays for s in sim.match.seats if s is not None)  # dropped at the decision
        before = replayed[0]
        from_kept = replay_body(result, kept)
        assert replayed[0] == before  # no log went through the engine
        assert from_kept == replay_body(result) and replayed[0] == before + len(result.seats)
        if len(result.seats) == 2:  # spectators, shown each play at once or held back, saw the same
            boards = [m for m in sim.to(SPECTATOR) if isinstance(m, p.BoardV2)]
            for seat in orjson.loads(from_kept)["seats"]:
                sent = [b.model_dump(mode="json") for b in boards if b.seat == seat["seat"]]
                assert [{k: v for k, v in b.items() if k not in HEAD} for b in sent] == seat["plays"]


def test_a_copy_that_applied_a_decision_made_elsewhere_keeps_no_plays() -> None:
    """Another process (or a resume) folding the log: the decision is not its own, nor its replay."""
    sim = random_race("classic", random.Random(7), seats=2)
    elsewhere = rebuilt(sim.log)
    assert elsewhere.result == sim.match.result and elsewhere.take_plays() is None
    assert all(not s.plays for s in elsewhere.seats if s is not None)


def test_kept_plays_that_are_not_the_logs_are_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy whose plays are not exactly the result's log: the log is replayed, and must be sound."""
    sim = random_race("three-waste", random.Random(11), seats=2)
    result, kept = sim.match.result, sim.match.take_plays()
    assert result is not None and kept is not None and all(len(kept[n]) > 2 for n in (0, 1))
    replayed = count_log_replays(monkeypatch)
    whole = replay_body(result)
    short = {0: kept[0][1:], 1: kept[1]}  # a copy that missed seat 0's first play
    assert replay_body(result, short) == whole and replayed[0] == 3  # seat 0's, then both
    swapped = {0: kept[1], 1: kept[0]}
    assert replay_body(result, swapped) == whole and replayed[0] == 5
    tampered = result.model_copy(
        update={"seats": [result.seats[0].model_copy(update={"moves": ["W>A1", *result.seats[0].moves]})]}
    )
    with pytest.raises(Refused) as refused:
        replay_body(tampered, kept)
    assert refused.value.code is ErrorCode.CORRUPT


class _WonButOne(Game):
    """Every deal is a classic position one move from the win (no deal a test can find is won)."""

    @classmethod
    def new(cls, seed: str, variant: str | Variant = "classic") -> Game:
        return won_but_one()[0]


def test_a_win_s_automatic_swaps_and_an_undo_come_out_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server.match.state, "Game", _WonButOne)
    monkeypatch.setattr(server.replay, "Game", _WonButOne)
    winning = won_but_one()[1]
    sim = Sim(seats=1, version=2)
    sim.start()
    other = next(t for t in sim.match.game(0).legal_texts() if t != winning)
    sim.move(0, 1, other)
    sim.do("decide_undo", 0)
    sim.move(0, 2, winning)
    result = sim.match.result
    assert result is not None and result.seats[0].score == 0
    kept = sim.match.take_plays()
    assert kept is not None and [play.move for play in kept[0]] == [winning] and kept[0][0].auto
    assert replay_body(result, kept) == replay_body(result)


async def test_where_it_is_decided_a_process_that_took_the_race_up_mid_way_builds_it_from_kept_plays(
    make_app: MakeAppT, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes on one Redis: the race starts on the first; Bob resumes on the second, which
    reads the match from its log mid-game, applies Ann's moves from the bus, and decides it."""
    first = await make_app(store_url=redis_url, bus_url=redis_url)
    second = await make_app(clock=first.clock, store_url=redis_url, bus_url=redis_url)
    race = await lobby_pair(first)
    a, b = race.players
    for c in (a, b):
        await c.send({"type": "ready"})
    for c in (a, b):
        await c.expect("countdown")
    kick(first, race.code, COUNTDOWN_MS)
    starts = [await c.expect("start") for c in (a, b)]
    race.views = [s["view"] for s in starts]
    for _ in range(3):
        await race.move(0)
        await race.move(1)
    replayed = count_log_replays(monkeypatch)
    await b.close()
    bob = await client(second)
    resumed = await bob.request({"type": "resume", "match": race.code, "token": race.tokens[1]}, "resumed")
    race.players[1], race.views[1] = bob, resumed["view"]
    for _ in range(4):
        await race.move(0)
        await race.move(1)
    await a.send({"type": "finish"})
    await bob.expect("finished", seat=0)
    await bob.send({"type": "finish"})
    await bob.expect("result")
    async with asyncio.timeout(5):
        while (kept := await second.store.replay(race.code)) is None:
            await asyncio.sleep(0.01)
    result = await second.store.result(race.code)
    assert result is not None and [len(s.moves) for s in result.seats] == [7, 7]
    assert replayed[0] == 0  # built where decided, from the plays its copy kept
    assert gzip.decompress(kept[1]) == replay_body(result) and replayed[0] == 2
    copy: Match = first.hub.live[race.code].match  # it applied the decision from the bus
    assert copy.take_plays() is None and all(not s.plays for s in copy.seats if s is not None)
