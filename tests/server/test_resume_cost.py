"""A resume costs what the seat missed, not its whole game (issue 19).

It used to replay the log building an ack, with a whole view, for every move
the seat had made: 116-179 ms for a 2,000-play game. These tests count the
work instead of timing it.
"""

from __future__ import annotations

import pytest
from counting import count_calls, record_waits
from matchsim import Sim
from race import MakeAppT, client, start_race

import server.match.render
from server import protocol as p
from server.engine.game import BaseGame
from server.match.render import missed_events


def long_race(plays: int) -> Sim:
    """A free-swap race where seat 0 swaps two piles back and forth ``plays`` times, and seat 1 turns."""
    sim = Sim(variant="free-swap")
    sim.start()
    game = sim.match.game(0)
    swap = next(m for m in game.legal_texts() if "~" in m)
    for seq in range(1, plays + 1):
        sim.move(0, seq, swap)
    for seq in range(1, 4):
        sim.move(1, seq, "T")
    return sim


def test_missed_events_build_no_view_for_the_seat_s_own_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    sim = long_race(400)
    views = count_calls(monkeypatch, BaseGame, "player_view")
    checks = count_calls(monkeypatch, BaseGame, "check")
    missed = missed_events(sim.log, 0, 0)
    assert views[0] <= 1  # the start's view (the seat's own moves: none, whatever their number)
    assert checks[0] == 0  # nor any play's check: no ack, board or replay is built from this fold
    assert not any(isinstance(m, p.Ack | p.AckV2 | p.Undone) for m in missed)
    assert [m.moves for m in missed if isinstance(m, p.Progress)] == [1, 2, 3]  # what seat 1 did: all of it
    assert any(isinstance(m, p.Start) and m.view is not None for m in missed)


def test_missed_events_render_nothing_up_to_last_ev(monkeypatch: pytest.MonkeyPatch) -> None:
    sim = long_race(300)
    rendered = count_calls(monkeypatch, server.match.render, "render")
    last = sim.match.ev
    assert missed_events(sim.log, 0, last) == [] and rendered[0] == 0
    missed = missed_events(sim.log, 0, last - 2)  # seat 1's last two turns
    assert rendered[0] == 2 and [type(m) for m in missed] == [p.Progress, p.Progress]
    assert missed_events(sim.log, 1, last - 2) == []  # its own moves: in its snapshot, not missed


async def test_a_resume_with_nothing_missed_reads_no_log(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = await make_app()
    race = await start_race(app)
    for _ in range(3):
        await race.move(0)
    last_ev = app.hub.live[race.code].match.ev
    again = await client(app)  # Ann on another line
    reads = count_calls(monkeypatch, app.store, "events")
    views = count_calls(monkeypatch, BaseGame, "player_view")
    resumed = await again.request(
        {"type": "resume", "match": race.code, "token": race.tokens[0], "last_ev": last_ev}, "resumed"
    )
    assert resumed["missed"] == [] and resumed["last_seq"] == 3
    assert reads[0] == 0 and views[0] == 1  # the snapshot's own view, and nothing else


async def test_a_seat_resuming_from_far_back_again_and_again_waits_its_turn(
    make_app: MakeAppT, monkeypatch: pytest.MonkeyPatch
) -> None:
    """7 resumes a second of a long game, each replaying its log, held a bystander up by 70 ms (issue 19)."""
    app = await make_app(resumes_per_min=300.0, resume_burst=2)  # then one each 0.2 s
    race = await start_race(app)
    await race.move(0)
    waits = record_waits(monkeypatch, app.resumes)
    again = await client(app)
    for _ in range(3):
        resumed = await again.request(
            {"type": "resume", "match": race.code, "token": race.tokens[0], "last_ev": 0}, "resumed"
        )
        assert resumed["last_seq"] == 1
    assert waits[:2] == [0.0, 0.0] and waits[2] > 0 and waits[-1] == 0.0  # the third waited, then went
    asked, last_ev = len(waits), app.hub.live[race.code].match.ev
    await again.request(  # nothing missed: nothing to replay, no turn to wait
        {"type": "resume", "match": race.code, "token": race.tokens[0], "last_ev": last_ev}, "resumed"
    )
    assert len(waits) == asked


async def test_an_address_resuming_seat_after_seat_waits_its_turn(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """A seat's share bounded one seat: one client resumed 8 long games' seats in turn, a fifth of a core."""
    app = await make_app(
        **backend, proxies=("127.0.0.1/32",), address_snapshots_per_min=6.0, address_snapshot_burst=2
    )
    races = [await start_race(app) for _ in range(2)]
    seats = [(race.code, token) for race in races for token in race.tokens]
    one = await client(app, additional_headers={"X-Real-IP": "203.0.113.7"})
    for code, token in seats[:2]:  # the address's burst: at once
        await one.request({"type": "resume", "match": code, "token": token, "last_ev": 0}, "resumed")
    code, token = seats[2]  # another seat, its own share untouched: the address's turn is 10 s away
    await one.send({"type": "resume", "match": code, "token": token, "last_ev": 0})
    with pytest.raises(TimeoutError):
        await one.expect("resumed", timeout=1.0)
    other = await client(app, additional_headers={"X-Real-IP": "198.51.100.9"})  # another address: at once
    code, token = seats[3]
    await other.request({"type": "resume", "match": code, "token": token, "last_ev": 0}, "resumed")


async def test_an_address_watching_and_replaying_again_and_again_waits_its_turn(
    make_app: MakeAppT, backend: dict[str, str]
) -> None:
    """A watch's snapshot and a replay build a game whole (0.4 ms each for a long game), asked at a
    connection's frame rate: one address's 64 sockets kept 0.7 of a core busy. They take turns with
    its resumes."""
    app = await make_app(
        **backend, proxies=("127.0.0.1/32",), address_snapshots_per_min=6.0, address_snapshot_burst=2
    )
    decided = await start_race(app)
    await decided.move(0)
    await decided.finish_both()
    race = await start_race(app)
    one = await client(app, additional_headers={"X-Real-IP": "203.0.113.7"})
    await one.request({"type": "watch", "match": race.code}, "watching")  # the address's burst: at once
    await one.request({"type": "replay", "match": decided.code}, "replay")
    await one.send({"type": "watch", "match": race.code})  # its turn is 10 s away
    with pytest.raises(TimeoutError):
        await one.expect("watching", timeout=1.0)
    again = await client(app, additional_headers={"X-Real-IP": "203.0.113.7"})  # another socket, same address
    await again.send({"type": "replay", "match": decided.code})
    with pytest.raises(TimeoutError):
        await again.expect("replay", timeout=1.0)
    other = await client(app, additional_headers={"X-Real-IP": "198.51.100.9"})  # another address: at once
    await other.request({"type": "watch", "match": race.code}, "watching")
    await other.request({"type": "replay", "match": decided.code}, "replay")


async def test_an_address_resuming_and_watching_on_two_processes_waits_for_one_turn(
    make_app: MakeAppT, shared_url: str
) -> None:
    """Each process had its own share of an address's resumes and watches: going round the processes
    multiplied it."""
    shared = {"store_url": shared_url, "bus_url": shared_url, "proxies": ("127.0.0.1/32",)}
    one, two = [
        await make_app(**shared, address_snapshots_per_min=6.0, address_snapshot_burst=2) for _ in "12"
    ]
    race = await start_race(one)
    on_one = await client(one, additional_headers={"X-Real-IP": "203.0.113.7"})
    on_two = await client(two, additional_headers={"X-Real-IP": "203.0.113.7"})
    code, token = race.code, race.tokens[0]
    await on_one.request({"type": "resume", "match": code, "token": token, "last_ev": 0}, "resumed")
    await on_two.request({"type": "watch", "match": code}, "watching")  # the address's burst, over both
    await on_two.send({"type": "resume", "match": code, "token": race.tokens[1], "last_ev": 0})
    with pytest.raises(TimeoutError):  # its turn is 10 s away, wherever it asks
        await on_two.expect("resumed", timeout=1.0)
