"""``python -m server``: the race server.

Without ``--redis`` it runs embedded: an in-process bus and a SQLite store
under ``--data``, nothing else needed. With ``--redis URL`` it is one of many
processes sharing matches over Redis: a single Redis, or a Redis Cluster
(the URL of any of its nodes).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import errno
import gc
import logging
import os
import socket
import sys
import types
import typing
import webbrowser
from collections.abc import Callable
from pathlib import Path

from . import reach
from .app import App, run
from .match import DEFAULT_GRACE_MS
from .redis_link import RedisUnusable
from .settings import Settings, checked, redis_url
from .store.sqlite import DataInUse

#: Settings whose options are not their own: made from ``--data`` and ``--redis``, and ``--grace-s``.
NOT_OPTIONS = ("store_url", "bus_url", "grace_ms")
FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def _reader(
    parse: Callable[[str], object], judge: dataclasses.Field[typing.Any] | None = None
) -> Callable[[str], object]:
    """An option's type: ``parse`` reads the text, ``checked`` judges the value as field ``judge``'s.

    A type's ValueError (``int``) is argparse's own "invalid int value"; the
    words of any other (``address``, a field's ``check``) are its usage error.
    """

    def read(text: str) -> object:
        try:
            value = parse(text)
        except ValueError as exc:
            if isinstance(parse, type):
                raise
            raise argparse.ArgumentTypeError(str(exc)) from None
        try:
            return checked(judge, value) if judge is not None else value
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{exc} (got {text})") from None

    read.__name__ = getattr(parse, "__name__", "value")
    return read


def setting_options(ap: argparse.ArgumentParser) -> None:
    """An option for each setting, made from its field in ``Settings`` (``server/settings.py``).

    The option is ``--`` and the field's name with dashes unless the field names
    another (``flag``); its type is the field's (``X | None``: an X; a
    ``tuple[str, ...]`` is a repeatable option, its values in the order given),
    unless it has a ``parse``; its help is the field's, with its default. A
    default worked out later (``shown``) is None here.
    """
    group = ap.add_argument_group("settings (server/settings.py)")
    hints = typing.get_type_hints(Settings)
    for f in dataclasses.fields(Settings):
        if f.name in NOT_OPTIONS:
            continue
        meta, kind = f.metadata, hints[f.name]
        repeated = typing.get_origin(kind) is tuple and typing.get_args(kind)[1:] == (Ellipsis,)
        if repeated:
            kind = typing.get_args(kind)[0]
        elif typing.get_origin(kind) in (types.UnionType, typing.Union):
            kind = next(arg for arg in typing.get_args(kind) if arg is not type(None))
        shown = meta["shown"] or ("" if repeated else "%(default)s")
        group.add_argument(
            meta["flag"] or "--" + f.name.replace("_", "-"),
            dest=f.name,
            action="append" if repeated else "store",
            type=_reader(meta["parse"] or kind, f),
            default=None if repeated or meta["shown"] else f.default,
            metavar=meta["metavar"] or ("TEXT" if kind is str else "N"),
            help=meta["help"] + (f" (default: {shown})" if shown else ""),
        )


def parse_args(argv: list[str] | None = None) -> tuple[Settings, bool]:
    ap = argparse.ArgumentParser(
        prog="python -m server", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--data", default="./data", help="SQLite store directory, embedded mode (default: %(default)s)"
    )
    ap.add_argument(
        "--redis",
        metavar="URL",
        type=_reader(redis_url),
        help="redis://HOST:PORT/DB: bus and store in Redis (a single one or a cluster)",
    )
    ap.add_argument(
        "--grace-s",
        type=_reader(float, FIELDS["grace_ms"]),
        default=DEFAULT_GRACE_MS / 1000,
        help="seconds a dropped player may stay away (default: %(default)s)",
    )
    ap.add_argument("--open", action="store_true", help="open the game in a browser once listening")
    ap.add_argument("--log", default="INFO", help="log level (default: %(default)s)")
    setting_options(ap)
    args = ap.parse_args(argv)
    if args.redis_replicas and not args.redis:
        ap.error("--redis-replicas needs --redis")
    logging.basicConfig(level=args.log.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.log.upper() != "DEBUG":  # a line for every connection and HTTP request is noise
        logging.getLogger("websockets").setLevel(logging.WARNING)
    given: dict[str, typing.Any] = {}
    for f in dataclasses.fields(Settings):
        if f.name not in NOT_OPTIONS:
            value = getattr(args, f.name)
            given[f.name] = tuple(value or ()) if isinstance(f.default, tuple) else value  # repeated
    if given["burst"] is None:
        given["burst"] = max(10, int(args.rate_per_s * 2))
    settings = Settings(
        store_url=args.redis or f"sqlite:///{Path(args.data).resolve() / 'grip.db'}",
        bus_url=args.redis or "memory://",
        grace_ms=int(args.grace_s * 1000),
        **given,
    )
    return settings, args.open


#: A full collection of cyclic garbage this often, or sooner once this many
#: objects were made and kept since the last (the bound on garbage waiting).
COLLECT_EVERY_S = 60.0
COLLECT_AFTER_OBJECTS = 1_000_000


def _schedule_gc() -> None:
    """Collect cyclic garbage once a minute (or after a million objects kept), not automatically.

    Under load the automatic collector stopped the event loop for 1-85 ms at
    a time and found next to nothing: reference counting frees nearly all of
    the server's garbage (docs/benchmarks.md, "The cyclic collector runs once
    a minute"). Startup's objects are frozen out of every collection.
    """
    gc.collect()
    gc.freeze()
    gc.disable()
    loop = asyncio.get_running_loop()
    last = loop.time()

    def check() -> None:
        nonlocal last
        if loop.time() - last >= COLLECT_EVERY_S or gc.get_count()[0] >= COLLECT_AFTER_OBJECTS:
            gc.collect()
            last = loop.time()
        loop.call_later(1.0, check)

    loop.call_later(1.0, check)


def _announcer(open_browser: bool) -> Callable[[App], None]:
    def announce(app: App) -> None:
        _schedule_gc()
        url = f"http://{reach.page_host(app.settings.host, app.port)}/"
        print(f"Devil's Grip server listening on {url}  (Ctrl-C to stop)", flush=True)
        if app.settings.host in reach.WILDCARDS:
            print(f"  on every interface: on this machine also http://127.0.0.1:{app.port}/", flush=True)
        elif reach.this_machine_only(app.settings.host):
            print(
                "  only this machine can connect: --host 0.0.0.0 lets others on your network join", flush=True
            )
        has_gui = (
            sys.platform in ("darwin", "win32") or "DISPLAY" in os.environ or "WAYLAND_DISPLAY" in os.environ
        )
        if open_browser and has_gui:
            webbrowser.open(url)

    return announce


#: The open-files limit asked for when the hard limit allows more (or sets none).
OPEN_FILES_WANTED = 65_536


def _raise_open_files_limit() -> None:
    """Raise the soft limit on open files to what the hard limit allows.

    Every connection holds a file descriptor. The usual soft limit of 1,024
    would turn away the thousandth player (asyncio pauses accepting for a
    second at a time) on a server measured with 2,000 (docs/benchmarks.md),
    while the hard limit is usually far higher.
    """
    if sys.platform == "win32":
        return
    import resource  # POSIX only

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES_WANTED if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES_WANTED)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError):  # e.g. macOS caps it below the hard limit: keep what we have
        logging.getLogger(__name__).warning("could not raise the open-files limit from %d", soft)


def main(argv: list[str] | None = None) -> None:
    settings, open_browser = parse_args(argv)
    _raise_open_files_limit()
    try:
        asyncio.run(run(settings, ready=_announcer(open_browser)))
    except (DataInUse, RedisUnusable) as exc:
        sys.exit(f"python -m server: {exc}")
    except socket.gaierror as exc:
        sys.exit(
            f"python -m server: cannot listen on --host {settings.host}: {exc.strerror};"
            " give an address of this machine, or a name it resolves (0.0.0.0: every one)"
        )
    except OSError as exc:
        if exc.filename is not None:  # only the store's directory is made or opened before listening
            sys.exit(f"python -m server: --data: cannot keep the store in {exc.filename}: {exc.strerror}")
        if exc.errno not in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            raise
        sys.exit(
            f"python -m server: cannot listen: {exc.strerror}; stop what holds that port,"
            " or choose another with --port (--port 0 picks a free one)"
        )


if __name__ == "__main__":
    main()
