"""What README.md says of the page, checked on the page."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from .conftest import ROOT
from .helpers import create_race


def test_the_seat_token_is_kept_where_the_readme_says(server_url: str, pages: Any) -> None:
    said = re.search(r"resumes the seat \(token in `(\w+)`\)", (ROOT / "README.md").read_text())
    assert said is not None, "README.md no longer says where the seat token is kept"
    page = pages.new()
    code = create_race(page, server_url, "Ann").rsplit("/", 1)[1]
    kept = page.evaluate(
        """code => ["localStorage", "sessionStorage"].filter(s => window[s].getItem(`grip:seat:${code}`) !== null)""",
        code,
    )
    assert kept == [said[1]]


def test_the_share_link_in_the_same_browser_is_you_again(server_url: str, pages: Any) -> None:
    said = " ".join((ROOT / "README.md").read_text().split())
    assert "a tab of the same browser is you again, and takes your seat over" in said
    assert "open the link in a private window or another browser" in said
    ann = pages.new()
    link = create_race(ann, server_url, "Ann")
    tab = ann.context.new_page()
    tab.goto(link)
    expect(tab.locator("#lobby")).to_contain_text("Ann (you)")  # her seat, not the friend's
    expect(ann.locator("#play-here")).to_be_visible()  # the first tab was taken over
    friend = pages.new()  # another browser (a private window is one too: its own storage)
    friend.goto(link)
    expect(friend.locator("#join")).to_be_visible()  # the friend's seat, to join
