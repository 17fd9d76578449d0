"""Two browsers race to a result with clicks only while a third watches; reload and reconnect."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

from playwright.sync_api import expect

from server.engine import Game

from .helpers import (
    BOARD,
    create_race,
    finish,
    join,
    moves,
    play_any_move,
    play_waste,
    start,
    stock,
    turn,
    turn_to_the_end,
    wait_moves,
)

#: A replay column's board as drawn: each pile's cards, each waste's top card, the counts.
DRAWN_BOARD = """(col) => {
  const root = document.querySelector(`${col} .board-wrap`);
  const grid = {};
  for (const pile of root.querySelectorAll(".pile[data-spot]"))
    grid[pile.dataset.spot] = [...pile.querySelectorAll(".card")].map((c) => c.dataset.card);
  const wastes = [...root.querySelectorAll(".waste")].map((w) => w.querySelector(".card")?.dataset.card ?? null);
  return { grid, wastes, stock: Number(root.dataset.stock), moves: Number(root.dataset.moves) };
}"""


def engine_boards(server_url: str, code: str) -> list[list[dict[str, Any]]]:
    """Per seat, the board after each step of its replay, as the server's engine has it: the
    game of the replay's seed replayed move by move (a step's board is the view after its moves)."""
    with urllib.request.urlopen(f"{server_url}api/replay/{code}", timeout=10) as r:
        replay = json.loads(r.read())
    boards = []
    for seat in replay["seats"]:
        game = Game.new(replay["seed"], replay["variant"])
        views = [game.player_view()]
        for play in seat["plays"]:
            game.play(play["move"])  # its automatic swaps with it
            views.append(game.player_view())
        boards.append(
            [
                {
                    "grid": {spot: list(cards) for spot, cards in v["grid"].items()},
                    "wastes": [w["top"] for w in v["waste"]],
                    "stock": v["stock_count"],
                    "moves": v["moves"],
                }
                for v in views
            ]
        )
    return boards


def spec_stock(page: Any, seat: int) -> int:
    return int(page.locator(f'.spec-board[data-seat="{seat}"]').get_attribute("data-stock") or -1)


def test_race_to_result_while_spectated(server_url: str, pages: Any, shot: Any) -> None:
    ada = pages.new()
    bea = pages.new(width=360, height=740)  # one racer on a phone
    eve = pages.new(width=1400, height=900)

    link = create_race(ada, server_url, "Ada", deal="12345", minutes=5)
    code = link.rstrip("/").rsplit("/", 1)[1]
    assert link == f"{server_url}m/{code}"
    expect(ada.locator("#lobby .code.big")).to_have_text(code)
    join(bea, server_url, link, "Bea")
    expect(ada.locator("#lobby .seats li")).to_have_count(2)
    expect(ada.locator("#lobby .seats")).to_contain_text("Bea")
    expect(bea.locator(".tag.chosen-deal")).to_have_text("Deal chosen by its creator")  # Ada may know it

    eve.goto(f"{server_url}w/{code}")
    expect(eve.locator(".spec-col")).to_have_count(2)
    expect(eve.locator(".spec-col .p-state")).to_have_text(["not ready yet", "not ready yet"])
    shot(ada, "lobby", full_page=True)

    start(ada, bea)
    expect(eve.locator(".spec-col .p-state")).to_have_text(["Playing", "Playing"])
    expect(eve.locator(".spec-board .pile")).to_have_count(48)
    assert bea.evaluate("document.documentElement.scrollWidth") <= 360

    # Both boards move for the spectator, each as far as the other racer has drawn: both hold the
    # same deal, so Ada's turned cards are Bea's stock to come (a racer could watch as a stranger).
    expect(eve.locator(".spec-lag")).to_contain_text(
        "each board is shown only as far as the other racer has drawn from the stock"
    )
    turn(ada)
    ada_col = eve.locator('.spec-col[data-seat="0"]')
    # Ada's turn is held back: her numbers stay live (as the racers see them), and the box says
    # how far the board below them is (it showed the board's numbers, live frames unseen)
    expect(ada_col.locator(".p-held")).to_have_text("The board below shows 0 of 1 move.")
    expect(ada_col.locator(".p-moves")).to_have_text("1")
    expect(ada_col.locator(".p-left")).to_have_text("72")  # a turn moves cards to the waste
    expect(eve.locator(".spec-lag")).to_contain_text("The numbers above each board are live.")
    expect(eve.locator('.spec-board[data-seat="0"]')).to_have_attribute("data-stock", "72")
    expect(eve.locator('.spec-board[data-seat="0"]')).to_have_attribute("data-moves", "0")
    turn(bea)  # Bea has drawn as far: Ada's turn shows, then Bea's
    expect(ada_col.locator(".p-moves")).to_have_text("1")
    expect(ada_col.locator(".p-held")).to_have_count(0)
    expect(eve.locator('.spec-board[data-seat="0"]')).to_have_attribute("data-stock", "69")
    expect(eve.locator('.spec-board[data-seat="1"]')).to_have_attribute("data-stock", "69")
    # A move chosen by clicking a pile (or the waste) and then a lit-up target.
    source = play_any_move(ada)
    assert source is not None, "deal 12345 has a swap or a build at the start"
    turn(bea)
    expect(eve.locator('.spec-col[data-seat="0"] .move-list li')).to_have_count(moves(ada))
    expect(eve.locator('.spec-col[data-seat="1"] .move-list li')).to_have_count(1)  # ahead of Ada now
    # Ada's opponent box on Bea's phone follows Ada's numbers.
    expect(bea.locator(".progress-box .p-moves")).to_have_text(str(moves(ada)))
    for _ in range(8):
        turn(ada)
        while play_waste(ada):
            pass
    while stock(bea) > stock(ada):  # only the stock counts: builds from the waste draw nothing
        turn(bea)
    expect(eve.locator('.spec-board[data-seat="0"]')).to_have_attribute("data-moves", str(moves(ada)))
    expect(eve.locator('.spec-board[data-seat="0"]')).to_have_attribute("data-stock", str(stock(ada)))
    shot(ada, "race", full_page=True)
    shot(bea, "race-phone", full_page=True)
    shot(eve, "spectator", full_page=True)

    for racer in (ada, bea):
        turn_to_the_end(racer, build=racer is ada)
        assert stock(racer) == 0
        finish(racer)

    expect(eve.locator(".spec-lag")).to_be_hidden()  # decided: every board as it ended
    for page in (ada, bea, eve):
        expect(page.locator("#result")).to_be_visible()
        expect(page.locator("#result .seed code")).to_have_text("12345")
        expect(page.locator("#result tbody tr")).to_have_count(2)
        expect(page.locator("#result")).to_contain_text("Ada")
        expect(page.locator("#result")).to_contain_text("Bea")
    expect(ada.locator("#result h2")).to_have_text(
        __import__("re").compile("You won!|You lost.|It's a draw.")
    )
    expect(ada.locator("#rematch")).to_be_visible()
    shot(ada, "result", full_page=True)
    shot(eve, "spectator-result", full_page=True)

    # The replay viewer steps through both games move by move.
    ada.click("#watch-replay")
    expect(ada.locator(".spec-col")).to_have_count(2)
    expect(ada.locator("#step-counter")).to_contain_text("Step 0 of")
    first = ada.locator('.spec-col[data-seat="0"] .board-wrap').get_attribute("data-stock")
    assert first == "72"
    ada.click("#next")
    expect(ada.locator("#step-counter")).to_contain_text("Step 1 of")
    expect(ada.locator('.spec-col[data-seat="0"] .board-wrap')).to_have_attribute("data-stock", "69")
    ada.click("#last")
    expect(ada.locator('.spec-col[data-seat="0"] .board-wrap')).to_have_attribute("data-stock", "0")
    shot(ada, "replay", full_page=True)
    # Every board the page rebuilt from the moves is the server engine's, stepping forth and back.
    boards = engine_boards(server_url, code)
    last = max(len(b) for b in boards) - 1
    assert last > 20
    for k in (last, 3, 0, 1, 2, last // 2, last - 1, 7):
        ada.locator("#step-range").fill(str(k))
        expect(ada.locator("#step-counter")).to_contain_text(f"Step {k} of {last}")
        for seat, steps in enumerate(boards):
            drawn = ada.evaluate(DRAWN_BOARD, f'.spec-col[data-seat="{seat}"]')
            assert drawn == steps[min(k, len(steps) - 1)], f"seat {seat}, step {k}"

    # Rematch: both ask, both land in a new lobby of the same seats.
    bea.click("#rematch")
    ada.go_back()
    expect(ada.locator("#rematch")).to_be_visible()
    ada.click("#rematch")
    for page in (ada, bea):
        expect(page.locator("#lobby")).to_be_visible()
        expect(page).not_to_have_url(link)


def test_reload_and_dropped_network_resume_the_same_game(server_url: str, pages: Any) -> None:
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada", deal="7")
    join(bea, server_url, link, "Bea")
    start(ada, bea)
    for _ in range(3):
        turn(ada)
    play_any_move(ada)
    grid = ada.locator(f"{BOARD} .grid").inner_text()
    before = (moves(ada), stock(ada))

    ada.reload()
    expect(ada.locator(f"{BOARD} .pile")).to_have_count(24)
    wait_moves(ada, before[0])
    assert (moves(ada), stock(ada)) == before
    assert ada.locator(f"{BOARD} .grid").inner_text() == grid
    expect(ada.locator(".clock")).to_have_text(__import__("re").compile(r"^\d+:\d\d$"))
    turn(ada)  # the seq numbering continues where it was

    # A dropped connection: a visible "reconnecting" state, then play goes on.
    ada.evaluate("window.__grip.net.drop()")
    expect(ada.locator("#conn")).to_be_visible()
    expect(ada.locator("#conn")).to_be_hidden()
    turn(ada)
    expect(bea.locator(".progress-box .p-moves")).to_have_text(str(moves(ada)))

    # A spectator arriving late sees the boards at once, as far as both racers have drawn.
    while stock(bea) > stock(ada):
        turn(bea)
    eve = pages.new()
    eve.goto(link.replace("/m/", "/w/"))
    expect(eve.locator('.spec-board[data-seat="0"]')).to_have_attribute("data-moves", str(moves(ada)))
    bea_shown = (72 - stock(ada)) // 3  # Bea only turned: her turns that drew no further than Ada
    expect(eve.locator('.spec-board[data-seat="1"]')).to_have_attribute("data-moves", str(bea_shown))
    held = moves(bea) - bea_shown  # Bea's last turn may have drawn past Ada: held back
    expect(eve.locator('.spec-col[data-seat="1"] .p-moves')).to_have_text(str(moves(bea)))  # live
    if held:
        expect(eve.locator('.spec-col[data-seat="1"] .p-held')).to_have_text(
            f"The board below shows {bea_shown} of {moves(bea)} moves."
        )
    else:
        expect(eve.locator('.spec-col[data-seat="1"] .p-held')).to_have_count(0)
    expect(eve.locator('.spec-board[data-seat="0"]')).to_have_attribute("data-stock", str(stock(ada)))
    expect(eve.locator('.spec-col[data-seat="0"] .move-list li')).to_have_count(moves(ada))


def race(server_url: str, pages: Any, *, minutes: int = 10) -> tuple[Any, Any, str]:
    """Ada and Bea in a started race; the share link."""
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada", deal="12345", minutes=minutes)
    join(bea, server_url, link, "Bea")
    start(ada, bea)
    return ada, bea, link


def test_finish_stays_armed_while_the_opponent_moves(server_url: str, pages: Any) -> None:
    ada, bea, _ = race(server_url, pages)
    ada.click("#finish")
    expect(ada.locator("#finish")).to_have_attribute("data-i18n", "finish_confirm")
    turn(bea)  # Ada's side is redrawn with Bea's progress
    expect(ada.locator(".progress-box .p-moves")).to_have_text("1")
    expect(ada.locator("#finish")).to_have_attribute("data-i18n", "finish_confirm")
    expect(ada.locator("#finish")).to_be_focused()
    ada.keyboard.press("Enter")
    expect(ada.locator(".match-panel")).to_contain_text("Your game is over")
    finish(bea)  # both with all 72 cards left: Ada finished first
    expect(ada.locator("#tie-by-time")).to_have_text("The same number of cards left: your game ended first.")
    expect(bea.locator("#tie-by-time")).to_have_text("The same number of cards left: Ada's game ended first.")
    expect(bea.locator("#result h2")).to_have_text("You lost.")


def test_an_opponent_who_ends_without_a_move_is_done(server_url: str, pages: Any) -> None:
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada", deal="12345")
    join(bea, server_url, link, "Bea")
    eve = pages.new()
    eve.goto(link.replace("/m/", "/w/"))
    expect(eve.locator(".spec-col")).to_have_count(2)
    start(ada, bea)
    turn(ada)
    bea.click("#resign")
    bea.click("#resign")  # confirmed: Bea's game ends without a move
    expect(bea.locator(".match-panel [role=status]")).to_have_text(
        "You resigned with 72 cards left: you lost the race. Your opponent plays on for their score;"
        " the result comes when their game ends. Stay to see it, or start a new race."
    )
    expect(bea.locator("#leave-race")).to_have_text("New race")
    expect(ada.locator(".progress-box .p-state")).to_have_text("Resigned")
    expect(eve.locator('.spec-col[data-seat="1"] .p-state')).to_have_text("Resigned")
    expect(eve.locator('.spec-col[data-seat="0"] .p-state')).to_have_text("Playing")
    finish(ada)
    expect(ada.locator("#result")).to_be_visible()
    expect(ada.locator(".progress-box .p-state")).to_have_text("Resigned")
    expect(eve.locator("#result")).to_be_visible()
    expect(eve.locator(".spec-col .p-state")).to_have_text(["Done", "Resigned"])
    expect(ada.locator("#tie-by-time")).to_have_count(0)  # the same 72 left, but a resignation loses


def test_a_resigner_goes_on_at_once_and_finds_the_result_later(server_url: str, pages: Any) -> None:
    """Resigning loses the race, but the result waits for the opponent's game: the resigner is told
    they lost, sees the opponent play while they stay, and may leave for a new race meanwhile."""
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada", deal="12345")
    join(bea, server_url, link, "Bea")
    start(ada, bea)
    turn(bea)
    bea.click("#resign")
    bea.click("#resign")
    expect(bea.locator("#my-over")).to_contain_text("you lost the race")
    turn(ada)  # staying, Bea sees Ada's game go on
    expect(bea.locator(".progress-box .p-moves")).to_have_text("1")
    expect(bea.locator(".progress-box .p-state")).to_have_text("Playing")
    bea.click("#leave-race")
    expect(bea).to_have_url(server_url)
    expect(bea.locator("#race-form")).to_be_visible()  # a new race is one click away
    turn(ada)  # the race goes on without Bea's page: nothing of it reaches the start page
    finish(ada)
    expect(ada.locator("#result-h")).to_have_text("You won!")
    assert bea.evaluate("window.__grip.toasts") == []
    bea.click("#create")  # and the new race opens while the old one is still being decided
    expect(bea.locator("#lobby")).to_be_visible()
    bea.goto(link)  # her seat is kept: the result is there when she comes back
    expect(bea.locator("#result-h")).to_have_text("You lost.")
    expect(bea.locator(".result-table tr.winner th")).to_have_text("Ada")


def test_a_late_spectator_sees_the_clock(server_url: str, pages: Any) -> None:
    _, _, link = race(server_url, pages, minutes=5)
    eve = pages.new()
    eve.goto(link.replace("/m/", "/w/"))
    expect(eve.locator(".spec-board .pile")).to_have_count(48)
    expect(eve.locator(".clock")).to_have_text(re.compile(r"^[45]:\d\d$"))


SKEWED_CLOCK = "(() => { const real = Date.now; Date.now = () => real() + %d; })()"


def test_after_a_reload_the_clock_follows_the_server_not_the_device(server_url: str, pages: Any) -> None:
    ada, bea = pages.new(), pages.new()
    ada.context.add_init_script(SKEWED_CLOCK % (5 * 60_000))  # Ada's device is 5 minutes ahead
    bea.context.add_init_script(SKEWED_CLOCK % (-5 * 60_000))  # Bea's is 5 minutes behind
    link = create_race(ada, server_url, "Ada", minutes=10)
    join(bea, server_url, link, "Bea")
    start(ada, bea)
    ten_minutes_or_less = re.compile(r"^(10:00|9:\d\d)$")
    for page in (ada, bea):
        expect(page.locator(".clock")).to_have_text(ten_minutes_or_less)
    # A reload catches up on the race's events late: the resumed snapshot's `now` sets the clock.
    for page in (ada, bea):
        page.reload()
        expect(page.locator(f"{BOARD} .pile")).to_have_count(24)
        expect(page.locator(".clock")).to_have_text(ten_minutes_or_less)
    # So does a late spectator's `watching`, on a device 5 minutes ahead.
    eve = pages.new()
    eve.context.add_init_script(SKEWED_CLOCK % (5 * 60_000))
    eve.goto(link.replace("/m/", "/w/"))
    expect(eve.locator(".spec-board .pile")).to_have_count(48)
    expect(eve.locator(".clock")).to_have_text(ten_minutes_or_less)


def test_a_reload_in_the_countdown_shows_the_countdown(server_url: str, pages: Any) -> None:
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada")
    join(bea, server_url, link, "Bea")
    bea.click("#ready")
    ada.click("#ready")
    expect(ada.locator(".countdown")).to_be_visible()
    ada.reload()
    expect(ada.locator(".countdown")).to_be_visible()
    expect(ada.locator(f"{BOARD} .pile")).to_have_count(24)
    expect(ada.locator(".countdown")).to_have_count(0)
    turn(ada)


def test_racers_copy_the_spectator_link_and_cannot_watch_before_the_result(
    server_url: str, pages: Any
) -> None:
    ada = pages.new()
    link = create_race(ada, server_url, "Ada")
    watch = link.replace("/m/", "/w/")
    expect(ada.locator("#watch-link")).to_have_value(watch)
    expect(ada.locator('#lobby a[href*="/w/"]')).to_have_count(0)  # nothing that leaves the seat
    # The same player in another tab is a racer: the server refuses, the page says why.
    other = ada.context.new_page()
    other.goto(watch)
    expect(other.locator("[role=alert] .big")).to_have_text(
        "This race cannot be watched yet: its racers can watch it once it has a result, "
        "and daily games once their day is over."
    )
    # Her own link in that tab (or after closing the first) is her seat: that tab takes it over,
    # and the first one says so and can take it back.
    other.goto(link)
    expect(other.locator("#lobby")).to_contain_text("Ada (you)")
    taken = "This race was opened in another tab or window; play continues there."
    expect(ada.locator("[role=alert] .big")).to_have_text(taken)
    ada.click("#play-here")
    expect(ada.locator("#lobby")).to_contain_text("Ada (you)")
    expect(other.locator("[role=alert] .big")).to_have_text(taken)
    # Each tab's connection was closed by the server when the other took the seat: a new one comes
    # quietly, since nothing dropped that the player would need to know about.
    for page in (ada, other):
        page.wait_for_function(CONNECTED_AGAIN)
        assert "offline" not in page.evaluate("window.__grip.statuses")
        assert "Connected again." not in page.evaluate("window.__grip.toasts")
        expect(page.locator("#conn")).to_be_hidden()
    other.close()


#: The connection came back after the server closed it: online, then not, then online again.
CONNECTED_AGAIN = """() => {
  const s = window.__grip.statuses;
  const first = s.indexOf('online');
  return first >= 0 && s.slice(first).some((x) => x !== 'online') && s[s.length - 1] === 'online';
}"""


def test_a_strangers_link_to_a_full_race_shows_it_and_codes_may_be_lower_case(
    server_url: str, pages: Any
) -> None:
    ada, bob, cid = pages.new(), pages.new(), pages.new()
    pages.allowed_toasts.add("Both seats in this race are taken. You can still watch it.")
    link = create_race(ada, server_url, "Ada")
    join(bob, server_url, link, "Bob")
    code = link.rsplit("/", 1)[1]
    expect(bob.locator(".tag.chosen-deal")).to_have_count(0)  # a random deal
    cid.goto(link.replace(code, code.lower()))
    expect(cid).to_have_url(link.replace("/m/", "/w/"))  # full: shown to a spectator instead
    expect(cid.locator("body")).to_contain_text("Bob")


def test_the_home_page_takes_a_pasted_code_or_link(server_url: str, pages: Any) -> None:
    """What a friend pastes into "Match code": the share link whole, spaces around it, or the code
    in lower case with a space before it; each finds the race (a cut at 8 characters did not)."""
    ada, bob, cid = pages.new(), pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada")
    code = link.rsplit("/", 1)[1]
    bob.goto(server_url)
    bob.fill("#name", "Bob")
    bob.fill("#join-code", f"  {link} ")
    bob.click("#join-form button[type=submit]")
    expect(bob.locator("#lobby")).to_contain_text("Bob (you)")
    expect(ada.locator("#lobby .seats")).to_contain_text("Bob")
    cid.goto(server_url)
    cid.fill("#join-code", f" {code.lower()}")
    cid.click("#join-form button[type=button]")  # Watch
    expect(cid).to_have_url(f"{server_url}w/{code}")
    expect(cid.locator("body")).to_contain_text("Bob")
    cid.goto(server_url)
    cid.fill("#join-code", link.replace("/m/", "/w/"))  # the lobby's spectator link
    cid.click("#join-form button[type=button]")
    expect(cid).to_have_url(f"{server_url}w/{code}")
    expect(cid.locator("body")).to_contain_text("Bob")


def test_a_friend_by_link_is_asked_their_name_before_the_seat(server_url: str, pages: Any) -> None:
    ada, bob = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada")
    bob.goto(link)
    expect(bob.locator("#join-form #name")).to_be_focused()
    expect(bob.locator("#join-form .invite")).to_have_text("Ada invites you to race on the same deal.")
    expect(ada.locator("#lobby .seats li.free")).to_have_count(1)  # no seat is taken before the name
    bob.fill("#name", "Bob")
    bob.click("#join")
    expect(bob.locator("#lobby")).to_contain_text("Bob (you)")
    expect(ada.locator("#lobby .seats")).to_contain_text("Bob")


def test_an_opponent_who_is_away_is_shown_so_until_back(server_url: str, pages: Any) -> None:
    ada, bea, link = race(server_url, pages)
    state = ada.locator(".side .progress-box .p-state")
    expect(state).to_have_text("Playing")
    tabs = bea.context
    bea.close()
    expect(state).to_have_text("offline")
    expect(ada.locator(".side .progress-box.away")).to_have_count(1)
    bea = tabs.new_page()
    bea.goto(link)  # the seat kept in the browser: resumed
    expect(bea.locator(f"{BOARD} .pile")).to_have_count(24)
    expect(state).to_have_text("Playing")


def test_a_friend_asked_their_name_is_sent_to_watch_once_the_race_fills(server_url: str, pages: Any) -> None:
    ada, bob, cid = pages.new(), pages.new(), pages.new()
    pages.allowed_toasts.add("Both seats in this race are taken. You can still watch it.")
    link = create_race(ada, server_url, "Ada")
    bob.goto(link)
    expect(bob.locator("#join-form")).to_be_visible()
    join(cid, server_url, link, "Cid")  # the seat Bob was about to take
    expect(bob).to_have_url(link.replace("/m/", "/w/"))
    expect(bob.locator(".spec-col")).to_have_count(2)


def test_a_friend_asked_their_name_learns_the_race_was_called_off(server_url: str, pages: Any) -> None:
    ada, bob = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada")
    bob.goto(link)
    expect(bob.locator("#join-form .invite")).to_have_text("Ada invites you to race on the same deal.")
    bob.fill("#name", "   ")
    bob.click("#join")  # a name of blanks is no name: the form stays, no seat is taken
    expect(bob.locator("#join-form")).to_be_visible()
    expect(ada.locator("#lobby .seats li.free")).to_have_count(1)
    ada.locator("#lobby button", has_text="Leave").click()
    expect(bob.locator("[role=alert] .big")).to_have_text("That race does not exist or has expired.")


def test_a_friend_learns_the_lobby_was_called_off_when_its_creator_opened_another(
    server_url: str, pages: Any
) -> None:
    ada, bob = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada")
    join(bob, server_url, link, "Bob")
    create_race(ada, server_url, "Ada")  # one open lobby per creator: the first is called off
    expect(bob.locator("#called-off")).to_have_text("This race was called off: its creator opened a new one.")
    expect(bob.locator("#ready")).to_have_count(0)


def test_the_lobby_shows_the_terms_and_stops_inviting_once_full(server_url: str, pages: Any) -> None:
    ada, bob = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada", minutes=5)
    expect(ada.locator("#race-terms")).to_have_text("Classic · time limit 5 min")
    expect(ada.locator("#lobby")).to_contain_text("Send this link to your friend")
    bob.goto(link)  # asked for a name first: the invitation says what the race is
    expect(bob.locator("#join-form #race-terms")).to_have_text("Classic · time limit 5 min")
    bob.fill("#name", "Bob")
    bob.click("#join")
    for page in (ada, bob):
        expect(page.locator("#lobby .seats li:not(.free)")).to_have_count(2)
        expect(page.locator("#lobby-full")).to_have_text(
            "Both seats are taken. The race starts when both players are ready."
        )
        expect(page.locator("#lobby")).not_to_contain_text("Send this link")
        expect(page.locator("#share-link")).to_have_count(0)
        expect(page.locator("#race-terms")).to_have_text("Classic · time limit 5 min")
    bob.locator("#lobby button", has_text="Leave").click()  # a seat is free again: Ada invites again
    expect(ada.locator("#share-link")).to_have_value(link)


def test_the_result_comes_into_view_on_a_phone(server_url: str, pages: Any) -> None:
    ada = pages.new()
    bea = pages.new(width=390, height=844)
    link = create_race(ada, server_url, "Ada", deal="12345")
    join(bea, server_url, link, "Bea")
    start(ada, bea)
    bea.select_option("#size", "A+++")  # big cards: the race is taller than the phone
    turn(bea)
    finish(bea)
    expect(bea.locator(".match-panel [role=status]")).to_contain_text("Your game is over")
    bea.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")  # down at the board
    assert bea.evaluate("window.scrollY") > 0
    expect(bea.locator("#result-h")).not_to_be_in_viewport()
    finish(ada)
    expect(bea.locator("#result-h")).to_have_text("You won!")  # the same 72 left, Bea ended first
    expect(bea.locator("#result-h")).to_be_in_viewport()
    expect(bea.locator("#result-h")).to_be_focused()  # a screen reader says who won


def test_the_replay_of_a_race_not_finished_yet_says_so(server_url: str, pages: Any) -> None:
    ada, eve = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada")
    eve.goto(link.replace("/m/", "/r/"))
    expect(eve.locator("[role=alert] .big")).to_have_text(
        "This race is not finished yet: its replay opens once it has a result."
    )
    eve.locator("[role=alert] a", has_text="Watch this race").click()
    expect(eve.locator(".spec-col")).to_have_count(1)
    # Chromium logs the replay endpoint's 409 itself; that one is expected here.
    pages.errors[:] = [e for e in pages.errors if "status of 409 (Conflict)" not in e]


def test_a_keyboard_player_keeps_the_focus_from_ready_to_the_end(server_url: str, pages: Any) -> None:
    """Keys only: a friend's name typed by the link, Enter, and the focus is on "I'm ready";
    "I'm ready" (gone once pressed) hands the focus to the line that says the page
    waits, the start puts it on the board's first pile, and Finish to the line that says the game
    is over; each time it fell to the page's body, and the player tabbed again from the top."""
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada")
    bea.goto(link)  # a friend by the link: the page asks their name first
    expect(bea.locator("#name")).to_be_focused()
    bea.keyboard.type("Bea")
    bea.keyboard.press("Enter")
    expect(bea.locator("#ready")).to_be_focused()
    ada.focus("#ready")
    ada.keyboard.press("Enter")
    expect(ada.locator("#ready-wait")).to_be_focused()
    bea.keyboard.press("Enter")
    for page in (ada, bea):
        expect(page.locator(f'{BOARD} .pile[data-spot="A1"]')).to_be_focused()
    ada.keyboard.press("ArrowRight")
    expect(ada.locator(f'{BOARD} .pile[data-spot="A2"]')).to_be_focused()
    ada.keyboard.press("t")
    wait_moves(ada, 1)
    ada.focus("#finish")
    ada.keyboard.press("Enter")
    expect(ada.locator("#finish")).to_have_attribute("data-i18n", "finish_confirm")
    ada.keyboard.press("Enter")
    expect(ada.locator("#my-over")).to_be_focused()
    expect(ada.locator("#my-over")).to_contain_text("Your game is over with 72 cards left.")


REPLAY_CONTROLS = ("#first", "#prev", "#play", "#next", "#last", "#step-range")


def finished_race(pages: Any, url: str, ada_turns: int) -> tuple[Any, str]:
    """Ada and Bea raced (Ada turned the stock ``ada_turns`` times, Bea never moved): Ada's page at the result, and the code."""
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, url, "Ada", deal="5")
    join(bea, url, link, "Bea")
    start(ada, bea)
    for _ in range(ada_turns):
        turn(ada)
    for racer in (ada, bea):
        finish(racer)
    expect(ada.locator("#result")).to_be_visible()
    return ada, link.rsplit("/", 1)[1]


def test_a_replay_of_no_moves_offers_no_step_and_the_ends_offer_no_way_past_them(
    server_url: str, pages: Any
) -> None:
    ada, _ = finished_race(pages, server_url, 0)
    ada.click("#watch-replay")
    expect(ada.locator("#step-counter")).to_have_text("Step 0 of 0")
    for control in REPLAY_CONTROLS:
        expect(ada.locator(control)).to_be_disabled()

    ada, _ = finished_race(pages, server_url, 2)
    ada.click("#watch-replay")
    expect(ada.locator("#step-counter")).to_have_text("Step 0 of 2")
    for control, off in zip(REPLAY_CONTROLS, (True, True, False, False, False, False), strict=True):
        expect(ada.locator(control)).to_be_disabled() if off else expect(ada.locator(control)).to_be_enabled()
    # a keyboard player steps to the end with Next: it goes out of use there, and the focus stays on the controls
    ada.focus("#next")
    ada.keyboard.press("Enter")
    expect(ada.locator("#step-counter")).to_have_text("Step 1 of 2")
    ada.keyboard.press("Enter")
    expect(ada.locator("#step-counter")).to_have_text("Step 2 of 2")
    for control in ("#next", "#last"):
        expect(ada.locator(control)).to_be_disabled()
    for control in ("#first", "#prev", "#play"):
        expect(ada.locator(control)).to_be_enabled()
    assert ada.evaluate("document.activeElement.id") == "play"
    ada.keyboard.press("Enter")  # Play at the end starts over from the deal
    expect(ada.locator("#step-counter")).to_have_text("Step 1 of 2")
    expect(ada.locator("#step-counter")).to_have_text("Step 2 of 2")
    expect(ada.locator("#play")).to_have_text("Play")
