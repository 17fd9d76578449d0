"""The spectator feed: order, joining at the end, and moves that come during a round sharing a write."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from server.feed import CHUNK, SpectatorFeed


class Reader:
    def __init__(self) -> None:
        self.writes: list[list[bytes]] = []

    def send_many(self, frames: Sequence[bytes]) -> None:
        self.writes.append(list(frames))

    @property
    def frames(self) -> list[bytes]:
        return [f for w in self.writes for f in w]


class Broken(Reader):
    def send_many(self, frames: Sequence[bytes]) -> None:
        raise ConnectionResetError("gone")


async def settled(feed: SpectatorFeed[Reader]) -> None:
    while feed._writer is not None:
        await asyncio.sleep(0)


async def test_frames_come_in_order_and_a_late_reader_starts_at_the_end() -> None:
    feed: SpectatorFeed[Reader] = SpectatorFeed()
    early, late = Reader(), Reader()
    feed.add(early)
    feed.post(b"1")
    feed.post(b"2")
    feed.add(late)  # its snapshot holds 1 and 2
    feed.post(b"3")
    await settled(feed)
    assert early.writes == [[b"1", b"2", b"3"]]  # posted in one turn: one write
    assert late.frames == [b"3"]
    assert feed._frames == []  # every reader had them: forgotten


async def test_a_move_during_a_round_shares_the_write_of_those_not_yet_written() -> None:
    feed: SpectatorFeed[Reader] = SpectatorFeed()
    readers = [Reader() for _ in range(3 * CHUNK)]
    for r in readers:
        feed.add(r)
    feed.post(b"a")
    while not readers[0].writes:  # the first chunk is written, the round yields
        await asyncio.sleep(0)
    feed.post(b"b")
    await settled(feed)
    assert all(r.frames == [b"a", b"b"] for r in readers)
    assert readers[0].writes == [[b"a"], [b"b"]]
    assert readers[-1].writes == [[b"a", b"b"]]


async def test_a_reader_that_fails_is_dropped_and_the_others_go_on() -> None:
    feed: SpectatorFeed[Reader] = SpectatorFeed()
    good, bad = Reader(), Broken()
    feed.add(bad)
    feed.add(good)
    feed.post(b"1")
    await settled(feed)
    feed.post(b"2")
    await settled(feed)
    assert good.frames == [b"1", b"2"]
    assert len(feed) == 1
    feed.discard(good)
    feed.post(b"3")
    assert good.frames == [b"1", b"2"] and not feed._frames


async def test_the_feed_says_when_its_readers_change_a_dropped_one_too() -> None:
    """What the fan-out plan is settled again on (``LiveMatch``): a spectator come, gone, or dropped."""
    told: list[str] = []
    feed: SpectatorFeed[Reader] = SpectatorFeed(lambda: told.append("changed"))
    good, bad = Reader(), Broken()
    feed.add(good)
    feed.add(good)  # already there: nothing changed
    assert told == ["changed"]
    feed.add(bad)
    feed.post(b"1")
    await settled(feed)  # the broken one is dropped
    assert told == ["changed"] * 3 and len(feed) == 1
    feed.discard(good)
    feed.discard(good)  # already gone: nothing changed
    assert told == ["changed"] * 4 and len(feed) == 0
