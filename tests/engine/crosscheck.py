"""Recorded games for the cross-check of the client engines (Python ``ClientGame``, JavaScript) against ``Game``.

The server's ``Game`` plays a random game and records, from a snapshot on, what
a client must agree with: the snapshot as the client gets it (a v1 view: the
stock and buried waste cards hidden), then for each move the server's
``reveal`` and automatic swaps and the position after it (legal texts, over,
won, numbers, position text and check), plus a few probes (a move text and the
server's verdict on it). ``play_record`` replays a record on ``ClientGame``
exactly as ``tests/js/crosscheck.test.mjs`` does on the JavaScript engine: the
two harnesses are one procedure written in each language.

Besides random deals, ``endgame`` sets up positions a few cards from the win
(piles scattered over the spots, some spots empty), so that wins, their
automatic arrangement, and refills of empty spots come up often.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from engine_helpers import complete_piles, position

from server.engine import Game, IllegalMove, InvalidMove, get_variant
from server.engine.client_game import ClientGame
from server.engine.game import BaseGame

MAX_STEPS = 200
UNDO_EVERY = 5  # about one step in UNDO_EVERY is taken back and played again by the harness
NON_SWAP_BIAS = 0.7  # most legal moves are swaps; favour the others so games reach their ends


def numbers(game: BaseGame) -> dict[str, Any]:
    """A position as the harness compares it."""
    return {
        "legal": " ".join(game.legal_texts()),
        "over": game.is_over,
        "won": game.is_won,
        "leftover": game.leftover,
        "on_grid": game.on_grid,
        "complete": game.complete,
        "moves": game.move_count,
        "text": game.position_text(),
        "check": game.check(),
    }


def verdict(game: BaseGame, text: str) -> str | None:
    """None if ``text`` plays here (then taken back), "invalid" for no move at all, else the IllegalMove reason."""
    before = game.position_text()
    try:
        game.play(text)
    except InvalidMove:
        return "invalid"
    except IllegalMove as e:
        return e.reason
    game.undo()
    assert game.position_text() == before, f"{text}: play then undo changed the position"
    return None


def probe_pool() -> list[str]:
    """Move texts of every form, on this grid and off it, canonical or not, and a few malformed."""
    spots = [f"{r}{c}" for r in "ABC" for c in range(1, 9)]
    texts = ["T", "R", "t", " r ", "TT", "W>", "A1:01>B1", "A1~A1", "W4>A1", "A1:0>A1"]
    texts += [f"W{w}>{y}" for w in ("", "1", "2", "3") for y in spots]
    texts += [f"{x}:{k}>{y}" for x in spots for k in range(5) for y in spots]
    texts += [f"{x}~{y}" for x in spots for y in spots]
    texts += [t.lower() for t in texts[:40]]
    return texts


def choose(game: Game, rng: random.Random) -> str:
    legal = game.legal_texts()
    others = [t for t in legal if "~" not in t]
    return rng.choice(others if others and rng.random() < NON_SWAP_BIAS else legal)


def record(game: Game, rng: random.Random) -> dict[str, Any]:
    """Play ``game`` on from here with random moves, recording what a client must agree with."""
    pool = probe_pool()
    start = {"variant": game.variant.name, "view": game.player_view(), "at": numbers(game)}
    steps = []
    while not game.is_over and len(steps) < MAX_STEPS:
        probes = [rng.choice(game.legal_texts()), rng.choice(pool)]
        move = choose(game, rng)
        step: dict[str, Any] = {"probes": [[t, verdict(game, t)] for t in probes], "move": move}
        played = game.play(move)
        step |= {
            "reveal": game.revealed(),
            "auto": [m.text for m in played[1:]],
            "at": numbers(game),
            "undo": rng.randrange(UNDO_EVERY) == 0,
        }
        steps.append(step)
    return start | {"steps": steps}


def endgame(variant: str, rng: random.Random) -> Game:
    """A position a few cards from the win: complete piles scattered over the spots, the cards
    taken off a few of them (whole piles, now and then, leaving spots empty) in stock and waste."""
    v = get_variant(variant)
    suits = "SHDC"
    piles = [p for row in complete_piles(v.decks, suits).values() for p in row]
    rng.shuffle(piles)
    loose: list[str] = []
    for pile in rng.sample(piles, rng.randint(1, 4)):
        taken = rng.choice((1, 1, 2, 3, 4))  # 4: the whole pile, its spot left empty
        loose += pile[-taken:]
        del pile[-taken:]
    rng.shuffle(loose)
    spots = Game.new("0", v).spot_names
    grid = dict(zip(spots, piles, strict=True))
    in_stock = rng.randint(0, len(loose))
    stock, rest = loose[:in_stock], loose[in_stock:]
    if v.wastes == 1:
        return position(variant, grid, stock, rest)
    wastes: list[list[str]] = [[], [], []]
    for card in rest:
        rng.choice(wastes).append(card)
    return position(variant, grid, stock, wastes)


def records(variant: str, positions: int, seed: int = 0) -> Iterator[dict[str, Any]]:
    """Records of ``variant`` holding at least ``positions`` positions: random deals, each from a
    random snapshot point, and one endgame in five."""
    rng = random.Random(f"{variant}/{seed}")
    held = 0
    while held < positions:
        if rng.randrange(5) == 0:
            game = endgame(variant, rng)
        else:
            game = Game.new(str(rng.randrange(10**9)), variant)
            for _ in range(rng.choice((0, rng.randrange(120)))):
                if game.is_over:
                    break
                game.play(choose(game, rng))
        rec = record(game, rng)
        held += 1 + len(rec["steps"])
        yield rec


def positions_in(recs: list[dict[str, Any]]) -> int:
    return sum(1 + len(r["steps"]) for r in recs)


def check_position(game: ClientGame, expected: dict[str, Any], where: str) -> None:
    got = numbers(game)
    assert got == expected, f"{where}: " + ", ".join(
        f"{k} {got[k]!r} != {expected[k]!r}" for k in expected if got[k] != expected[k]
    )


def play_record(rec: dict[str, Any]) -> int:
    """Replay ``rec`` on a ``ClientGame`` built from its view, asserting agreement at every step;
    returns the positions compared."""
    game = ClientGame.from_view(rec["view"])
    check_position(game, rec["at"], "snapshot")
    steps = rec["steps"]
    previous = rec["at"]
    for i, step in enumerate(steps):
        where = f"{rec['variant']} step {i + 1} ({step['move']})"
        for text, expected in step["probes"]:
            assert verdict(game, text) == expected, f"{where}: probe {text}"
        played = [m.text for m in game.play(step["move"])]
        assert played == [step["move"], *step["auto"]], where
        needed = game.revealed()
        reveal = step["reveal"]
        assert needed.keys() == reveal.keys(), f"{where}: reveals {needed}, the server {reveal}"
        assert all(card in ("??", reveal[key]) for key, card in needed.items()), f"{where}: {needed}"
        pending = game.legal_texts()
        later = steps[i + 1]["move"] if i + 1 < len(steps) else None
        if later in pending:  # played before the ack came: taken back, revealed, played again
            hidden = game.position_text()
            game.play(later)
            game.undo()
            assert game.position_text() == hidden, f"{where}: undo of {later} before the reveal"
        game.reveal(reveal)
        missing = set(pending) - set(game.legal_texts())
        assert not missing, f"{where}: offered before the reveal, illegal after: {missing}"
        check_position(game, step["at"], where)
        if step["undo"]:
            assert [m.text for m in game.undo()] == played, f"{where}: undo"
            check_position(game, previous, f"{where}, undone")
            assert [m.text for m in game.play(step["move"])] == played, f"{where}: played again"
            check_position(game, step["at"], f"{where}, played again")
        previous = step["at"]
    return 1 + len(steps)


def good_view() -> dict[str, Any]:
    """A view of deal "1" after a turn, for the bad views below to spoil."""
    game = Game.new("1")
    game.play("T")
    return game.player_view()


# Changes that spoil ``good_view()``, and what the refusal says: both engines refuse them alike.
BAD_VIEWS: list[tuple[dict[str, Any], str]] = [
    ({"grid": {"A1": ["QS"]}}, "grid has the spots"),
    ({"grid": None}, "grid has the spots"),
    ({"waste": []}, "1 waste"),
    ({"waste": [{"top": None, "count": 3}]}, "its top card"),
    ({"waste": [{"top": "5S", "count": 0}]}, "its top card"),
    ({"waste": [{"top": "XX", "count": 3}]}, "not a card"),
    ({"waste": ["5S"]}, "its count"),
    ({"stock_count": -1}, "stock_count must be"),
    ({"stock_count": "69"}, "stock_count must be"),
    ({"stock_count": 70}, "holds 97 cards"),
    ({"stock": ["2D"]}, "stock shows 1 cards"),
    ({"stock": "2D"}, "list of cards"),
    ({"redeals_left": 1}, "redeals_left must be"),
    ({"moves": None}, "moves must be"),
    ({"variant": "chess"}, "unknown variant"),
]


def after_a_stock_refill(variant: str) -> tuple[Game, ClientGame]:
    """Deal "1" after B2:0>B1: the stock's top (2D) refills B2. A4 holds 3S, whose home is row B."""
    game = Game.new("1", variant)
    client = ClientGame.from_view(game.player_view())
    for engine in (game, client):
        engine.play("B2:0>B1")
    return game, client


# Reveals for ``after_a_stock_refill("classic")``, and what the refusal says (None: accepted, as the
# client cannot know the card, and then the check differs).
REVEAL_MISMATCHES: list[tuple[dict[str, str], str | None]] = [
    ({"B1": "2D"}, "holds 2 cards"),  # B1 was built on: not a refill
    ({"B2": "5D"}, None),
    ({"W": "2D"}, "waste is empty"),
    ({"W1": "2D"}, "no spot or waste W1"),
    ({"D1": "2D"}, "no spot or waste D1"),
    ({"B2": "1D"}, "not a card"),
]
