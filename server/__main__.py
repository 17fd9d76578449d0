"""``python -m server``: the race server.

Without ``--redis`` it runs embedded: an in-process bus and a SQLite store
under ``--data``, nothing else needed. With ``--redis URL`` it is one of many
processes sharing matches over Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path

from .app import App, Settings, run


def parse_args(argv: list[str] | None = None) -> tuple[Settings, bool]:
    ap = argparse.ArgumentParser(prog="python -m server", description=__doc__)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    ap.add_argument("--data", default="./data", help="SQLite store directory (embedded mode)")
    ap.add_argument("--redis", metavar="URL", help="redis://HOST:PORT/DB: bus and store in Redis")
    ap.add_argument("--origin", action="append", default=[], help="allowed page origin (repeatable)")
    ap.add_argument("--grace-s", type=float, default=60.0, help="how long a dropped player may stay away")
    ap.add_argument("--rate", type=float, default=30.0, help="messages a second per connection")
    ap.add_argument("--open", action="store_true", help="open the game in a browser once listening")
    ap.add_argument("--log", default="INFO")
    args = ap.parse_args(argv)
    logging.basicConfig(level=args.log.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.log.upper() != "DEBUG":  # a line for every connection and HTTP request is noise
        logging.getLogger("websockets").setLevel(logging.WARNING)
    store = args.redis or f"sqlite:///{Path(args.data).resolve() / 'grip.db'}"
    settings = Settings(
        host=args.host,
        port=args.port,
        store_url=store,
        bus_url=args.redis or "memory://",
        origins=tuple(args.origin),
        grace_ms=int(args.grace_s * 1000),
        rate_per_s=args.rate,
        burst=max(10, int(args.rate * 2)),
    )
    return settings, args.open


def _spare_the_collector() -> None:
    """Keep full collections rare, and off what startup made.

    A full (generation 2) collection walks every tracked object: with a
    thousand open connections that is over 150,000 objects and about 75 ms
    during which no move is acked or delivered, the one outlier in the
    1,000-spectator fan-out (docs/benchmarks.md). Startup's objects (modules,
    pydantic schemas) are frozen out of every collection, and a full
    collection waits for 100 younger ones instead of 10. Reference counting
    still frees nearly everything at once; only garbage in cycles waits longer.
    """
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


def _announcer(open_browser: bool) -> Callable[[App], None]:
    def announce(app: App) -> None:
        _spare_the_collector()
        url = f"http://{app.settings.host}:{app.port}/"
        print(f"Devil's Grip server listening on {url}  (Ctrl-C to stop)", flush=True)
        has_gui = (
            sys.platform in ("darwin", "win32") or "DISPLAY" in os.environ or "WAYLAND_DISPLAY" in os.environ
        )
        if open_browser and has_gui:
            webbrowser.open(url)

    return announce


def main(argv: list[str] | None = None) -> None:
    settings, open_browser = parse_args(argv)
    asyncio.run(run(settings, ready=_announcer(open_browser)))


if __name__ == "__main__":
    main()
