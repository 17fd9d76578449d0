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


def screens(text: str) -> list[str]:
    """Each screen the client drew (it clears the terminal before each), without control sequences."""
    return [CONTROL.sub("", screen) for screen in text.split("\x1b[2J")[1:]]


async def test_practice_never_says_get_ready_and_a_race_says_it_only_while_counting_down(
    url: str, tmp_path: Path
) -> None:
    """Practice starts at once, and says it is practice: no "get ready" (it was drawn twice, over the
    board's first screen too), no countdown in its header.
    A race says it on the countdown's screens only, never on one whose race is playing."""
    ident = str(tmp_path / "id.json")
    practice = PtyClient("play", url, "--practice", "--no-color", "--identity", ident, columns=120)
    try:
        await wait_until(lambda: "practice, with hint and undo" in practice.text(), 30, "practice starts")
        drawn = screens(practice.text())
        assert not [s for s in drawn if "get ready" in s]
        # nor any other word of a race: "[countdown]" headed two screens, under "Devil's Grip race",
        # and the lobby's screen listed the lone player as "not ready"
        headers = [s.splitlines()[0] for s in drawn]
        assert all(h.startswith("Devil's Grip practice  match ") for h in headers), headers
        assert not [h for h in headers if "countdown" in h or "lobby" in h]
        assert not [s for s in drawn if "not ready" in s]
    finally:
        practice.kill()
    race = PtyClient("play", url, "--bot", "greedy", "--no-color", "--identity", ident, columns=120)
    try:
        await wait_until(lambda: "type ready" in race.text(), 30, "the race is created")
        os.write(race.fd, b"ready\r")
        await wait_until(lambda: "go!" in race.text(), 30, "the race starts")
        said = [s for s in screens(race.text()) if "get ready" in s]
        assert said, "the countdown is announced"
        assert all("[countdown]" in s.splitlines()[0] for s in said), said[-1]
    finally:
        race.kill()
