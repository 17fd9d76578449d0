"""The docker-compose shape without Docker: deploy/nginx.conf, as shipped, in front of two server
processes sharing a throwaway Redis, and two Chromium pages racing through it.

Only what Docker would supply is filled in: nginx's main configuration around the
file (as the nginx image's own ``nginx.conf`` includes it), free local ports for
nginx and the servers instead of port 80 and ``server1``/``server2``, and the web
client's directory as the root the compose file mounts.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from server.http import CSP
from tests.conftest import RedisServer, free_port
from tests.processes import ServerProcess

from .conftest import ROOT, _missing
from .helpers import create_race, finish, join, play_any_move, start, turn

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
MIME_TYPES = Path("/etc/nginx/mime.types")


def compose_config(port: int, upstreams: tuple[int, int], work: Path) -> str:
    """deploy/nginx.conf with the addresses docker-compose gives it moved to local ones."""
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    moves = {
        "listen 80;": f"listen 127.0.0.1:{port};",
        "server server1:8765 ": f"server 127.0.0.1:{upstreams[0]} ",
        "server server2:8765 ": f"server 127.0.0.1:{upstreams[1]} ",
        "root /usr/share/nginx/html;": f"root {ROOT / 'client' / 'web'};",
    }
    for shipped, local in moves.items():
        assert site.count(shipped) == 1, f"deploy/nginx.conf no longer has {shipped!r} once"
        site = site.replace(shipped, local)
    (work / "site.conf").write_text(site)
    temp = "\n".join(
        f"    {kind}_temp_path {work / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # As root, nginx's workers would run as nobody, who cannot write the temp paths here.
    user = f"user {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""
    return f"""{user}
daemon off;
worker_processes 1;
pid {work / "nginx.pid"};
error_log {work / "error.log"} warn;
events {{ worker_connections 512; }}
http {{
    include {MIME_TYPES};
    default_type application/octet-stream;
    access_log off;
{temp}
    include {work / "site.conf"};
}}
"""


class Nginx:
    def __init__(self, work: Path, upstreams: tuple[int, int]) -> None:
        self.port = free_port()
        self.work = work
        (work / "nginx.conf").write_text(compose_config(self.port, upstreams, work))
        self.proc = subprocess.Popen(
            [NGINX, "-p", str(work), "-c", str(work / "nginx.conf"), "-e", str(work / "error.log")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        self.url = f"http://127.0.0.1:{self.port}/"

    def wait_healthy(self, timeout: float = 20) -> None:
        """Until /healthz answers 200 through nginx (both replicas are up before nginx starts)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}healthz", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = (self.work / "error.log").read_text(errors="replace")
                raise RuntimeError(f"nginx did not come up (exit {self.proc.poll()}):\n{log}")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


@pytest.fixture
def compose(redis_server: RedisServer, redis_url: str, tmp_path: Path) -> Iterator[Nginx]:
    """nginx with deploy/nginx.conf before two ``python -m server --redis`` processes."""
    if not (Path(NGINX).exists() and MIME_TYPES.exists()):
        _missing("nginx is not installed (Debian package nginx-light; .ci/run installs it)")
    replicas = [ServerProcess("--redis", redis_url).start() for _ in range(2)]
    nginx = Nginx(tmp_path, (replicas[0].port, replicas[1].port))
    try:
        nginx.wait_healthy()
        yield nginx
    finally:
        nginx.stop()
        for replica in replicas:
            replica.kill()


def test_a_race_through_the_shipped_nginx_config(compose: Nginx, pages: Any) -> None:
    ann, bob = pages.new(), pages.new()
    link = create_race(ann, compose.url, "Ann", deal="4242")
    assert link.startswith(compose.url + "m/")  # the address the page was opened at, port and all
    join(bob, compose.url, link, "Bob")
    start(ann, bob)
    turn(ann)
    if play_any_move(bob) is None:
        turn(bob)
    for page in (ann, bob):
        finish(page)
    for page in (ann, bob):
        expect(page.locator("#result")).to_be_visible()
        expect(page.locator("#result tbody tr")).to_have_count(2)
        expect(page.locator("#result")).to_contain_text("Ann")
        expect(page.locator("#result")).to_contain_text("Bob")


def test_nginx_serves_the_page_with_the_servers_headers_and_keeps_metrics(compose: Nginx) -> None:
    for path in ("", "js/app.js", "m/ABCDEFGH"):
        with urllib.request.urlopen(compose.url + path, timeout=5) as r:
            assert r.headers["Content-Security-Policy"] == CSP, path
            assert r.headers["X-Content-Type-Options"] == "nosniff", path
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(f"{compose.url}metrics", timeout=5)
    assert exc.value.code == 404
