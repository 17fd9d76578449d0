"""Race a stranger from the web page: the button, the wait and its cancel, the race, the new
ratings on the result, the list of live races (names as text), the ratings chart and the board."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from .helpers import BOARD, finish, set_name, turn


def race_anyone(page: Any, url: str, name: str) -> None:
    set_name(page, url, name)
    page.select_option("#quick-clock", "180")
    page.click("#race-anyone")


def test_a_stranger_is_raced_from_the_page_and_the_race_is_rated(
    server_url: str, pages: Any, shot: Any
) -> None:
    ada, bea, carl = pages.new(), pages.new(), pages.new()
    race_anyone(ada, server_url, "Ada")
    expect(ada.locator("#quick-waiting")).to_be_visible()
    expect(ada.locator("#quick-rating")).to_contain_text("1500")
    shot(ada, "quick-waiting")
    ada.click("#quick-cancel")
    expect(ada.locator("#race-anyone")).to_be_visible()  # out of the queue: the button again
    race_anyone(ada, server_url, "Ada")
    expect(ada.locator("#quick-waiting")).to_be_visible()
    race_anyone(bea, server_url, "<i>Bea</i>")
    for p in (ada, bea):  # paired: to the race, ready at once
        expect(p).to_have_url(re.compile(r"/m/[A-Z0-9]{8}$"))
        expect(p.locator(f"{BOARD} button.stock")).to_be_enabled()
    code = ada.url.rsplit("/", 1)[1]
    turn(ada)

    carl.goto(f"{server_url}live")
    race = carl.locator(f'.live-race[data-match="{code}"]')
    expect(race).to_be_visible()
    names = race.locator(".racer-name").all_inner_texts()
    assert sorted(names) == ["Ada", "iBea/i"]  # the markup characters never reach a page
    assert race.locator("i").count() == 0
    expect(race.locator(".racer-rating").first).to_have_text(" (1500)")
    expect(race.locator(".tag.rated")).to_be_visible()
    ada_in_list = race.locator(".racer").filter(has_text="Ada")
    expect(ada_in_list.locator(".sub")).to_have_text("1 move")  # not "1 moves"
    shot(carl, "live")

    finish(ada)
    finish(bea)
    for p in (ada, bea):
        changes = p.locator("#rating-changes li")
        expect(changes).to_have_count(2)
        expect(changes.first).to_contain_text("1500 →")
    # a first rated race: the new rating is provisional, its "?" said in words as the stats page says it
    mine = ada.locator("#rating-changes li.mine")
    expect(mine).to_have_text(re.compile(r"^Ada: Rating: 1500 → \d+\? \([+-]?\d+\) provisional$"))
    why = re.compile(r"^The “\?” marks a provisional rating: .* first 5 rated races, ")
    expect(mine.locator(".tag.provisional")).to_have_attribute("title", why)
    ada.select_option("#lang", "de")
    expect(mine.locator(".tag.provisional")).to_have_text("vorläufig")
    expect(mine.locator(".tag.provisional")).to_have_attribute(
        "title", re.compile("in den ersten 5 gewerteten Rennen")
    )
    ada.select_option("#lang", "en")
    shot(ada, "result-rated")
    # the table's column is the game's grade (brilliant, excellent, good), beside the ratings' change
    expect(ada.locator(".result-table thead th")).to_contain_text(["Player", "Score", "Grade"])
    expect(race).to_have_count(0)  # decided: off the list

    ada.click("#nav-stats")
    classic = ada.locator('#ratings-panel .rating-variant[data-variant="classic"]')
    expect(classic).to_be_visible()
    expect(classic.locator("svg circle.pt")).to_have_count(1)
    expect(classic.locator(".rating-now")).to_have_text(re.compile(r"^\d+\?$"))
    expect(classic.locator(".tag.provisional")).to_have_text("provisional")
    expect(classic.locator(".tag.provisional")).to_have_attribute("title", why)
    expect(ada.locator("#board-panel")).to_be_visible()  # one race: still provisional, not on it yet
    expect(ada.locator("#board-empty, #rating-board")).to_have_count(1)
    ada.select_option("#board-variant", "suitless")  # nobody has raced it rated
    expect(ada.locator("#board-empty")).to_have_text("Nobody is on this board yet.")  # not the daily's words
    me = ada.evaluate("localStorage.getItem('grip:player')")
    assert ada.locator(f'#rating-board tr[data-player="{me}"]').count() == 0


def test_the_name_is_asked_above_race_anyone_not_only_in_the_friend_s_form(
    server_url: str, pages: Any
) -> None:
    """A newcomer reads the page from the top: the name field comes before "Race anyone" (it was
    in the friend's form below it, so a stranger's race went as "Player", on the board too), and
    what is typed there is the name the opponent sees."""
    for width, height in ((1200, 860), (360, 740)):
        page = pages.new(width=width, height=height)
        page.goto(server_url)
        name, button = page.locator("#name").bounding_box(), page.locator("#race-anyone").bounding_box()
        assert name and button and name["y"] + name["height"] <= button["y"], (width, name, button)
        assert page.locator("#race-form #name").count() == 0
    ann, ben = pages.new(), pages.new(width=360, height=740)
    for page, who in ((ann, "Ann"), (ben, "Ben")):
        page.goto(server_url)
        page.locator("#name").press_sequentially(who)
        page.click("#race-anyone")
    for page, other in ((ann, "Ben"), (ben, "Ann")):
        expect(page.locator(".progress-box h3")).to_contain_text(other)
