"""The daily page: play the ranked attempt by clicks, find yourself on the leaderboard, practise
after it; a past day's seed checked against its commitment in the browser."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from server.app import App, Settings
from server.bus.memory import MemoryBus
from server.protocol import now_ms
from server.store.sqlite import SqliteStore

from .helpers import BOARD, create_race, finish, join, set_name, turn

DAY_MS = 86_400_000


def daily_bot(url: str, name: str, builds: int) -> int:
    """Another player's ranked daily over the raw protocol: turn, build from the waste up to
    ``builds`` times, finish. Their score."""
    from websockets.sync.client import connect

    with connect(url.replace("http", "ws", 1) + "ws") as ws:

        def until(kind: str) -> dict[str, Any]:
            while True:
                msg = json.loads(ws.recv(timeout=20))
                assert msg["type"] != "error", msg
                if msg["type"] == kind:
                    return msg  # type: ignore[no-any-return]

        ws.send(json.dumps({"type": "hello", "v": 1, "name": name}))
        until("welcome")
        ws.send(json.dumps({"type": "create", "daily": True, "seats": 1}))
        until("lobby")
        ws.send(json.dumps({"type": "ready"}))
        view = until("start")["view"]
        seq = 0
        while not view["over"] and (view["stock_count"] > 0 or builds > 0):
            plays = [m for m in view["legal"] if m.startswith("W>")]
            move = plays[0] if plays and builds > 0 else "T" if "T" in view["legal"] else None
            if move is None:
                break
            builds -= move != "T"
            seq += 1
            ws.send(json.dumps({"type": "move", "seq": seq, "move": move}))
            view = until("ack")["view"]
        ws.send(json.dumps({"type": "finish"}))
        return int(until("finished")["score"])


def play_daily_to_the_end(page: Any, turns: int = 3) -> int:
    """Click "Play today's daily", turn a few times, finish; the score on the result screen."""
    page.click("#daily-play")
    expect(page.locator(f"{BOARD} .pile")).to_have_count(24)
    expect(page.locator(f"{BOARD} button.stock")).to_be_enabled()
    # offered in ranked games too: it shows only what a click on each pile would (docs/daily.md)
    page.locator("#show-playable").check()
    expect(page.locator(f"{BOARD} .card.movable").first).to_be_visible()
    page.locator("#show-playable").uncheck()
    for _ in range(turns):
        turn(page)
    finish(page)
    expect(page.locator("#result")).to_be_visible()
    return int(page.locator("#result .score").first.inner_text())


def test_daily_ranked_attempt_leaderboard_then_practice(server_url: str, pages: Any, shot: Any) -> None:
    # a few other players first, so the board and its chart have something to show
    others: list[int] = []
    threads = [
        threading.Thread(target=lambda n=n, b=b: others.append(daily_bot(server_url, n, b)))
        for n, b in [("Ines", 6), ("Jon", 2), ("Kai", 0), ("Lea", 12)]
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(others) == 4
    page = pages.new()
    page.goto(server_url)
    page.fill("#name", "Dora")
    page.click("#nav-daily")
    expect(page.locator("#commitment")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
    expect(page.locator("#daily-status")).to_have_attribute("data-used", "false")
    expect(page.locator("#daily-play")).to_have_text("Play today's daily")
    expect(page.locator("#daily-race")).to_have_text("Race a friend on today's daily")

    score = play_daily_to_the_end(page)
    expect(page.locator(".daily-tag")).to_have_text("Daily challenge · ranked")
    expect(page.locator("#hint")).to_have_count(0)  # no hints in a ranked game
    expect(page.locator("#watch-replay")).to_have_count(0)  # the replay opens after the day

    page.click("#to-leaderboard")
    mine = page.locator("#today-board tr.me")
    expect(mine).to_have_count(1)
    expect(mine.locator("th")).to_contain_text("Dora")
    expect(mine.locator(".score")).to_have_text(str(score))
    expect(mine.locator(".time")).to_have_text(re.compile(r"^\d+:\d\d$"))
    # the attempt is used: the buttons offer practice, clearly unranked
    expect(page.locator("#daily-status")).to_have_attribute("data-used", "true")
    expect(page.locator("#daily-play")).to_have_text("Practise today's deal (unranked)")
    expect(page.locator("#daily-play")).to_have_attribute("data-ranked", "false")
    expect(page.locator("#daily-race")).to_contain_text("(unranked)")
    # one bar per score on the board; the player's own bar is marked
    scores = {int(s) for s in page.locator("#today-board tbody tr .score").all_inner_texts()}
    expect(page.locator("#today-panel svg.chart .bar")).to_have_count(len(scores))
    expect(page.locator("#today-panel svg.chart .bar.mine")).to_have_attribute("data-x", str(score))
    shot(page, "daily", full_page=True)

    page.set_viewport_size({"width": 360, "height": 740})
    assert page.evaluate("document.documentElement.scrollWidth") <= 360

    # practice on the same deal: unranked, with undo; no hint button, as the server gives no hints on
    # a daily deal while its day runs; the leaderboard is unchanged
    page.set_viewport_size({"width": 1200, "height": 860})
    page.click("#daily-play")
    expect(page.locator(f"{BOARD} .pile")).to_have_count(24)
    expect(page.locator(".daily-tag")).to_have_text("Daily challenge · practice (unranked)")
    expect(page.locator("#undo")).to_be_visible()
    expect(page.locator("#hint")).to_have_count(0)
    page.click("#nav-daily")
    expect(page.locator("#today-board tr.me")).to_have_count(1)
    expect(page.locator("#today-board tr.me .score")).to_have_text(str(score))


def test_the_daily_asks_a_name_before_the_game_when_none_is_saved(server_url: str, pages: Any) -> None:
    """Straight to the daily page, never on the start page: the name is asked there, as the start
    page asks it (the same field, kept for next time), and the leaderboard shows it, not "Player"."""
    page = pages.new()
    page.goto(f"{server_url}daily")
    name = page.locator("#daily-today #name")
    expect(name).to_have_value("")
    expect(page.locator("#daily-today label[for=name]")).to_have_text("Your name")
    page.click("#daily-play")  # nothing typed: no game yet, the field says why
    expect(name).to_be_focused()
    assert name.evaluate("(n) => n.validity.valueMissing") is True
    name.fill("   ")  # spaces only are no name, as in the start page's join form
    page.click("#daily-race")
    expect(name).to_be_focused()
    assert name.evaluate("(n) => n.validity.patternMismatch") is True
    expect(page).to_have_url(f"{server_url}daily")
    name.press_sequentially("Nia")
    score = play_daily_to_the_end(page, turns=1)
    page.click("#to-leaderboard")
    mine = page.locator("#today-board tr.me")
    expect(mine.locator("th a")).to_have_text("Nia")
    expect(mine.locator(".score")).to_have_text(str(score))
    expect(page.locator("#daily-today #name")).to_have_count(0)  # saved: not asked again
    page.goto(server_url)
    expect(page.locator("#name")).to_have_value("Nia")  # the start page's name, the same one


def test_verify_recomputes_sha256_in_the_browser(server_url: str, pages: Any) -> None:
    page = pages.new()
    page.goto(f"{server_url}daily")
    seed = hashlib.sha256(b"a known seed").hexdigest()
    commitment = hashlib.sha256(seed.encode()).hexdigest()
    got = page.evaluate(
        "([s, c]) => import('/js/daily.js').then(m => Promise.all([m.verifySeed(s, c), m.verifySeed(s + '0', c)]))",
        [seed, commitment],
    )
    assert got[0] == {"ok": True, "digest": commitment}
    assert got[1]["ok"] is False
    # the plain-JavaScript fallback (pages opened over plain http on a LAN have no crypto.subtle)
    texts = ["", "abc", "x" * 55, "y" * 56, "z" * 64, "ü€ seed", seed * 3]
    digests = page.evaluate(
        """texts => import('/js/sha256.js').then(m => texts.map(t => m.sha256Fallback(new TextEncoder().encode(t))))""",
        texts,
    )
    assert digests == [hashlib.sha256(t.encode()).hexdigest() for t in texts]


def test_how_to_check_speaks_of_what_a_player_has(server_url: str, pages: Any) -> None:
    """Today's page has no Verify button (nothing is revealed yet) and players have no server code:
    the text sends them to a past day's Verify button, or to any SHA-256 tool."""
    page = pages.new()
    page.goto(f"{server_url}daily")
    page.click(".how-link")
    how = page.locator("#how-verify")
    expect(how).to_be_focused()
    expect(page.locator("#verify")).to_have_count(0)
    expect(how).to_contain_text("Once a day is over, open it under Past days")
    expect(how).not_to_contain_text("python")
    expect(page.locator("#how-command")).to_have_text("printf '%s' SEED | sha256sum")


def test_unknown_future_day_reads_as_a_sentence(server_url: str, pages: Any) -> None:
    page = pages.new()
    page.goto(f"{server_url}daily/2999-01-01")
    expect(page.locator("[role=alert] .big")).to_have_text("That day's challenge has not begun yet.")


# ----------------------------------------------------------------------------- a day that ends


class ShiftedClock:
    """The server's clock: real time plus an offset the test moves forward."""

    def __init__(self) -> None:
        self.offset = 0

    def __call__(self) -> int:
        return now_ms() + self.offset


class ThreadServer:
    """An in-process App with an injected clock, on its own event loop in a thread (Playwright's
    sync API keeps the main thread's loop)."""

    def __init__(self, data: Path) -> None:
        self.clock = ShiftedClock()
        self.loop = asyncio.new_event_loop()
        settings = Settings(port=0, store_url=f"sqlite:///{data / 'grip.db'}", sweep_s=3600, par_budget_s=1.0)
        self.app = App(settings, SqliteStore(str(data / "grip.db")), MemoryBus(), clock=self.clock)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.app.start(), self.loop).result(20)
        self.url = f"http://127.0.0.1:{self.app.port}/"

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.app.shutdown(), self.loop).result(20)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def clocked(tmp_path: Path) -> Iterator[ThreadServer]:
    server = ThreadServer(tmp_path)
    yield server
    server.stop()


def test_past_day_reveals_seed_verifies_and_opens_replays(clocked: ThreadServer, pages: Any) -> None:
    page = pages.new()
    page.goto(f"{clocked.url}daily")
    commitment = page.locator("#commitment").inner_text()
    day = page.locator("#daily-h .day").inner_text()
    expect(page.locator("#no-days")).to_be_visible()
    page.fill("#name", "Pat")  # no name saved: the daily page asks it
    score = play_daily_to_the_end(page, turns=2)

    clocked.clock.offset = DAY_MS  # midnight has passed: the day is over
    page.click("#nav-daily")
    link = page.locator(f'#days a[data-day="{day}"]')
    expect(link).to_be_visible()
    link.click()
    expect(page.locator("#day-commitment")).to_have_text(commitment)
    seed = page.locator("#day-seed").inner_text()
    assert hashlib.sha256(seed.encode()).hexdigest() == commitment
    page.click("#verify")
    expect(page.locator("#verify-result")).to_have_attribute("data-ok", "true")
    expect(page.locator("#verify-result")).to_contain_text("Matches")
    expect(page.locator("#verify-result .hash")).to_have_text(commitment)
    # "How to check" gives a player's way to check it without the page: a command with this seed
    command = page.locator("#how-command").inner_text()
    assert seed in command
    if shutil.which("sha256sum"):
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True)
        assert done.stdout.split()[0] == commitment
    expect(page.locator("#day-board tr.me .score")).to_have_text(str(score))
    expect(page.locator("#day-par")).to_have_text(re.compile(r"^(—|\d+)$"))
    # the par is solved in the background: it shows once the server has it
    for _ in range(60):
        if re.fullmatch(r"\d+", page.locator("#day-par").inner_text()):
            break
        page.reload()
        expect(page.locator("#day-par")).to_be_visible()
    expect(page.locator("#day-par")).to_have_text(re.compile(r"^\d+$"))

    page.click("#day-board tr.me .replay-link")
    expect(page.locator(".replay .seed code")).to_have_text(seed)
    expect(page.locator("#step-counter")).to_have_text(re.compile(r"of 2$"))


def test_a_friend_who_joins_a_daily_race_is_told_it_is_the_ranked_daily(server_url: str, pages: Any) -> None:
    ada, bea = pages.new(), pages.new()
    ada.goto(server_url)
    ada.fill("#name", "Ada")
    ada.click("#nav-daily")
    ada.click("#daily-race")
    expect(ada.locator("#lobby")).to_be_visible()
    expect(ada.locator(".daily-tag")).to_have_text("Daily challenge · ranked")
    link = ada.input_value("#share-link")
    # Bea's name is kept in her browser, which joined a link at once: here that used her one ranked
    # attempt of the day before she saw whose race it was. A daily race cannot be watched, so the page
    # asks first, saying what a join may cost, and offers no Watch that would be refused.
    set_name(bea, server_url, "Bea")
    bea.goto(link)
    expect(bea.locator("#join-daily-note")).to_be_visible()
    expect(bea.locator("#join-daily-note")).to_contain_text("uses your one ranked attempt")
    expect(bea.locator("#join-watch")).to_be_hidden()
    expect(bea.locator("#name")).to_have_value("Bea")
    expect(ada.locator("#lobby li.free")).to_have_count(1)  # not seated: her attempt is still hers
    bea.click("#join")
    expect(bea.locator(".daily-tag")).to_have_text("Daily challenge · ranked")
    expect(ada.locator("#lobby li.free")).to_have_count(0)


def test_a_link_to_a_plain_race_still_joins_at_once_under_the_name_kept(server_url: str, pages: Any) -> None:
    """The look at the lobby before the seat (for the daily's sake) costs a name kept nothing."""
    ada, bea = pages.new(), pages.new()
    link = create_race(ada, server_url, "Ada")
    join(bea, server_url, link, "Bea")  # the name kept, the link opened: the seat, no form
    expect(bea.locator("#join-form")).to_have_count(0)
    expect(ada.locator("#lobby li.free")).to_have_count(0)
