"""Click to paint in the web page: protocol v2's instant moves against the v1 page that waited for the server.

    .venv/bin/python bench/click_to_paint.py --clicks 72

In headless Chromium (Debian's, as the browser tests use), a practice game
is played by clicking the stock (a turn: the move whose cards come from the
server) ``--clicks`` times, a new game whenever the stock runs out. Each
click is timed in the page with ``performance.now()``: from just before the
click to the first frame after the board shows the move (a
``MutationObserver`` on the board's move count, then ``requestAnimationFrame``
and a task after it, so the frame has been produced). The next click waits
until the server has answered the last one, so every click starts from the
same state.

The page reaches its server through tests/latency_proxy.py, which adds
``--rtt-ms`` of round trip (half each way). The baseline, in the same run: the
page as it was before protocol v2 (``--v1-ref``, the last commit whose page
spoke v1 and drew each move from the server's ack), served by that commit's
own server from a ``git archive`` of it, with the same proxy; and that page
again without added delay, as the issue measured it (77 ms median).
Printed: p50, p90, p95 and max per page, and the ratios.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.latency_proxy import LatencyProxy  # noqa: E402
from tests.web.conftest import CHROMIUM, LAUNCH_ARGS  # noqa: E402

#: The last commit whose page spoke protocol v1 (its server speaks both).
V1_REF = "13e5476"
LISTENING = re.compile(r"listening on http://[\d.]+:(\d+)/")

#: One click on the stock, timed in the page: click -> the first frame produced after the board shows it.
CLICK = """async () => {
  const board = document.querySelector("#my-board");
  const before = board.dataset.moves;
  const changed = new Promise((shown) => {
    const watch = new MutationObserver(() => {
      if (board.dataset.moves !== before) { watch.disconnect(); shown(); }
    });
    watch.observe(board, { attributes: true, attributeFilter: ["data-moves"] });
  });
  const t0 = performance.now();
  board.querySelector("button.stock").click();
  await changed;
  await new Promise((painted) => requestAnimationFrame(() => setTimeout(painted)));
  return performance.now() - t0;
}"""
#: The server has answered every move (v1: the board is not busy; v2: no move waits for its ack).
SETTLED = """() => {
  const board = document.querySelector("#my-board");
  return board && !board.hidden && !board.classList.contains("busy") && board.dataset.waiting !== "true"
    && board.querySelectorAll(".pile").length === 24;
}"""
CAN_TURN = "() => !document.querySelector('#my-board button.stock').disabled"


@contextmanager
def server(tree: Path) -> Iterator[int]:
    """``python -m server`` of the code in ``tree`` (embedded store in a temporary directory); its port."""
    with tempfile.TemporaryDirectory() as data, tempfile.NamedTemporaryFile("w+b") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "server", "--port", "0", "--data", data, "--log", "WARNING"],
            cwd=tree,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 30
            while not (m := LISTENING.search(Path(log.name).read_text(errors="replace"))):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"server in {tree} did not start:\n{Path(log.name).read_text()}")
                time.sleep(0.05)
            yield int(m.group(1))
        finally:
            proc.terminate()
            proc.wait(10)


@contextmanager
def old_tree(ref: str) -> Iterator[Path]:
    """The repository as it was at ``ref``, in a temporary directory."""
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        yield Path(tmp)


def clicks_on(browser: Any, port: int, rtt_ms: float, clicks: int) -> list[float]:
    """Turn ``clicks`` times in practice games of the page on ``port``, through the proxy; each click's ms."""
    out: list[float] = []
    with LatencyProxy("127.0.0.1", port, one_way_s=rtt_ms / 2000) as proxy:
        page = browser.new_page(
            bypass_csp=True
        )  # wait_for_function's predicates are eval'd: the CSP forbids it
        url = f"http://127.0.0.1:{proxy.port}/"
        page.goto(url)
        page.evaluate("localStorage.setItem('grip:name', 'Bench')")
        while len(out) < clicks:
            page.goto(f"{url}practice")
            page.fill("#deal", "0")
            page.click("#start-practice")
            page.wait_for_function(SETTLED)
            while len(out) < clicks and page.evaluate(CAN_TURN):
                out.append(float(page.evaluate(CLICK)))
                page.wait_for_function(SETTLED)
        page.close()
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clicks", type=int, default=72, help="clicks per page measured")
    ap.add_argument("--rtt-ms", type=float, default=150, help="round trip the proxy adds")
    ap.add_argument("--v1-ref", default=V1_REF, help="the commit of the v1 page")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    runs: dict[str, list[float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        with server(ROOT) as port:
            runs[f"v2 page, {args.rtt_ms:g} ms round trip"] = clicks_on(
                browser, port, args.rtt_ms, args.clicks
            )
        with old_tree(args.v1_ref) as tree, server(tree) as port:
            runs[f"v1 page ({args.v1_ref}), {args.rtt_ms:g} ms round trip"] = clicks_on(
                browser, port, args.rtt_ms, args.clicks
            )
            runs[f"v1 page ({args.v1_ref}), no added delay"] = clicks_on(browser, port, 0, args.clicks)
        browser.close()
    print(f"click to paint, ms ({args.clicks} clicks on the stock each, headless Chromium)")
    print(f"{'page':44} {'p50':>7} {'p90':>7} {'p95':>7} {'max':>7}")
    for name, ms in runs.items():
        print(f"{name:44} {pct(ms, 0.5):7.1f} {pct(ms, 0.9):7.1f} {pct(ms, 0.95):7.1f} {max(ms):7.1f}")
    v2, v1 = list(runs.values())[:2]
    print(f"v1 / v2 at p50: {pct(v1, 0.5) / pct(v2, 0.5):.1f}x; at p95: {pct(v1, 0.95) / pct(v2, 0.95):.1f}x")
    print(
        f"targets: p50 <= 16 ms {'met' if pct(v2, 0.5) <= 16 else 'NOT met'}, p95 <= 33 ms {'met' if pct(v2, 0.95) <= 33 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
