"""What README.md says of the page, checked on the page."""

from __future__ import annotations

import re
from typing import Any

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
