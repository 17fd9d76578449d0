"""Browser tests: the real server in a subprocess, Debian's Chromium driven by Playwright.

No downloaded browser: Playwright launches ``/usr/bin/chromium`` (or ``$CHROMIUM``)
through ``executable_path``. Without it the tests skip, except under CI=true,
where they fail. Every page's console errors and uncaught exceptions are
collected, and a test fails if any occurred; so are the page's Content-Security-Policy
violations (``securitypolicyviolation`` events).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
IN_CI = os.environ.get("CI") == "true"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 15_000
#: Before any of the page's scripts: every CSP violation the page reports, kept for ``Pages.close``.
WATCH_CSP = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__csp.push(`${e.effectiveDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`));
"""


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


@contextlib.contextmanager
def serving(data: Path) -> Iterator[str]:
    """``python -m server --port 0 --data DATA`` in a subprocess; its URL from the line it prints."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "--port", "0", "--data", str(data), "--log", "WARNING"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    found: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            m = re.search(r"listening on (http://\S+/)", line)
            if m and not found:
                found.append(m.group(1))
                seen.set()
            elif not found:
                found_lines.append(line)
        seen.set()

    found_lines: list[str] = []
    threading.Thread(target=read, daemon=True).start()
    if not seen.wait(20) or not found:
        proc.kill()
        raise RuntimeError("server did not start:\n" + "".join(found_lines))
    try:
        yield found[0]
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server every browser test shares, on a data directory of its own."""
    with serving(tmp_path_factory.mktemp("webdata")) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        _missing(f"Chromium not found at {CHROMIUM} (Debian package 'chromium'; .ci/run installs it)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright for Python is not installed (pip install -e '.[test]')")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield b
        b.close()


class Pages:
    """Browser contexts for one test, each page watched for console errors."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.contexts: list[Any] = []
        self.errors: list[str] = []
        self.pages: list[Any] = []
        self.allowed_toasts: set[str] = set()

    def new(
        self, *, width: int = 1200, height: int = 860, locale: str = "en-US", bypass_csp: bool = False
    ) -> Any:
        context = self.browser.new_context(
            viewport={"width": width, "height": height}, locale=locale, bypass_csp=bypass_csp
        )
        context.set_default_timeout(TIMEOUT_MS)
        context.set_default_navigation_timeout(2 * TIMEOUT_MS)
        context.add_init_script(WATCH_CSP)
        self.contexts.append(context)
        page = context.new_page()
        self.pages.append(page)
        page.on("console", lambda m: self._console(page, m))
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        return page

    def _console(self, page: Any, message: Any) -> None:
        if message.type == "error" or (message.type == "warning" and "missing string" in message.text):
            self.errors.append(f"{message.type} on {page.url}: {message.text}")

    def close(self) -> None:
        for page in self.pages:
            if page.is_closed():
                continue
            try:
                shown = page.evaluate("window.__grip ? window.__grip.errors : []")
                violations = page.evaluate("window.__csp || []")
            except Exception:  # a page in the middle of navigating
                shown, violations = [], []
            self.errors += [f"error shown on {page.url}: {s}" for s in shown if s not in self.allowed_toasts]
            self.errors += [f"CSP violation on {page.url}: {v}" for v in violations]
        for c in self.contexts:
            c.close()


@pytest.fixture
def pages(browser: Any) -> Iterator[Pages]:
    ps = Pages(browser)
    yield ps
    ps.close()
    assert ps.errors == [], "console errors:\n" + "\n".join(ps.errors)


@pytest.fixture
def shot() -> Callable[[Any, str], None]:
    """Save a screenshot under docs/screenshots/ (the README shows them)."""
    SHOTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str, full_page: bool = False) -> None:
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page, animations="disabled")

    return take
