"""``python -m client``: race, watch or run a bot from a terminal.

python -m client play [URL] [--join CODE | --bot greedy|lookahead | --practice | --anyone]
python -m client watch LINK | [URL] CODE
python -m client live [URL] [--closest]
python -m client bot URL --join CODE [--strategy greedy|lookahead] [--speed MOVES_PER_S] [--rematches N]
python -m client stats [URL] [--player ID]
python -m client stats [URL] --board [VARIANT] [--after NEXT] [--limit N]

URL is the server's address as it prints it (http:// or https:// is fine:
the WebSocket is on the same port); match codes may be typed in lower case.
``live`` prints a link to each race (http://HOST/w/CODE): a browser opens it,
and ``watch`` takes it as it is.

Your player identity is kept in ~/.config/devils-grip/identity.json (``--identity``),
so your statistics follow you from game to game.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import get_args

from pydantic import ValidationError

from server import protocol as p

from . import identity
from .api import DEFAULT_URL, ClientError, connect, match_code, page_url, race_link
from .boards import format_board
from .bots import run_bot
from .terminal import PROG, describe, format_live, format_stats, run_terminal, terminal_restored


def code_arg(text: str) -> str:
    """A match code argument: upper-cased; a clear usage error for one that cannot be a code."""
    try:
        return match_code(text)
    except ClientError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def deal_arg(text: str) -> int:
    """A deal number argument: a usage error naming ``--deal`` rather than the server's refusal."""
    try:
        deal = int(text)
    except ValueError:
        deal = -1
    if not 0 <= deal <= p.MAX_DEAL:
        raise argparse.ArgumentTypeError(f"{text!r} is not a deal number (0 to {p.MAX_DEAL})")
    return deal


def server_url(parser: argparse.ArgumentParser, *, also: str = "") -> None:
    """The server's address as a command's first argument, said in its --help (it was a bare "url")."""
    parser.add_argument(
        "url",
        nargs="?",
        default=DEFAULT_URL,
        help=f"the server's WebSocket address (default {DEFAULT_URL}){also}",
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog=PROG, description="Devil's Grip race client")
    sub = ap.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="race from this terminal")
    server_url(play)
    opponent = play.add_mutually_exclusive_group()  # a joined match's bot is its creator's choice
    opponent.add_argument(
        "--join", metavar="CODE", type=code_arg, help="join a friend's match instead of creating one"
    )
    opponent.add_argument("--bot", choices=("greedy", "lookahead"), help="race a bot the server seats")
    opponent.add_argument("--practice", action="store_true", help="play alone, with hint and undo")
    opponent.add_argument(
        "--anyone", action="store_true", help="race a stranger of a close rating now (a rated quick race)"
    )
    play.add_argument(
        "--clock", type=int, choices=get_args(p.QuickClock), default=300, help="a quick race's clock (s)"
    )
    play.add_argument("--deal", type=deal_arg, help="deal number (default: a random deal)")
    play.add_argument("--variant", choices=get_args(p.VariantName), default="classic")
    play.add_argument("--name")
    play.add_argument("--no-color", action="store_true")
    watch = sub.add_parser(
        "watch",
        help="spectate a match: a link as `live` prints it, or [URL] CODE",
        description="Spectate a match: give its link as `live` prints it (http://HOST/w/CODE), "
        "or its code, after the server's address unless that is the default.",
    )
    server_url(watch, also="; or a race's link, as `live` prints it")
    watch.add_argument("code", nargs="?", help="the match code (none when the first argument is a link)")
    watch.add_argument("--no-color", action="store_true")
    bot = sub.add_parser("bot", help="a bot joins a match and plays it")
    server_url(bot)
    bot.add_argument("--join", metavar="CODE", type=code_arg, required=True)
    bot.add_argument("--strategy", choices=("greedy", "lookahead"), default="greedy")
    bot.add_argument("--speed", type=float, default=2.0, help="moves a second (0: as fast as acked)")
    bot.add_argument("--name")
    bot.add_argument("--rematches", type=int, default=0, help="rematches to ask for and play after the first")
    live = sub.add_parser(
        "live",
        help="the races being played now, each with its link: open it in a browser, or give it to `watch`",
    )
    server_url(live)
    live.add_argument("--closest", action="store_true", help="the closest races first (else the newest)")
    live.add_argument("--limit", type=int, default=20)
    stats = sub.add_parser(
        "stats", help="your ratings and figures (or another player's), head to head, last games"
    )
    server_url(stats)
    stats.add_argument("--player", help="another player's id")
    stats.add_argument("--games", type=int, default=10, help="how many of the last games to list")
    stats.add_argument(
        "--board",
        nargs="?",
        const="classic",
        choices=get_args(p.VariantName),
        help="a page of the variant's board of the best ratings instead (default classic)",
    )
    stats.add_argument("--after", help="the page past this one: the NEXT a page of --board printed")
    stats.add_argument("--limit", type=int, default=20, help="players on a page of --board (1..100)")
    for parser in (play, stats):
        parser.add_argument(
            "--identity", type=Path, default=identity.DEFAULT_PATH, help="where your id is kept"
        )
    args = ap.parse_args(argv)
    if args.command == "stats" and args.after is not None and args.board is None:
        ap.error("--after pages the board: give --board too")
    if args.command == "watch":
        args.url, args.code = watch_target(ap, args.url, args.code)
    return args


def watch_target(ap: argparse.ArgumentParser, first: str, code: str | None) -> tuple[str, str]:
    """``watch``'s server address and match code: from a link, from a code alone, or from both."""
    try:
        if code is not None:
            return first, match_code(code)
        link = race_link(first)
        if link is not None:
            return link
        if first != DEFAULT_URL and "/" not in first:  # a code alone: the default server
            return DEFAULT_URL, match_code(first)
    except ClientError as exc:
        ap.error(str(exc))
    ap.error("watch needs a link (http://HOST/w/CODE, as `live` prints it) or a match code")


async def stats_main(args: argparse.Namespace) -> int:
    client = await connect(args.url, identity_file=args.identity)
    if args.board is not None:
        try:
            board = await client.rating_board(args.board, args.after, args.limit)
        finally:
            await client.close()
        print(format_board(board, page_url(args.url)))
        return 0
    try:
        figures = await client.stats(args.player)
        ratings = await client.ratings(args.player)
        games = await client.history(limit=args.games, player=args.player)
    finally:
        await client.close()
    print(format_stats(figures, games, page_url(args.url), ratings))
    return 0


async def live_main(args: argparse.Namespace) -> int:
    client = await connect(args.url, hello=False)
    try:
        races = await client.live_races("closest" if args.closest else "newest", args.limit)
    finally:
        await client.close()
    print(format_live(races, page_url(args.url)))
    return 0


async def bot_main(args: argparse.Namespace) -> int:
    client = await connect(args.url, name=args.name or f"{args.strategy} bot")
    try:
        seated = await client.join(args.join)
        print(f"seated in {seated.match} as seat {seated.seat}; playing {args.strategy}", flush=True)
        result = await run_bot(
            client, args.strategy, args.speed, rematches=args.rematches, on_result=print_result
        )
    finally:
        await client.close()
    print_result(result)
    return 0


def print_result(result: p.Result) -> None:
    for s in result.seats:
        line = f"{s.name}: {s.score} left ({s.reason})" + (" winner" if result.winner == s.seat else "")
        print(line, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    color = None if not getattr(args, "no_color", False) else False
    try:
        if args.command == "play":
            with terminal_restored():
                return asyncio.run(
                    run_terminal(
                        args.url, join=args.join, bot=args.bot, practice=args.practice, anyone=args.anyone,
                        clock=args.clock, name=args.name, deal=args.deal, variant=args.variant, color=color,
                        identity_file=args.identity,
                    )
                )  # fmt: skip
        if args.command == "watch":
            with terminal_restored():
                return asyncio.run(run_terminal(args.url, watch=args.code, color=color))
        if args.command == "stats":
            return asyncio.run(stats_main(args))
        if args.command == "live":
            return asyncio.run(live_main(args))
        return asyncio.run(bot_main(args))
    except (ClientError, OSError) as exc:  # OSError: TimeoutError too, should one slip through
        print(f"error: {describe(exc)}", file=sys.stderr)
        return 1
    except ValidationError as exc:  # e.g. a match code that cannot be one
        print(f"error: {p.explain(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
