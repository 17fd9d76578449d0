"""Ctrl-C ends ``python -m client play`` at once, run for real under a pseudo-terminal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.client.netkit import wait_until
from tests.client.ptyclient import PtyClient


@pytest.mark.parametrize("when", ["lobby", "race"])
async def test_ctrl_c_exits_at_once(url: str, tmp_path: Path, when: str) -> None:
    term = PtyClient("play", url, "--bot", "greedy", "--no-color", "--identity", str(tmp_path / "id.json"))
    try:
        await wait_until(lambda: "type ready" in term.text(), 30, "the match is created")
        if when == "race":
            os.write(term.fd, b"ready\r")
            await wait_until(lambda: "Legal (" in term.text(), 15, "the race starts")
        mark = len(term.output)
        os.write(term.fd, b"\x03")
        await wait_until(term.exited, 10, "the exit after Ctrl-C (no Enter typed)")
        assert term.status == 130, term.text()[mark:]
        assert "Traceback" not in term.text()
    finally:
        term.kill()
