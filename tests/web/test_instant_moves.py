"""Instant moves (protocol v2): the page plays each move on its own rules engine before the server answers.

The page reaches the server through a latency proxy (tests/latency_proxy.py: 75 ms each way, and a
hold that keeps the server's answers back while a test looks at the page), so what the player sees
while an answer is on its way is there to be seen. Nothing of the server is mocked: a refused move
is one the server really refuses, a resync one the server's check really asks for.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from server.engine import Game
from tests.latency_proxy import LatencyProxy

from .helpers import BOARD, create_race, join, moves, start, start_practice, stock, turn, wait_moves

CARD = re.compile(r"^[2-9TJQKA][SHDC]$")

#: Click `selector` and read the board in the same task, before anything else can happen (no
#: answer from the server can come in between); then wait for the frame that shows it.
CLICK_AND_LOOK = """async (selector) => {
  const board = document.querySelector("#my-board");
  const t0 = performance.now();
  document.querySelector(selector).click();
  const top = board.querySelector(".waste .card");
  const drawn = { moves: board.dataset.moves, stock: board.dataset.stock, top: top && top.dataset.card };
  await new Promise((painted) => requestAnimationFrame(() => setTimeout(painted)));
  return { ...drawn, ms: performance.now() - t0, waiting: window.__grip.screen.state.waiting };
}"""

#: Every frame the page receives, kept in `window.__frames` (installed before the page's scripts).
RECORD_FRAMES = """(() => {
  const frames = (window.__frames = []);
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => frames.push(JSON.parse(e.data)));
    }
  };
})();"""


@pytest.fixture
def proxy(server_url: str) -> Iterator[LatencyProxy]:
    where = urlsplit(server_url)
    assert where.hostname is not None and where.port is not None
    with LatencyProxy(where.hostname, where.port, one_way_s=0.075) as p:
        yield p


@pytest.fixture
def via(proxy: LatencyProxy) -> str:
    """The server's URL through the proxy (150 ms round trip)."""
    return f"http://127.0.0.1:{proxy.port}/"


def cards_of(page: Any, board: str) -> dict[str, Any]:
    """What a board shows: each pile's cards, each waste's top and count, the stock's count."""
    return dict(
        page.evaluate(
            """(board) => {
              const root = document.querySelector(board);
              const piles = {};
              for (const p of root.querySelectorAll(".pile")) piles[p.dataset.spot] = [...p.querySelectorAll(".card")].map((c) => c.dataset.card);
              const wastes = [...root.querySelectorAll(".waste")].map((w) => [w.querySelector(".card")?.dataset.card ?? null, w.querySelector(".waste-count").textContent]);
              return { piles, wastes, stock: root.dataset.stock, moves: root.dataset.moves };
            }""",
            board,
        )
    )


def test_a_move_is_drawn_at_once_face_down_then_revealed_by_its_ack(
    via: str, proxy: LatencyProxy, pages: Any
) -> None:
    page = pages.new()
    start_practice(page, via, "0")
    proxy.hold()  # the server's answer to the move stays in the proxy
    drawn = page.evaluate(CLICK_AND_LOOK, f"{BOARD} button.stock")
    server = Game.new("0", "classic")
    server.play("T")
    assert drawn["moves"] == "1" and drawn["stock"] == str(server.player_view()["stock_count"])
    assert drawn["top"] == "??" and drawn["waiting"]  # the turned card is the server's to reveal
    expect(page.locator(f"{BOARD} .waste .card.back")).to_have_count(1)
    # the page's engine offers the moves on the new board: a pile's targets light up at once
    move = next(m for m in server.legal_texts() if ":" in m)  # a build from a pile, e.g. A1:0>B2
    page.click(f'{BOARD} .pile[data-spot="{move[:2]}"]')
    expect(page.locator(f'{BOARD} .pile[data-spot="{move[-2:]}"]')).to_have_class(re.compile(r"\btarget\b"))
    assert page.evaluate("window.__grip.screen.state.waiting")  # and still no answer from the server
    proxy.release()
    wait_moves(page, 1)
    expect(page.locator(f"{BOARD} .waste .card.back")).to_have_count(0)
    top = page.locator(f"{BOARD} .waste .card").get_attribute("data-card")
    assert top == server.player_view()["waste"][0]["top"]
    assert page.evaluate("window.__grip.screen.state.divergences") == 0


def test_a_move_the_server_refuses_is_rolled_back_with_a_message(
    via: str, proxy: LatencyProxy, pages: Any
) -> None:
    """Finish, then a move before the server's answer: the move is drawn, then refused (the game has
    ended), and the board goes back to the server's; the message is in the page's language."""
    page = pages.new(locale="de-DE")
    start_practice(page, via, "0")
    before = cards_of(page, BOARD)
    proxy.hold()
    page.click("#finish")
    page.click("#finish")  # confirmed: sent
    drawn = page.evaluate(CLICK_AND_LOOK, f"{BOARD} button.stock")  # the game has not ended here yet
    assert drawn["moves"] == "1"
    message = page.evaluate(
        "async () => { const { t, errorText } = await import('/js/i18n.js'); return `${errorText('wrong_phase')} ${t('board_restored')}`; }"
    )
    assert "Server" in message  # German: "... Dein Brett zeigt wieder den Stand des Servers."
    pages.allowed_toasts.add(message)
    proxy.release()
    expect(page.locator("#toast")).to_have_text(message)
    expect(page.locator("#result")).to_be_visible()
    wait_moves(page, 0)
    assert cards_of(page, BOARD) == before


def test_a_check_that_disagrees_resyncs_the_board_from_the_server(via: str, pages: Any) -> None:
    """The page's engine made to go wrong (A1 shows another card than the server's): the next ack's
    check disagrees, the page resumes, and the snapshot puts the server's board back."""
    page = pages.new()
    start_practice(page, via, "0")
    real = page.locator(f'{BOARD} .pile[data-spot="A1"] .card').get_attribute("data-card")
    page.evaluate(
        """() => { const s = window.__grip.screen.state; const game = s.shown[s.seat];
                   game._piles[0][0] = game._piles[1][0]; }"""
    )
    page.click(f"{BOARD} button.stock")  # drawn on the wrong board
    expect(page.locator(f'{BOARD} .pile[data-spot="A1"] .card')).not_to_have_attribute(
        "data-card", real or ""
    )
    expect(page.locator(f'{BOARD} .pile[data-spot="A1"] .card')).to_have_attribute("data-card", real or "")
    wait_moves(page, 1)
    assert page.evaluate("window.__grip.screen.state.divergences") == 1
    server = Game.new("0", "classic")
    server.play("T")
    assert (
        page.locator(f"{BOARD} .waste .card").get_attribute("data-card")
        == server.player_view()["waste"][0]["top"]
    )
    page.click(f"{BOARD} button.stock")  # and play goes on
    wait_moves(page, 2)


def test_moves_waiting_for_acks_survive_a_dropped_connection_once_each(
    via: str, proxy: LatencyProxy, pages: Any
) -> None:
    page = pages.new()
    start_practice(page, via, "0")
    proxy.hold()
    for n in (1, 2):
        assert page.evaluate(CLICK_AND_LOOK, f"{BOARD} button.stock")["moves"] == str(n)
    page.evaluate("window.__grip.net.drop()")  # the acks are lost with the line
    proxy.release()
    expect(page.locator("#conn")).to_be_visible()
    expect(page.locator("#conn")).to_be_hidden()
    wait_moves(page, 2)
    page.reload()  # the server's own count: neither lost nor played twice
    wait_moves(page, 2)
    server = Game.new("0", "classic")
    server.play("T")
    server.play("T")
    assert page.locator(BOARD).get_attribute("data-stock") == str(server.player_view()["stock_count"])


def test_spectators_rebuild_the_boards_from_moves(via: str, pages: Any) -> None:
    ada, bea = pages.new(), pages.new()
    link = re.sub(r"^http://[^/]+/", via, create_race(ada, via, "Ada", deal="7"))  # through the proxy too
    join(bea, via, link, "Bea")
    start(ada, bea)
    eve = pages.new()
    eve.add_init_script(RECORD_FRAMES)
    eve.goto(link.replace("/m/", "/w/"))
    expect(eve.locator(".spec-board")).to_have_count(2)
    for _ in range(2):
        turn(ada)  # drawn ahead of Bea: held back from spectators
    expect(eve.locator('.spec-col[data-seat="0"] .p-held')).to_be_visible()
    while stock(bea) > stock(ada):
        turn(bea)  # Bea draws as far: Ada's moves come through
    spec = '.spec-board[data-seat="0"]'
    wait_moves(eve, moves(ada), spec)
    assert cards_of(eve, spec) == cards_of(ada, BOARD)
    frames = [f for f in eve.evaluate("window.__frames") if f["type"] == "board"]
    assert frames and all("view" not in f and isinstance(f["check"], int) for f in frames)
    assert eve.evaluate("window.__grip.screen.state.divergences") == 0
