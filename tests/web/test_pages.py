"""Phone layout, practice (hint, undo), languages, errors in words, how-to-play."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from .helpers import BOARD, moves, play_any_move, wait_moves

LANGS = ["en", "de", "it", "nl", "pt"]


def start_practice(page: Any, url: str, deal: str) -> None:
    page.goto(f"{url}practice")
    page.fill("#deal", deal)
    page.click("#start-practice")
    expect(page.locator(f"{BOARD} .pile")).to_have_count(24)
    expect(page.locator("#hint")).to_be_visible()


def test_phone_fits_whole_grid_and_practice_has_hint_and_undo(server_url: str, pages: Any, shot: Any) -> None:
    page = pages.new(width=360, height=740)
    start_practice(page, server_url, "12345")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    grid = page.locator(f"{BOARD} .grid").bounding_box()
    assert grid is not None and grid["x"] >= 0 and grid["x"] + grid["width"] <= 360
    tableau = page.evaluate(
        f"(() => {{ const t = document.querySelector('{BOARD} .tableau'); return [t.scrollWidth, t.clientWidth]; }})()"
    )
    assert tableau[0] <= tableau[1], "the grid needs no sideways scroll at the default size"
    shot(page, "practice-phone", full_page=True)

    expect(page.locator("#undo")).to_be_disabled()  # nothing to take back yet
    page.click("#hint")
    expect(page.locator("#hint-text")).to_have_text(re.compile(r"^Hint: "))
    assert play_any_move(page) is not None
    page.click("#undo")
    wait_moves(page, 0)
    expect(page.locator("#undo")).to_be_disabled()

    # Bigger cards: the board scrolls sideways, the page does not.
    page.select_option("#size", "A+++")
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


def test_keyboard_and_drag_and_drop(server_url: str, pages: Any) -> None:
    page = pages.new()
    start_practice(page, server_url, "12345")
    # Drag the pile at B1 (a 2, whose home is row A) onto a pile it may swap with.
    src = page.locator(f'{BOARD} .pile[data-spot="B1"]')
    box = src.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 15)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 20, box["y"] + 5, steps=4)
    target = page.locator(f"{BOARD} .pile.target").first
    expect(target).to_be_visible()
    spot = target.get_attribute("data-spot")
    tbox = target.bounding_box()
    assert tbox is not None
    page.mouse.move(tbox["x"] + tbox["width"] / 2, tbox["y"] + 15, steps=6)
    page.mouse.up()
    wait_moves(page, 1)
    expect(page.locator(f'{BOARD} .pile[data-spot="{spot}"] .card').first).to_have_attribute(
        "data-card", "2H"
    )

    page.locator(f'{BOARD} .pile[data-spot="A1"]').focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator(f'{BOARD} .pile[data-spot="A2"]')).to_be_focused()
    page.keyboard.press("t")
    wait_moves(page, 2)
    # every control on the board has a label for screen readers
    labels = page.eval_on_selector_all(
        f"{BOARD} button", "bs => bs.map(b => b.getAttribute('aria-label') || '')"
    )
    assert labels and all(labels)


def test_every_language_is_complete(server_url: str, pages: Any) -> None:
    page = pages.new()
    page.goto(server_url)
    problems = page.evaluate(
        """async () => {
        const m = await import('/js/i18n.js');
        const en = Object.keys(m.STRINGS.en);
        const out = [];
        for (const l of Object.keys(m.LANGS)) {
          for (const k of en) if (!m.STRINGS[l][k]) out.push(`${l} lacks ${k}`);
          for (const k of Object.keys(m.STRINGS[l])) if (!(k in m.STRINGS.en)) out.push(`${l} has extra ${k}`);
        }
        return out;
      }"""
    )
    assert problems == []
    for lang in LANGS:
        for path in ["", "practice", "rules", "m/ACDEFGHJ", "daily", "stats"]:
            page.goto(server_url + path)
            page.select_option("#lang", lang)
            expect(page.locator("html")).to_have_attribute("lang", lang)
            if path.startswith("m/"):
                expect(page.locator("[role=alert] .big")).to_be_visible()
            ready = {"daily": "#today-panel h2", "stats": "#history-panel h2"}.get(path)
            if ready:
                expect(page.locator(ready)).to_be_visible()
            pairs = page.eval_on_selector_all(
                "[data-i18n]", "els => els.map(e => [e.dataset.i18n, e.textContent.trim()])"
            )
            assert len(pairs) > 5
            for key, text in pairs:
                assert text and text != key, f"{lang} {path or '/'}: {key!r} shows {text!r}"
            want = page.evaluate(f"import('/js/i18n.js').then(m => m.STRINGS['{lang}'].nav_rules)")
            expect(page.locator("#nav-rules")).to_have_text(want)


def test_card_letters_follow_the_language(server_url: str, pages: Any) -> None:
    page = pages.new()
    start_practice(page, server_url, "0")  # A1 is QD, B4 is JS, B5 is KD
    letters = {"en": "QJK", "de": "DBK", "it": "DFR", "nl": "VBH", "pt": "DVR"}
    for lang, word in letters.items():
        q, j, k = word[0], word[1], word[2]
        page.select_option("#lang", lang)
        expect(page.locator(f'{BOARD} .pile[data-spot="A1"] .cr')).to_have_text(q)
        expect(page.locator(f'{BOARD} .pile[data-spot="B4"] .cr')).to_have_text(j)
        expect(page.locator(f'{BOARD} .pile[data-spot="B5"] .cr')).to_have_text(k)
    page.select_option("#lang", "en")
    page.click(f"{BOARD} .stock")  # the protocol still says T, whatever the letters
    wait_moves(page, 1)
    assert moves(page) == 1


def test_server_errors_read_as_sentences(server_url: str, pages: Any) -> None:
    page = pages.new()
    page.goto(f"{server_url}m/ACDEFGHJ")
    expect(page.locator("[role=alert] .big")).to_have_text("That race does not exist or has expired.")
    expect(page.locator('[role=alert] a[href*="/w/"]')).to_have_count(0)  # nothing there to watch
    page.goto(f"{server_url}r/ACDEFGHJ")
    expect(page.locator("[role=alert] .big")).to_contain_text("no replay")
    # An identity this server does not know (another server's, say) is replaced without fuss.
    page.evaluate("localStorage.setItem('grip:player', 'nobody-here'); localStorage.setItem('grip:key', 'x')")
    start_practice(page, server_url, "3")
    assert page.evaluate("localStorage.getItem('grip:player')") != "nobody-here"
    # Chromium logs the replay endpoint's 404 itself; that one is expected here.
    pages.errors[:] = [e for e in pages.errors if not ("/r/ACDEFGHJ" in e and "404" in e)]


def test_how_to_play_is_reachable_from_every_screen(server_url: str, pages: Any, shot: Any) -> None:
    page = pages.new()
    for path in ["", "practice", "w/ACDEFGHJ", "m/ACDEFGHJ"]:
        page.goto(server_url + path)
        page.click("#nav-rules")
        expect(page.locator("#rules h1")).to_have_text("How to play Devil's Grip")
    expect(page.locator("#rules details.faq")).to_have_count(4)
    shot(page, "how-to-play")


def test_keyboard_focus_stays_on_the_board(server_url: str, pages: Any) -> None:
    page = pages.new()
    start_practice(page, server_url, "0")  # B8 may move onto C3 or swap with it
    pile = lambda spot: page.locator(f'{BOARD} .pile[data-spot="{spot}"]')  # noqa: E731
    pile("A1").focus()
    page.keyboard.press("Enter")
    expect(pile("A1")).to_have_class(re.compile(r"\bselected\b"))
    expect(pile("A1")).to_be_focused()
    page.keyboard.press("Escape")
    expect(pile("A1")).not_to_have_class(re.compile(r"\bselected\b"))
    expect(pile("A1")).to_be_focused()

    pile("B8").focus()
    page.keyboard.press("Space")
    expect(pile("B8")).to_be_focused()
    page.keyboard.press("ArrowDown")
    for _ in range(5):
        page.keyboard.press("ArrowLeft")
    expect(pile("C3")).to_be_focused()
    page.keyboard.press("Enter")  # two moves fit here: the dialog asks, its first choice focused
    first = page.locator(f"{BOARD} .choice button").first
    expect(first).to_have_text("Move (B8:0>C3)")
    expect(first).to_be_focused()
    page.keyboard.press("Enter")
    wait_moves(page, 1)
    expect(pile("C3")).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(pile("B3")).to_be_focused()
