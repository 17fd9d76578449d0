"""The stats page after a race and two practice games: the figures and both SVG charts of the
race, the practice games apart, the head-to-head table, the paged history opening the replay viewer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.store_events import filled_board

from .conftest import serving
from .helpers import BOARD, create_race, finish, join, start, turn, turn_to_the_end


def result_score(page: Any, name: str) -> int:
    row = page.locator("#result tbody tr", has_text=name)
    return int(row.locator(".score").inner_text())


def test_stats_after_a_race_and_a_practice_game(server_url: str, pages: Any, shot: Any) -> None:
    ada = pages.new()
    bea = pages.new()
    link = create_race(ada, server_url, "Ada", deal="4242", minutes=5)
    join(bea, server_url, link, "Bea")
    start(ada, bea)
    turn_to_the_end(ada, build=True)
    turn(bea)
    finish(ada)
    finish(bea)
    for p in (ada, bea):
        expect(p.locator("#result tbody tr")).to_have_count(2)
    race = {"ada": result_score(ada, "Ada"), "bea": result_score(ada, "Bea")}
    headline = ada.locator("#result h2").inner_text()
    won, lost, drew = (
        int(headline == "You won!"),
        int(headline == "You lost."),
        int(headline == "It's a draw."),
    )
    assert won + lost + drew == 1

    # two practice games for Ada
    solos = []
    for deal, build in [("99", False), ("12345", True)]:
        ada.goto(f"{server_url}practice")
        ada.fill("#deal", deal)
        ada.click("#start-practice")
        expect(ada.locator(f"{BOARD} button.stock")).to_be_enabled()
        turn(ada)
        if build:
            turn_to_the_end(ada, build=True)
        finish(ada)
        expect(ada.locator("#result")).to_be_visible()
        solos.append(result_score(ada, "Ada"))

    ada.click("#nav-stats")
    # the race counts; the practice games are kept apart, out of every figure and chart above them
    classic = ada.locator('.variant-stats[data-variant="classic"]')
    expect(classic.locator("dd.played")).to_have_text("1")
    expect(classic.locator("dd.wins")).to_have_text(str(int(race["ada"] == 0)))
    expect(classic.locator("dd.best")).to_have_text(str(race["ada"]))
    expect(classic.locator("dd.mean")).to_have_text(str(race["ada"]))
    expect(ada.locator("#total-games")).to_have_text("1")
    expect(ada.locator("#streak")).to_have_text("0")
    # the two pictures: one bar, one point: the race's
    expect(classic.locator(".dist svg .bar")).to_have_count(1)
    bar = classic.locator(".dist svg .bar")
    assert (bar.get_attribute("data-x"), bar.get_attribute("data-y")) == (str(race["ada"]), "1")
    expect(classic.locator(".trend svg .pt")).to_have_count(1)
    assert classic.locator(".trend svg .pt").get_attribute("data-y") == str(race["ada"])
    practice = ada.locator('#practice-stats .fig[data-variant="classic"]')
    expect(practice).to_have_attribute("data-played", "2")
    expect(practice).to_have_attribute("data-best", str(min(solos)))
    expect(practice.locator("dd")).to_have_text(f"2 played · best {min(solos)}")

    # head to head against Bea
    row = ada.locator("#h2h tbody tr")
    expect(row).to_have_count(1)
    expect(row.locator("th")).to_have_text("Bea")
    expect(row.locator(".wins")).to_have_text(str(won))
    expect(row.locator(".losses")).to_have_text(str(lost))
    expect(row.locator(".draws")).to_have_text(str(drew))

    # history, newest first; each game opens in the replay viewer
    games = ada.locator("#history tbody tr")
    expect(games).to_have_count(3)
    expect(games.nth(0).locator(".score")).to_have_text(str(solos[1]))
    expect(games.nth(0).locator(".outcome")).to_have_text("solo")
    expect(games.nth(0).locator(".tag.practice")).to_have_text("Practice")
    expect(games.nth(2).locator(".tag.practice")).to_have_count(0)
    expect(games.nth(1).locator(".score")).to_have_text(str(solos[0]))
    expect(games.nth(2).locator(".score")).to_have_text(str(race["ada"]))
    expect(games.nth(2)).to_contain_text("Bea")
    shot(ada, "stats", full_page=True)

    ada.set_viewport_size({"width": 360, "height": 740})
    assert ada.evaluate("document.documentElement.scrollWidth") <= 360
    ada.set_viewport_size({"width": 1200, "height": 860})

    games.nth(2).locator(".replay-link").click()
    expect(ada.locator(".replay .seed code")).to_have_text("4242")
    expect(ada.locator(".spec-col")).to_have_count(2)

    # paged: one game a page, then "Older"
    ada.goto(f"{server_url}stats?limit=2")
    expect(ada.locator("#history tbody tr")).to_have_count(2)
    ada.click("#older")
    expect(ada.locator("#history tbody tr")).to_have_count(3)
    expect(ada.locator("#older")).to_have_count(0)

    # Bea's public figures, from the head-to-head link
    ada.click("#h2h tbody tr th a")
    expect(ada.locator(".stats-head h1")).to_have_text("Statistics of Bea")
    expect(ada.locator('.variant-stats[data-variant="classic"] dd.played')).to_have_text("1")
    expect(ada.locator('.variant-stats[data-variant="classic"] dd.best')).to_have_text(str(race["bea"]))
    expect(ada.locator("#h2h tbody tr th")).to_have_text("Ada")

    # Bea sees the same record from her side
    bea.click("#nav-stats")
    expect(bea.locator("#h2h tbody tr .wins")).to_have_text(str(lost))
    expect(bea.locator("#h2h tbody tr .losses")).to_have_text(str(won))


def test_unknown_player_reads_as_a_sentence(server_url: str, pages: Any) -> None:
    page = pages.new()
    page.goto(f"{server_url}stats/nobody-at-all")
    expect(page.locator("[role=alert] .big")).to_have_text("There is no player with that id.")


def test_stats_on_a_phone_show_the_whole_table_and_count_one_score_as_one(
    server_url: str, pages: Any
) -> None:
    ada, bea = pages.new(width=390, height=844), pages.new()
    link = create_race(ada, server_url, "Ada", deal="77")
    join(bea, server_url, link, "Bea")
    start(ada, bea)
    finish(ada)
    finish(bea)
    expect(ada.locator("#result")).to_be_visible()
    ada.click("#nav-stats")
    classic = ada.locator('.variant-stats[data-variant="classic"]')
    expect(classic.locator(".trend figcaption")).to_have_text("Your last score")  # not "last 1 scores"
    expect(classic.locator(".trend svg title").first).to_have_text("Your last score")
    table = ada.locator("#history")
    expect(table.locator("tbody tr")).to_have_count(1)
    # every panel fits the screen, and the tables in them need no sideways scrolling: nothing cut off
    for panel in ada.locator(".panel").all():
        box = panel.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, panel.get_attribute("id")
    for lang in ["en", "de", "it", "nl", "pt"]:
        ada.select_option("#lang", lang)
        for wrap in ada.locator(".table-wrap").all():
            assert wrap.evaluate("w => w.scrollWidth <= w.clientWidth"), (lang, wrap.inner_text())
    ada.select_option("#lang", "en")
    expect(table.locator("tbody tr").first).to_contain_text("Classic")  # the rules, under the date


def test_the_board_of_the_best_pages_by_cursor(tmp_path: Path, pages: Any) -> None:
    best_first = filled_board(str(tmp_path / "grip.db"), 45)
    with serving(tmp_path) as url:
        page = pages.new()
        asked: list[dict[str, Any]] = []

        def frames(ws: Any) -> None:
            def sent(payload: Any) -> None:
                msg = json.loads(payload) if isinstance(payload, str) else {}
                if msg.get("type") == "rating_board":
                    asked.append(msg)

            ws.on("framesent", sent)

        page.on("websocket", frames)
        page.goto(f"{url}stats/p07")
        rows = page.locator("#rating-board tbody tr")
        shown: list[str] = []

        def read_page(first: int, count: int) -> None:
            expect(rows.first.locator("td").first).to_have_text(str(first))
            expect(rows).to_have_count(count)
            ranks = [int(r) for r in rows.locator("td:first-child").all_inner_texts()]
            assert ranks == list(range(first, first + count))
            shown.extend(rows.evaluate_all("rs => rs.map((r) => r.dataset.player)"))

        read_page(1, 20)
        expect(page.locator("#board-prev")).to_be_disabled()
        page.click("#board-next")
        read_page(21, 20)
        page.click("#board-next")
        read_page(41, 5)
        expect(page.locator("#board-next")).to_be_disabled()
        assert shown == best_first  # every racer once, in the board's order
        assert [("after" in m, "start" in m) for m in asked] == [(False, False), (True, False), (True, False)]
        page.click("#board-prev")
        read_page(21, 20)
        assert asked[-1]["after"] == asked[1]["after"]  # back to the second page: the same cursor
        page.click("#board-prev")
        read_page(1, 20)
        expect(page.locator("#board-prev")).to_be_disabled()
        page.close()
