"""Command line: ``python -m server.engine deal|play|solve SEED [--variant V] ...`` (SEED: any text).

Output is one JSON object on stdout; a bad move exits with status 2 and a
one-line message on stderr naming the move, its position and the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from .game import Game, IllegalMove
from .moves import InvalidMove
from .solver import solve
from .variants import VARIANTS

EXIT_BAD_MOVE = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m server.engine", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("deal", "print the full state of a fresh deal"),
        ("play", "apply moves in order and print the full state after them"),
        ("solve", "find the deal's par and a line reaching it (stock order known)"),
    ):
        sub = commands.add_parser(name, help=text)
        sub.add_argument(
            "seed",
            metavar="SEED",
            help="any text (abc, 42, a daily deal's hex seed): the same text, the same deal",
        )
        sub.add_argument(
            "--variant", default="classic", choices=sorted(VARIANTS), help="the rules (default: %(default)s)"
        )
        if name == "play":
            sub.add_argument(
                "moves",
                nargs="*",
                metavar="MOVE",
                help="a move in the rule book's notation: T (turn three), W>B3, A1:0>B6 (docs/protocol.md)",
            )
        if name == "solve":
            sub.add_argument("--budget-s", type=float, default=10.0, help="time budget in seconds")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    # Moves may follow --variant (``play SEED --variant V MOVE...``), where a "*"
    # positional has already matched nothing; argparse leaves them unrecognised.
    args, extra = parser.parse_known_args(argv)
    moves = [*getattr(args, "moves", []), *extra]
    if extra and (args.command != "play" or any(text.startswith("-") for text in extra)):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "solve":
        json.dump(solve(args.seed, args.variant, budget_s=args.budget_s).as_json(), sys.stdout)
        sys.stdout.write("\n")
        return 0
    game = Game.new(args.seed, args.variant)
    taken = 0
    try:
        # A log as the server records it (or ``solve`` prints it): after a win, the automatic swaps.
        for _ in game.play_log(moves):
            taken += 1
    except (InvalidMove, IllegalMove) as exc:
        reason = exc.why if isinstance(exc, InvalidMove) else exc.reason
        print(f"move {taken + 1} {moves[taken]!r}: {reason}", file=sys.stderr)
        return EXIT_BAD_MOVE
    try:
        json.dump(game.state(), sys.stdout)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader had enough (``| head``): end as quietly as other tools, the way Python's docs
        # say, with stdout pointed at /dev/null so that the flush at exit does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
