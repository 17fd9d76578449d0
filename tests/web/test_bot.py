"""Race a bot from the home page: the server seats it, it gets ready and plays like a person."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from .helpers import BOARD, set_name, turn


def test_race_a_bot(server_url: str, pages: Any) -> None:
    page = pages.new()
    set_name(page, server_url, "Ada")
    expect(page.locator("#opponent option")).to_have_text(
        ["A friend (send them a link)", "Greedy bot", "Lookahead bot (plans ahead)"]
    )
    page.select_option("#opponent", "greedy")
    page.click("#create")
    expect(page.locator("#lobby h2")).to_have_text("Your opponent is a bot")
    expect(page.locator("#share-link")).to_have_count(0)  # no link to send anyone
    expect(page.locator("#lobby .seats li")).to_have_count(2)
    expect(page.locator("#lobby .seats")).to_contain_text("Greedy bot")

    page.click("#ready")
    expect(page.locator(f"{BOARD} .pile")).to_have_count(24)
    expect(page.locator(".progress-box h3")).to_have_text("Opponent: Greedy bot")
    expect(page.locator(".progress-box .p-moves")).not_to_have_text("0")  # the bot plays
    turn(page)
