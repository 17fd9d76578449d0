"""``python -m client play --practice`` at a real (pseudo-)terminal 120 columns wide: one prompt, and
lines that fit."""

from __future__ import annotations

import os
import re
from pathlib import Path

from client.terminal import HELP
from tests.client.netkit import wait_until
from tests.client.ptyclient import PtyClient

#: A prompt drawn twice: "> " and, after nothing but terminal control sequences, "> " again.
DOUBLED_PROMPT = re.compile(r"> (?:\x1b\[[0-9;?]*[A-Za-z])*> ")
CONTROL = re.compile(r"\x1b(?:\[[0-9;?]*[A-Za-z]|[78])")


async def test_one_prompt_and_no_line_wider_than_the_terminal(url: str, tmp_path: Path) -> None:
    term = PtyClient(
        "play", url, "--practice", "--no-color", "--identity", str(tmp_path / "id.json"), columns=120
    )
    try:
        await wait_until(lambda: "Legal (" in term.text(), 30, "the practice game starts")
        for typed, shown in (
            (b"help\r", HELP.split(" - ")[0]),
            (b"T\r", "played T"),
            (b"help\r", "ready finish"),
        ):
            mark = len(term.text())
            os.write(term.fd, typed)
            await wait_until(
                lambda shown=shown, mark=mark: shown in term.text()[mark:], 10, f"{typed!r} answered"
            )
        await wait_until(lambda: term.text().endswith("> "), 5, "the prompt for the next line")
        text = term.text()
        assert not DOUBLED_PROMPT.search(text), text[-400:]
        screen = CONTROL.sub("", text.rsplit("\x1b[2J", 1)[-1])
        assert "Legal (" in screen
        widths = [len(line) for line in screen.split("\r\n")]
        assert max(widths) <= 120, screen
    finally:
        term.kill()
