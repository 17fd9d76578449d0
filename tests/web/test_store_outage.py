"""The web page through an outage of the server's Redis: what it was refused, it sends again.

A real server process on a real Redis of the test's own (AOF on), stopped
under the racers: each command is answered ``unavailable``. The page kept
nothing of a refused ``finish`` (it said "busy" and the race went on to its
time limit); it now sends it again after a growing pause, and the race ends
once Redis is back. And a rematch whose new match is lost goes back to the
old result instead of saying "not found" for good.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import RedisServer
from tests.processes import ServerProcess

from .helpers import create_race, join, moves, start, start_practice, turn, wait_moves

RETRYING = "() => Object.keys(window.__grip.screen.state.tries).length > 0"


@pytest.fixture
def redis_backed(aof_redis: RedisServer) -> Iterator[ServerProcess]:
    proc = ServerProcess("--redis", aof_redis.url, "--rate", "1000").start()
    yield proc
    proc.kill()


def confirm(page: Any, button: str) -> None:
    page.click(button)
    expect(page.locator(button)).to_have_attribute("data-i18n", f"{button[1:]}_confirm")
    page.click(button)


def test_a_finish_and_a_resign_refused_while_redis_is_down_go_again_once_it_is_back(
    redis_backed: ServerProcess, aof_redis: RedisServer, pages: Any
) -> None:
    url = redis_backed.http
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, url, "Ada")
    join(bea, url, link, "Bea")
    start(ada, bea)
    aof_redis.stop()
    confirm(ada, "#finish")
    confirm(bea, "#resign")
    ada.wait_for_function(RETRYING, timeout=15_000)  # refused, and to be sent again
    bea.wait_for_function(RETRYING, timeout=15_000)
    aof_redis.start()
    expect(ada.locator("#result h2")).to_have_text("You won!", timeout=30_000)
    expect(bea.locator("#result h2")).to_have_text("You lost.", timeout=30_000)
    for page in (ada, bea):
        assert page.evaluate("window.__grip.errors") == []  # nothing said "busy": it was tried again


def test_an_undo_refused_while_redis_is_down_takes_back_one_play_once_it_is_back(
    redis_backed: ServerProcess, aof_redis: RedisServer, pages: Any
) -> None:
    """Practice: the undo was refused with a "busy" toast and lost; it waits out the outage now, and
    is not doubled: the board after it is the one after the first move, here and on the server's."""
    page = pages.new()
    start_practice(page, redis_backed.http + "/", "3")
    turn(page)
    after_first = page.locator("#my-board").get_attribute("data-stock")
    turn(page)
    aof_redis.stop()
    page.click("#undo")
    page.wait_for_function(RETRYING, timeout=15_000)
    expect(page.locator("#undo")).to_be_disabled()  # one at a time: a second would take back another
    aof_redis.start()
    wait_moves(page, 1)
    expect(page.locator("#my-board")).to_have_attribute("data-stock", after_first or "")
    page.wait_for_function("() => Object.keys(window.__grip.screen.state.tries).length === 0")
    page.reload()  # the server's own snapshot of the seat
    wait_moves(page, 1)
    assert moves(page) == 1
    expect(page.locator("#my-board")).to_have_attribute("data-stock", after_first or "")
    expect(page.locator("#undo")).to_be_enabled()
    assert page.evaluate("window.__grip.errors") == []


@pytest.fixture
def losing_rematches() -> Iterator[ServerProcess]:
    proc = ServerProcess(module="tests.lost_rematch_server").start()
    yield proc
    proc.kill()


def test_a_rematch_whose_match_was_lost_goes_back_to_the_result(
    losing_rematches: ServerProcess, pages: Any
) -> None:
    """The page asked for the new match a few times, then said "not found" for good: now it goes back."""
    url = losing_rematches.http
    lost = "The rematch could not be opened. Here is your last race's result."
    pages.allowed_toasts.add(lost)
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, url, "Ada")
    old = link.rsplit("/", 1)[1]
    join(bea, url, link, "Bea")
    start(ada, bea)
    confirm(ada, "#finish")
    confirm(bea, "#finish")
    for page in (ada, bea):
        page.click("#rematch")
    for page in (ada, bea):
        # The page is at the old race's address before the rematch is even asked: wait for what only
        # the way back says (after the tries), not for the address, which holds from the start.
        page.wait_for_function("text => window.__grip.toasts.includes(text)", arg=lost, timeout=15_000)
        expect(page).to_have_url(re.compile(f"/m/{old}$"))
        expect(page.locator("#result")).to_be_visible()
