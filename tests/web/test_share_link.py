"""``--host 0.0.0.0`` and a page opened on this machine: the links to share name the machine's network
address, and a friend's browser gets into the race by it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from server import reach
from tests.processes import ServerProcess

from .helpers import create_race, join


@pytest.fixture
def on_every_interface(tmp_path: Path) -> Iterator[ServerProcess]:
    server = ServerProcess("--host", "0.0.0.0", "--data", str(tmp_path)).start()
    yield server
    server.kill()


def test_share_links_name_an_address_a_friend_can_open(on_every_interface: ServerProcess, pages: Any) -> None:
    network = reach.lan_address()
    if network is None:
        pytest.skip("this machine has no network address to hand out")
    port = on_every_interface.port
    ann, bob = pages.new(), pages.new()
    link = create_race(ann, f"http://127.0.0.1:{port}/", "Ann")  # opened the way the host would
    assert link.startswith(f"http://{network}:{port}/m/"), link
    assert ann.input_value("#watch-link").startswith(f"http://{network}:{port}/w/")
    join(bob, f"http://{network}:{port}/", link, "Bob")  # the friend: that address only
    expect(ann.locator("#lobby")).to_contain_text("Bob")
