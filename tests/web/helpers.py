"""Page actions for the browser tests: every one a real click on the page."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

BOARD = "#my-board"


def moves(page: Any, board: str = BOARD) -> int:
    return int(page.locator(board).get_attribute("data-moves") or 0)


def stock(page: Any, board: str = BOARD) -> int:
    return int(page.locator(board).get_attribute("data-stock") or 0)


def set_name(page: Any, url: str, name: str) -> None:
    page.goto(url)
    page.fill("#name", name)


def create_race(page: Any, url: str, name: str, *, deal: str = "", minutes: int = 10) -> str:
    """Create a race from the home page; the share link."""
    set_name(page, url, name)
    page.select_option("#time", str(minutes * 60))
    if deal:
        page.fill("#race-deal", deal)
    page.click("#create")
    expect(page.locator("#lobby")).to_be_visible()
    return str(page.input_value("#share-link"))


def join(page: Any, url: str, link: str, name: str) -> None:
    set_name(page, url, name)
    page.goto(link)
    expect(page.locator("#ready")).to_be_visible()


def start(*players: Any) -> None:
    for p in players:
        p.click("#ready")
    for p in players:
        expect(p.locator(f"{BOARD} .pile")).to_have_count(24)
        expect(p.locator(f"{BOARD} button.stock")).to_be_enabled()


def wait_moves(page: Any, n: int, board: str = BOARD) -> None:
    """Wait until ``n`` moves are on the board and the server has acknowledged them all.

    The page draws a move at once (protocol v2) and its ack comes later, with the cards the move
    turned face up: until then the board is the page's guess.
    """
    expect(page.locator(board)).to_have_attribute("data-moves", str(n))
    expect(page.locator(board)).not_to_have_attribute("data-waiting", "true")


def start_practice(page: Any, url: str, deal: str) -> None:
    page.goto(f"{url}practice")
    page.fill("#deal", deal)
    page.click("#start-practice")
    expect(page.locator(f"{BOARD} .pile")).to_have_count(24)
    expect(page.locator("#hint")).to_be_visible()


def turn(page: Any) -> None:
    """Click the stock and wait until the server's answer is on the board."""
    before = moves(page)
    page.click(f"{BOARD} .stock")
    wait_moves(page, before + 1)


def play_any_move(page: Any) -> str | None:
    """Select piles (then the waste) until one lights up targets; click the first target.

    Returns the source clicked, or None when no move but turning exists.
    """
    before = moves(page)
    sources = [f"{BOARD} .waste"] + [f'{BOARD} .pile[data-spot="{r}{c}"]' for r in "ABC" for c in range(1, 9)]
    for src in sources:
        loc = page.locator(src).first
        if loc.count() == 0 or not loc.is_enabled():
            continue
        loc.click()
        targets = page.locator(f"{BOARD} .pile.target")
        if targets.count() > 0:
            targets.first.click()
            choice = page.locator(f"{BOARD} .choice button.btn").first
            if choice.count() > 0 and choice.is_visible():
                choice.click()
            wait_moves(page, before + 1)
            return src
        if page.locator(f"{BOARD} .selected").count() > 0:
            loc.click()  # deselect
    return None


def play_waste(page: Any) -> bool:
    """Click the waste; if a pile lights up, click it (a real build from the waste)."""
    waste = page.locator(f"{BOARD} .waste.can").first
    if waste.count() == 0:
        return False
    before = moves(page)
    waste.click()
    target = page.locator(f"{BOARD} .pile.target").first
    target.click()
    wait_moves(page, before + 1)
    return True


def turn_to_the_end(page: Any, *, build: bool = False) -> None:
    """Turn until the stock is empty; with ``build``, play the waste wherever it fits on the way."""
    while stock(page) > 0 and page.locator(f"{BOARD} button.stock").is_enabled():
        turn(page)
        while build and play_waste(page):
            pass


def finish(page: Any) -> None:
    """End this player's game: the Finish button asks once more before it sends."""
    if page.locator(BOARD).get_attribute("data-over") == "true":
        return  # the game ended by itself (no moves left): the server ends it
    button = page.locator("#finish")
    button.click()
    expect(button).to_have_attribute("data-i18n", "finish_confirm")
    button.click()
