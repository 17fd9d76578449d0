"""Phone layout, practice (hint, undo), languages, errors in words, how-to-play."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from server.engine import Game, Move
from server.http import CSP
from server.protocol import MAX_DEAL

from .helpers import BOARD, moves, play_any_move, start_practice, wait_moves

LANGS = ["en", "de", "it", "nl", "pt"]
ROOT = Path(__file__).resolve().parents[2]


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
    # every rule set the server plays has a name in every language (the list comes from the server)
    unnamed = page.evaluate(
        """async () => {
        const m = await import('/js/i18n.js');
        const { variants } = await (await fetch('/api/variants')).json();
        return variants.flatMap((v) => Object.keys(m.LANGS)
          .filter((l) => !m.STRINGS[l][`v_${v.name.replaceAll('-', '_')}`]).map((l) => `${l} ${v.name}`));
      }"""
    )
    assert unnamed == []
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


#: Keys whose number is a label, a position or a time, not a count of things a noun names ("Players: 3",
#: "Step 2 of 9", "10 min", "from waste 2"): they need no plural forms.
NOT_COUNTS = {
    "minutes", "counter", "step_of", "players_today", "n_players", "dist_bar", "chart_trend_pt",
    "from_waste_n", "chart_rating_pt", "aria_waste",
}  # fmt: skip


def test_every_count_takes_its_languages_plural(server_url: str, pages: Any) -> None:
    """One plural helper (Intl.PluralRules) picks each count's form: "1 restante", "1 rimasta", "1 card"."""
    page = pages.new()
    page.goto(server_url)
    said = page.evaluate(
        """async () => {
        const m = await import('/js/i18n.js');
        const out = {};
        for (const l of Object.keys(m.LANGS)) {
          m.setLang(l);
          out[l] = {};
          for (const k of Object.keys(m.STRINGS.en))
            out[l][k] = [0, 1, 2, 5].map((n) => m.t(k, { n, w: n, l: n, d: n, total: 24, m: n, k: 1 }));
        }
        m.setLang('en');
        return out;
      }"""
    )
    raw = page.evaluate("import('/js/i18n.js').then(m => m.STRINGS)")
    assert said["pt"]["live_left"][:3] == ["0 restantes", "1 restante", "2 restantes"]
    assert said["it"]["live_left"][:3] == ["0 rimaste", "1 rimasta", "2 rimaste"]
    assert said["en"]["my_game_over"][1] == "Your game is over with 1 card left. Waiting for your opponent…"
    assert said["en"]["aria_stock"][1] == "Stock, 1 card. Turn three."
    assert said["de"]["rating_games"][1] == "1 gewertetes Rennen · 1 gewonnen, 1 verloren, 1 unentschieden"
    assert said["pt"]["rating_games"][1].startswith("1 corrida classificada · 1 ganha, 1 perdida")
    assert said["pt"]["rating_games"][3].startswith("5 corridas classificadas · 5 ganhas")
    assert said["en"]["chart_trend"][1:3] == ["Your last score", "Your last 2 scores"]
    assert said["nl"]["live_moves"][1:3] == ["1 zet", "2 zetten"]
    counts = re.compile(r"\{(n|w|l|d)\}")
    for lang, strings in raw.items():
        for key, text in strings.items():
            outside = re.sub(r"\{\w+, plural,(?:[^{}]|\{[^{}]*\{[^{}]*\}[^{}]*\}|\{[^{}]*\})*\}", "", text)
            if key not in NOT_COUNTS:
                assert not counts.search(outside), f"{lang} {key}: a count without plural forms: {text!r}"
            if ", plural," in text:
                assert "other {" in text, f"{lang} {key}: no 'other' form"
            for form in said[lang][key]:
                assert ", plural," not in form and "{n}" not in form, f"{lang} {key} renders {form!r}"


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
    page.goto(f"{server_url}r/ACDEFGHJ")  # no race has that code: not "it has to be finished first"
    expect(page.locator("[role=alert] .big")).to_have_text("That race does not exist or has expired.")
    # An identity this server does not know (another server's, say) is replaced (and the player told).
    page.evaluate("localStorage.setItem('grip:player', 'nobody-here'); localStorage.setItem('grip:key', 'x')")
    start_practice(page, server_url, "3")
    assert page.evaluate("localStorage.getItem('grip:player')") != "nobody-here"
    # Chromium logs the replay endpoint's 404 itself; that one is expected here.
    pages.errors[:] = [e for e in pages.errors if not ("/r/ACDEFGHJ" in e and "404" in e)]


def test_a_deal_number_past_the_largest_is_stopped_by_the_form(server_url: str, pages: Any) -> None:
    """The field says what is wrong, rather than the server's refusal read as "please reload"."""
    page = pages.new()
    for path, field, submit in (("", "#race-deal", "#create"), ("practice", "#deal", "#start-practice")):
        page.goto(f"{server_url}{path}")
        page.fill(field, str(MAX_DEAL + 1))
        page.click(submit)
        assert page.eval_on_selector(field, "e => e.validity.rangeOverflow")
        expect(page).to_have_url(f"{server_url}{path}")  # nothing sent: no race, and no error shown
        page.fill(field, str(MAX_DEAL))
        assert page.eval_on_selector(field, "e => e.validity.valid")


def test_an_identity_the_server_lost_is_replaced_under_its_name_and_the_player_told(
    server_url: str, pages: Any
) -> None:
    """A store restored from an older copy (Redis rolled back) no longer knows the saved identity: ``bad_key``.

    The page made a new one without a word (a player wondering where their
    results went, with a fresh daily attempt), named "Player" unless a name
    had been typed on this browser.
    """
    page = pages.new()
    page.goto(server_url)
    expect(page.locator("body")).to_have_attribute(
        "data-conn", "online"
    )  # its own welcome came: it stores nothing more
    page.evaluate(
        "localStorage.setItem('grip:player', 'lost-in-a-rollback'); localStorage.setItem('grip:key', 'k');"
        "localStorage.setItem('grip:welcomed-name', 'Ada'); localStorage.removeItem('grip:name')"
    )
    page.reload()
    expect(page.locator("#toast")).to_have_text(re.compile("did not recognise your saved player identity"))
    assert page.evaluate("localStorage.getItem('grip:player')") != "lost-in-a-rollback"
    assert page.evaluate("localStorage.getItem('grip:welcomed-name')") == "Ada"  # as the new welcome says


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


def test_an_address_that_cannot_be_a_race_gets_a_page_with_a_way_home(server_url: str, pages: Any) -> None:
    page = pages.new()
    for path, says in [
        ("m/ZZZZZ", "There is no race with the code “ZZZZZ”"),
        ("w/ZZZZZ", "There is no race with the code “ZZZZZ”"),
        ("r/ab-cd", "There is no race with the code “ab-cd”"),
        ("nowhere/at/all", "There is nothing at this address."),
    ]:
        response = page.goto(server_url + path)
        assert response is not None and response.status == 404, path
        expect(page.locator("[role=alert] .big")).to_contain_text(says)
        expect(page.locator("header nav")).to_be_visible()  # the whole page, not a bare "not found"
        page.locator("[role=alert] a", has_text="Back to the start page").click()
        expect(page.locator("#race-form")).to_be_visible()
        expect(page).to_have_url(server_url)
    # Chromium logs each 404 page load itself: expected here, and only those.
    pages.errors[:] = [e for e in pages.errors if "404 (Not Found)" not in e]


def test_the_board_names_its_rows_and_columns_and_what_each_row_builds(server_url: str, pages: Any) -> None:
    page = pages.new()
    start_practice(page, server_url, "12345")
    expect(page.locator(f"{BOARD} .col-label")).to_have_text([str(c) for c in range(1, 9)])
    rows = page.locator(f"{BOARD} .row-label")
    expect(rows.locator(".rl-name")).to_have_text(["A", "B", "C"])
    builds = lambda: [  # noqa: E731
        rows.nth(i).locator(".rl-builds span").all_inner_texts() for i in range(3)
    ]
    assert builds() == [["2", "5", "8", "J"], ["3", "6", "9", "Q"], ["4", "7", "10", "K"]]
    expect(rows.nth(0)).to_have_attribute("title", "Row A builds 2, 5, 8, J")
    # each label sits at the left of its row, each number above its column (measured at one moment)
    boxes = page.evaluate(
        """() => {
        const box = (node) => { const r = node.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
        const one = (sel) => box(document.querySelector(`#my-board ${sel}`));
        const out = {};
        for (const row of "ABC") out[row] = [one(`.row-label[data-row="${row}"]`), one(`.pile[data-spot="${row}1"]`)];
        const numbers = document.querySelectorAll("#my-board .col-label");
        for (const c of [1, 8]) out[c] = [box(numbers[c - 1]), one(`.pile[data-spot="A${c}"]`)];
        return out;
      }"""
    )
    for row in "ABC":
        (_, top, right, _), (pile_left, pile_top, _, _) = boxes[row]
        assert right <= pile_left and abs(top - pile_top) < 1, (row, boxes[row])
    for c in ("1", "8"):
        (left, _, right, bottom), (pile_left, pile_top, pile_right, _) = boxes[c]
        assert bottom <= pile_top + 8 and abs((left + right) / 2 - (pile_left + pile_right) / 2) < 1, (
            c,
            boxes[c],
        )
    page.select_option("#lang", "de")  # the ranks in the language's own letters
    assert builds() == [["2", "5", "8", "B"], ["3", "6", "9", "D"], ["4", "7", "10", "K"]]
    expect(rows.nth(2)).to_have_attribute("title", "Reihe C baut 4, 7, 10, K auf")

    page.select_option("#lang", "en")
    page.goto(f"{server_url}practice")
    page.fill("#deal", "1")
    page.select_option("#pvariant", "single-deck")
    page.click("#start-practice")
    expect(page.locator(f"{BOARD} .col-label")).to_have_text(["1", "2", "3", "4"])


HINT_SENTENCE = re.compile(
    r"^Hint: (?:Move the (?P<card>\S+?)(?P<more> and the cards on it)? from (?P<src>[A-C]\d|the waste|waste \d)"
    r" onto the (?P<onto>\S+) at (?P<to>[A-C]\d)\."
    r"|Swap the piles at (?P<a>[A-C]\d) and (?P<b>[A-C]\d)\."
    r"|Turn the next cards from the stock\.)$"
)


def card_on_page(page: Any, selector: str) -> str:
    """A card as the page prints it: rank and suit symbol ("5♥")."""
    card = page.locator(selector)
    return str(card.locator(".cr").inner_text()) + str(card.locator(".cs").inner_text())


def test_the_hint_is_a_sentence_about_the_cards_on_the_board(server_url: str, pages: Any) -> None:
    page = pages.new()
    start_practice(page, server_url, "0")
    for step in range(4):
        page.click("#hint")
        hint = page.locator("#hint-text")
        expect(hint).to_have_text(re.compile(r"^Hint: [A-Z]"))
        text = hint.inner_text()
        m = HINT_SENTENCE.match(text)
        assert m, text
        if m["card"] and re.fullmatch(r"[A-C]\d", m["src"]):
            pile = f'{BOARD} .pile[data-spot="{m["src"]}"]'
            cards = [
                card_on_page(page, f"{pile} .card >> nth={i}")
                for i in range(page.locator(f"{pile} .card").count())
            ]
            assert m["card"] in cards, (text, cards)
            assert (cards[-1] != m["card"]) == bool(m["more"]), (text, cards)
        if m["onto"]:
            assert card_on_page(page, f'{BOARD} .pile[data-spot="{m["to"]}"] .card.top') == m["onto"], text
        # the same hint, in every language, names the same spots and leaves no placeholder behind
        spots = set(re.findall(r"\b[A-C]\d\b", text))
        for lang in ["de", "it", "nl", "pt"]:
            page.select_option("#lang", lang)
            other = page.locator("#hint-text").inner_text()
            assert other != text and "{" not in other and set(re.findall(r"\b[A-C]\d\b", other)) == spots, (
                other
            )
        page.select_option("#lang", "en")
        if step < 3:
            assert play_any_move(page) is not None
            expect(page.locator("#hint-text")).to_have_text("")  # the board changed: the hint is gone


def test_every_kind_of_move_reads_as_a_sentence_in_every_language(server_url: str, pages: Any) -> None:
    page = pages.new()
    page.goto(server_url)
    said = page.evaluate(
        """async () => {
        const i18n = await import('/js/i18n.js');
        const { moveSentence } = await import('/js/notation.js');
        const view = {
          grid: { A1: ['5H', '8H', 'JH'], A2: [], B1: ['3S', '6S'], C2: ['2H'], C3: ['TD'] },
          waste: [{ top: '7D', count: 4 }, { top: '5C', count: 1 }, { top: null, count: 0 }],
        };
        const moves = ['T', 'R', 'A1:0>C2', 'A1:2>C2', 'W>C3', 'W2>C2', 'B1:0>A2', 'A1~B1'];
        const out = {};
        for (const lang of Object.keys(i18n.LANGS)) {
          i18n.setLang(lang);
          out[lang] = moves.map((m) => moveSentence(m, view));
        }
        i18n.setLang('en');
        return out;
      }"""
    )
    assert said["en"] == [
        "Turn the next cards from the stock.",
        "Redeal: turn the waste over to make a new stock.",
        "Move the 5♥ and the cards on it from A1 onto the 2♥ at C2.",
        "Move the J♥ from A1 onto the 2♥ at C2.",
        "Move the 7♦ from the waste onto the 10♦ at C3.",
        "Move the 5♣ from waste 2 onto the 2♥ at C2.",
        "Move the 3♠ and the cards on it from B1 to the empty spot A2.",
        "Swap the piles at A1 and B1.",
    ]
    assert said["de"][3] == "Lege die B♥ von A1 auf die 2♥ in C2."  # Bube: the German letter
    for lang, sentences in said.items():
        assert len(set(sentences)) == len(sentences), lang
        for sentence, english in zip(sentences, said["en"], strict=True):
            assert "{" not in sentence and sentence.endswith("."), (lang, sentence)
            assert set(re.findall(r"[A-C]\d", sentence)) == set(re.findall(r"[A-C]\d", english)), (
                lang,
                sentence,
            )


MARKED_CARDS = """() => {
  const out = [];
  for (const pile of document.querySelectorAll('#my-board .pile')) {
    pile.querySelectorAll('.card').forEach((c, i) => c.classList.contains('movable') && out.push(`${pile.dataset.spot}:${i}`));
  }
  for (const w of document.querySelectorAll('#my-board .waste')) if (w.querySelector('.card.movable')) out.push(w.dataset.id);
  return out;
}"""


def playable_cards(game: Game) -> set[str]:
    """What "show playable cards" marks, from the server's own engine: every card a build moves,
    and the bottom card of every pile a swap brings home (RULES.md: home is the row's base rank)."""
    grid = game.player_view()["grid"]
    base = {"A": "2", "B": "3", "C": "4"}
    out: set[str] = set()
    for text in game.legal_texts():
        if m := re.fullmatch(r"([A-C]\d+):(\d+)>[A-C]\d+", text):
            out.add(f"{m[1]}:{m[2]}")
        elif m := re.fullmatch(r"(W\d?)>[A-C]\d+", text):
            out.add(m[1])
        elif m := re.fullmatch(r"([A-C]\d+)~([A-C]\d+)", text):
            for pile, spot in ((m[1], m[2]), (m[2], m[1])):
                if grid[pile][0][:-1] == base[spot[0]]:
                    out.add(f"{pile}:0")
    return out


def test_show_playable_cards_marks_the_cards_that_can_move(server_url: str, pages: Any) -> None:
    page = pages.new()
    start_practice(page, server_url, "0")
    game = Game.new("0", "classic")
    toggle = page.locator("#show-playable")
    expect(toggle).not_to_be_checked()  # optional: off until the player asks
    expect(page.locator(f"{BOARD} .card.movable")).to_have_count(0)
    toggle.check()
    expected = playable_cards(game)
    assert 0 < len(expected) < 24
    assert set(page.evaluate(MARKED_CARDS)) == expected
    # and a marked pile does light up a target when selected
    for spot in sorted({m.split(":")[0] for m in expected}):
        pile = page.locator(f'{BOARD} .pile[data-spot="{spot}"]')
        pile.click()
        assert page.locator(f"{BOARD} .pile.target").count() > 0, spot
        pile.click()
    for played in range(1, 4):  # the marks follow the board
        page.click(f"{BOARD} .stock")
        wait_moves(page, played)
        game.play(Move.parse("T"))
        assert set(page.evaluate(MARKED_CARDS)) == playable_cards(game)
    page.reload()  # the choice is kept
    expect(page.locator("#show-playable")).to_be_checked()
    expect(page.locator(f"{BOARD} .card.movable").first).to_be_visible()
    page.locator("#show-playable").uncheck()
    expect(page.locator(f"{BOARD} .card.movable")).to_have_count(0)


def test_every_screen_works_under_the_content_security_policy(server_url: str, pages: Any) -> None:
    """The policy is enforced (an injected inline script is blocked and reported), and the page's own
    screens break none of it: ``pages`` fails the test on any violation they report."""
    page = pages.new()
    response = page.goto(server_url)
    assert response is not None and response.headers["content-security-policy"] == CSP
    expect(page.locator("#app")).not_to_be_empty()
    with page.expect_console_message(lambda m: "Content Security Policy" in m.text):
        page.evaluate(
            "document.head.append(Object.assign(document.createElement('script'),"
            " {textContent: 'window.__injected = 1'}))"
        )
    page.wait_for_function("window.__csp.length > 0")
    assert page.evaluate("window.__injected") is None
    assert page.evaluate("window.__csp.splice(0)")[0].startswith("script-src-elem blocked inline")
    blocked = [e for e in pages.errors if "violates the following Content Security Policy" in e]
    assert len(blocked) == 1  # Chromium's console line for it, the one error this test asked for
    pages.errors.remove(blocked[0])
    start_practice(page, server_url, "4242")
    page.click("#hint")
    expect(page.locator("#hint-text")).to_have_text(re.compile(r"^Hint: "))
    assert play_any_move(page) is not None
    for path in ("rules", "live", "daily", "stats"):
        page.goto(f"{server_url}{path}")
        expect(page.locator("#app")).not_to_be_empty()


#: Each word of the result table's cells on one line (a word split across lines has two boxes).
WORDS_SPLIT = """() => {
  const out = [];
  for (const cell of document.querySelectorAll('#result tbody td')) {
    const text = cell.firstChild;
    if (!text || text.nodeType !== 3) continue;
    for (const m of text.data.matchAll(/\\S+/g)) {
      const r = document.createRange();
      r.setStart(text, m.index);
      r.setEnd(text, m.index + m[0].length);
      const lines = new Set([...r.getClientRects()].map((b) => Math.round(b.top)));
      if (lines.size > 1) out.push(m[0]);
    }
  }
  return out;
}"""


def test_the_result_table_on_a_phone_breaks_no_word(server_url: str, pages: Any) -> None:
    """At 360 px the result's cells wrap between words, in every language: "finished" showed as
    "finishe" over "d" (the cells could break anywhere, and the table squeezed their column)."""
    page = pages.new(width=360, height=740)
    start_practice(page, server_url, "5")
    page.click("#finish")
    page.click("#finish")
    expect(page.locator("#result tbody tr")).to_have_count(1)
    for lang in LANGS:
        page.select_option("#lang", lang)
        expect(page.locator("html")).to_have_attribute("lang", lang)
        expect(page.locator("#result tbody tr")).to_have_count(1)
        assert page.evaluate(WORDS_SPLIT) == [], lang
        assert page.evaluate("document.documentElement.scrollWidth") <= 360, lang


def test_the_portuguese_page_addresses_the_player_one_way() -> None:
    """The page says "você" ("o seu nome", "Desistiu"); the daily challenge, the statistics and some
    errors said "tu" ("a tua tentativa", "podes", "acaba"), two voices on one page."""
    pt = (ROOT / "client" / "web" / "js" / "i18n" / "pt.js").read_text(encoding="utf-8")
    tu = re.compile(r"\b(teu|tua|teus|tuas|podes|usaste|quiseres|abriste|desistas|acaba primeiro|joga uma)\b")
    assert not tu.findall(pt)
