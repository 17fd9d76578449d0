"""Players that see only what a player sees: the greedy baseline and the hint.

What a player knows: the grid, the stock's size, and the waste. The waste
counts as seen: every card in it was turned face up in front of the player,
so anyone could have written it down (the player view shows only its top;
the server's hint stands in for that memory). The stock's order is never
read while any of it is unseen: it is read only in ``open`` (the rules show
it), and after a redeal in ``relaxed``, when the stock is exactly the old
waste in the order its cards were first turned (RULES.md, ``relaxed``), so a
player who remembered the waste knows it (``_stock_is_seen`` argues it).

What the hint does, and the measurements that chose it (docs/solver.md):

* **Nothing hidden** (``open``; the stock empty; after the redeal): the
  position is solved with the full solver within the time budget and the
  line's first move is suggested. The line is cached, so the next call on the
  position it leads to answers at once.
* **Hidden stock, a redeal still to come** (``relaxed``, first pass): play
  waste cards, never move a whole pile, turn. A whole-pile move pulls an
  unseen stock card and uses a top; held back until the stock's order is
  known (after the redeal) the solver can time every one of them. On the
  model (deals 1001..1040, 1 s per solve) this first pass then the solved
  rest leaves 12.8 cards, greedy's first pass then the solved rest 23.2,
  greedy throughout about 29.7.
* **Hidden stock, no redeal, one waste, two decks** (``classic``,
  ``free-swap``, ``suitless``): a sampling player. Its candidates are the
  moves that differ on the canonical state (the waste play, each whole-pile
  move, the turn); each is scored by greedy played to the end on the same
  ``SAMPLES`` stock orders drawn from the unseen cards, and greedy's own move
  is kept unless another gains at least ``MARGIN_SE`` standard errors. This is
  one step of policy improvement on greedy over the player's real belief (every
  order of the unseen cards is equally likely). Measured: a small gain only
  (classic deals 1..1000, docs/solver.md): the choices left to a player who
  cannot see the order, when to move a whole pile, are worth a lot with the
  order known (37 -> 23 in the same experiment with the real order) and
  almost nothing without it.
* ``three-waste`` and ``single-deck`` with a hidden stock: the greedy move
  (the rollouts model one waste; in ``single-deck`` the sampling player
  measured 26.52 against greedy's 26.49 on deals 1..1000).
"""

from __future__ import annotations

import copy
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from .cards import BUILD_DELTA, FIRST_VALUE, canonical_deck, parse_card
from .game import Game
from .moves import Move, MoveKind
from .solver import MERGE, REDEAL, TURN, WASTE, Model, Position, State, real_move, solve_position
from .variants import Variant, get_variant

#: How many cached states of solved lines to keep (one game's line is < 200).
CACHE_STATES = 20_000
_line_cache: dict[object, tuple[int, int]] = {}

#: Sampled stock orders per hint call with a hidden stock and no redeal, and how many
#: standard errors a move's mean gain over greedy's move must reach before it is preferred.
SAMPLES = 100
MARGIN_SE = 2.5


def greedy_move(game: Game) -> Move | None:
    """The baseline: lower the leftover whenever possible (waste first), else turn or redeal.

    None when nothing lowers the leftover and no card can be turned: finish.
    """
    legal = game.legal_moves()
    for kind in ("W", ":0>", "T", "R"):
        for move in legal:
            if kind in str(move):
                return move
    return None


def _stock_is_seen(game: Game) -> bool:
    """True when the player has seen every stock card, in order.

    In ``open`` the rules show the stock. After a redeal the stock is the
    waste turned over: its cards come again in the order they were first
    turned, every one of them was face up in the waste before the redeal,
    and since then cards only leave it from the top (turns, refills), so a
    player who remembered the waste knows the stock exactly. An empty stock
    hides nothing either.
    """
    v = game.variant
    return v.open_stock or game.stock_count == 0 or game.redeals_left < v.redeals


def seen_position(game: Game, rng: random.Random) -> Position:
    """The game as the player sees it, with the unseen cards shuffled into a stock.

    When the stock is seen (``_stock_is_seen``) it is the real one.
    """
    view = game.player_view()
    v = game.variant
    state = game.state()
    waste = state["waste"]  # seen cards only
    wastes = waste if v.wastes > 1 else [waste]
    piles = tuple(tuple(parse_card(c) for c in p) for p in view["grid"].values())
    waste_cards = tuple(tuple(parse_card(c) for c in w) for w in wastes)
    if _stock_is_seen(game):
        stock = [parse_card(c) for c in state["stock"]]
    else:
        unseen = Counter(canonical_deck(v.decks))
        unseen.subtract(c for p in piles for c in p)
        unseen.subtract(c for w in waste_cards for c in w)
        stock = sorted(unseen.elements())
        rng.shuffle(stock)
        assert len(stock) == view["stock_count"]
    return Position(v, piles, tuple(stock), waste_cards, view["redeals_left"])


def _cache_key(variant: str, s: State) -> object:
    grid, ptr, wastes, redeals, stock = s
    return variant, grid, wastes, redeals, stock[ptr:]


def _cache_line(position: Position, model: Model, budget_s: float, key_of: Callable[[State], object]) -> None:
    """Solve ``position``; remember for every state along the best line its next move and the par."""
    sol = solve_position(position, budget_s=budget_s, prove=False)
    if len(_line_cache) > CACHE_STATES:
        _line_cache.clear()
    state: State | None = model.root
    for mv in [*sol.abstract, -1]:
        assert state is not None
        _line_cache[key_of(state)] = (mv, sol.par)
        state = model.play(state, mv) if mv >= 0 else None


def _solved_move(game: Game, position: Position, budget_s: float) -> Move | None:
    """First move of the best line the solver finds in the budget (cached along the line).

    Where the greedy player, played out on a copy, ends lower than that line
    (the model skips some refills in ``three-waste``, or the budget was too
    short), the greedy move is suggested instead: never worse than greedy here.
    """
    model = Model(position)
    name = game.variant.name
    key = _cache_key(name, model.root)
    if key not in _line_cache:
        _cache_line(position, model, budget_s, lambda s: _cache_key(name, s))
    mv, par = _line_cache[key]
    greedy = copy.deepcopy(game)
    if play_out(greedy, "greedy", random.Random(0)) < par:
        return greedy_move(game)
    # past the line's end only greedy moves remain: they never raise the leftover
    return greedy_move(game) if mv < 0 else real_move(game, model, mv)


class _Rollouts:
    """Greedy played to the end on canonical states (D1 of the solver): one waste, no redeal.

    Cards are reduced to their keys (the card, or in ``suitless`` its value);
    the grid is two counts per key, pile tops and pile bottoms. The stock and
    waste are lists of keys, top at the end. About 0.1 ms per rest of a game.
    """

    def __init__(self, variant: Variant) -> None:
        shift = 2 if variant.suitless else 0
        self.key = [c >> shift for c in range(64)]
        self.size = 64 >> shift
        self.need = [-1] * self.size
        for c in range(FIRST_VALUE << 2, 64):
            if (c >> 2) - 3 >= FIRST_VALUE:
                self.need[c >> shift] = (c - BUILD_DELTA) >> shift
        self.nonbase = [k for k in range(self.size) if self.need[k] >= 0]

    def merges(self, tops: list[int], bots: list[int]) -> list[int]:
        """Keys of pile bottoms that can move whole onto a top (one move per key, D1)."""
        need = self.need
        return [b for b in self.nonbase if bots[b] and tops[need[b]]]

    def fits(self, tops: list[int], waste: list[int]) -> bool:
        return bool(waste) and self.need[waste[-1]] >= 0 and tops[self.need[waste[-1]]] > 0

    @staticmethod
    def merge(
        tops: list[int], bots: list[int], stock: list[int], waste: list[int], b: int, need: int
    ) -> None:
        bots[b] -= 1
        tops[need] -= 1
        if stock or waste:
            r = stock.pop() if stock else waste.pop()
            tops[r] += 1
            bots[r] += 1

    def play(self, tops: list[int], bots: list[int], stock: list[int], waste: list[int], move: int) -> None:
        """Apply a canonical move: -1 turn, -2 waste play, else the key of a merging bottom."""
        if move == -1:
            for _ in range(min(3, len(stock))):
                waste.append(stock.pop())
        elif move == -2:
            k = waste.pop()
            tops[self.need[k]] -= 1
            tops[k] += 1
        else:
            self.merge(tops, bots, stock, waste, move, self.need[move])

    def greedy_rest(self, tops: list[int], bots: list[int], stock: list[int], waste: list[int]) -> int:
        """The leftover greedy ends with from here (the lists are used up)."""
        need, nonbase = self.need, self.nonbase
        while True:
            while waste:
                n = need[waste[-1]]
                if n < 0 or not tops[n]:
                    break
                k = waste.pop()
                tops[n] -= 1
                tops[k] += 1
            for b in nonbase:
                if bots[b] and tops[need[b]]:
                    self.merge(tops, bots, stock, waste, b, need[b])
                    break
            else:
                if not stock:
                    return len(waste)
                for _ in range(min(3, len(stock))):
                    waste.append(stock.pop())


def _sampled_move(game: Game, rng: random.Random, samples: int, budget_s: float) -> Move | None:
    """Hidden stock, one waste, no redeal: greedy's move unless sampling shows a better one.

    The candidates are the canonical moves (D1, D2): the waste play, each
    whole-pile move (one per bottom key), the turn. Each is scored by greedy
    played to the end on ``samples`` stock orders drawn from the unseen cards
    (the same orders for every candidate); a candidate replaces greedy's move
    only if its mean gain is positive and at least ``MARGIN_SE`` standard
    errors. Only what the player sees is read (``seen_position``). Past half
    of ``budget_s`` (a loaded machine) it stops sampling and decides on the
    orders drawn so far (at least ten).
    """
    deadline = time.perf_counter() + budget_s / 2
    move = greedy_move(game)
    sim = _Rollouts(game.variant)
    position = seen_position(game, rng)
    key = sim.key
    tops, bots = [0] * sim.size, [0] * sim.size
    for pile in position.piles:
        if pile:
            tops[key[pile[-1]]] += 1
            bots[key[pile[0]]] += 1
    waste = [key[c] for c in position.wastes[0]]
    unseen = [key[c] for c in position.stock]
    candidates = ([-2] if sim.fits(tops, waste) else []) + sim.merges(tops, bots) + [-1]
    if len(candidates) < 2 or move is None:
        return move
    text = str(move)
    if text.startswith("W"):
        base = -2
    elif ":0>" in text:
        base = key[parse_card(game.grid()[move.source][0])]
    else:
        base = -1
    totals = dict.fromkeys(candidates, 0.0)
    squares = dict.fromkeys(candidates, 0.0)
    drawn = 0
    while drawn < samples and (drawn < 10 or time.perf_counter() < deadline):
        drawn += 1
        rng.shuffle(unseen)
        scores = {}
        for c in candidates:
            t, b, s, w = tops[:], bots[:], unseen[:], waste[:]
            sim.play(t, b, s, w, c)
            scores[c] = sim.greedy_rest(t, b, s, w)
        for c in candidates:
            gain = scores[base] - scores[c]
            totals[c] += gain
            squares[c] += gain * gain
    best, best_gain = base, 0.0
    for c in candidates:
        mean = totals[c] / drawn
        se = math.sqrt(max(squares[c] / drawn - mean * mean, 0.0) / drawn)
        if mean > best_gain and mean > MARGIN_SE * se:
            best, best_gain = c, mean
    if best == base:
        return move
    if best == -1:
        return Move.turn()
    legal = game.legal_moves()
    if best == -2:
        return next(m for m in legal if m.kind is MoveKind.WASTE)
    grid = game.grid()
    return next(
        m
        for m in legal
        if m.kind is MoveKind.PILE and m.depth == 0 and key[parse_card(grid[m.source][0])] == best
    )


def _view_key(
    variant: str, grid: int, stock: tuple[int, ...], top: int | None, count: int, redeals: int
) -> object:
    return "view", variant, grid, stock, top, count, redeals


def _view_text(view: Mapping[str, Any], model: Model, mv: int) -> str:
    """The text of an abstract move on the view's grid (D1: any matching pile will do)."""
    kind, arg = mv & 3, mv >> 2
    if kind == TURN:
        return "T"
    if kind == REDEAL:
        return "R"
    names = list(view["grid"])
    piles = [[parse_card(c) for c in view["grid"][n]] for n in names]
    key, need = model.key, model.need
    if kind == WASTE:
        top = parse_card(view["waste"][0]["top"])
        y = next(y for y, p in enumerate(piles) if p and key[p[-1]] == need[key[top]])
        return f"W>{names[y]}"
    x = next(x for x, p in enumerate(piles) if p and key[p[0]] == arg)
    y = next(y for y, p in enumerate(piles) if p and y != x and key[p[-1]] == need[arg])
    return f"{names[x]}:0>{names[y]}"


def solved_view_move(view: Mapping[str, Any], budget_s: float) -> str | None:
    """For a view that shows every card off the grid in order (``open``, one waste): the solver's move.

    That is: the stock is in the view and the waste holds at most its top, or
    the view matches a state along a line solved earlier from such a view
    (the line fixes the waste under the top). "" means finish; None: not
    such a view (the caller decides by itself).
    """
    if view.get("stock") is None or len(view["waste"]) != 1:
        return None
    v = get_variant(view["variant"])
    piles = tuple(tuple(parse_card(c) for c in p) for p in view["grid"].values())
    stock = tuple(parse_card(c) for c in view["stock"])
    w = view["waste"][0]
    top = None if w["top"] is None else parse_card(w["top"])
    count = int(w["count"])
    position = Position(v, piles, stock, ((() if top is None else (top,)),), view["redeals_left"])
    model = Model(position)
    key = _view_key(v.name, model.root[0], stock, top, count, model.root[3])

    def view_key(s: State) -> object:
        grid, ptr, wastes, redeals, st = s
        return _view_key(
            v.name, grid, st[ptr:], wastes[0][-1] if wastes[0] else None, len(wastes[0]), redeals
        )

    if key not in _line_cache:
        if count > 1:
            return None
        _cache_line(position, model, budget_s, view_key)
    mv = _line_cache[key][0]
    return "" if mv < 0 else _view_text(view, model, mv)


def hint(
    game: Game,
    rng: random.Random,
    samples: int = 0,
    width: int = 0,
    budget_s: float = 1.0,
) -> Move | None:
    """The suggested next move, or None when the best is to finish.

    ``budget_s`` bounds the solver's time when nothing is hidden (the first
    call on such a position; later calls along the line are cached). The
    sampling player (hidden stock, no redeal, one waste, two decks) draws ``samples``
    orders of the unseen cards with ``rng`` (0: ``SAMPLES``; about 25 ms a
    call in classic); the real stock order is never read where it is unseen.
    ``width`` is kept for callers of an earlier version and ignored.
    """
    del width
    if game.is_over:
        return None
    if _stock_is_seen(game):
        return _solved_move(game, seen_position(game, rng), budget_s)
    if game.redeals_left:
        # First pass with a redeal to come: waste plays, never a whole pile, turn.
        legal = game.legal_moves()
        for kind in ("W", "T"):
            for move in legal:
                if kind in str(move):
                    return move
    if game.variant.wastes == 1 and game.variant.decks == 2:
        return _sampled_move(game, rng, samples or SAMPLES, budget_s)
    return greedy_move(game)


def play_out(
    game: Game,
    player: str,
    rng: random.Random,
    budget_s: float = 1.0,
    call_seconds: list[float] | None = None,
) -> int:
    """Play ``game`` to its end with ``"greedy"`` or ``"hint"``; the final leftover.

    ``call_seconds``, when given, gets the time each decision took (the benches report it).
    """
    while not game.is_over:
        started = time.perf_counter()
        move = greedy_move(game) if player == "greedy" else hint(game, rng, budget_s=budget_s)
        if call_seconds is not None:
            call_seconds.append(time.perf_counter() - started)
        if move is None:
            break
        game.play(move)
    return game.leftover


__all__ = ["MERGE", "greedy_move", "hint", "play_out", "seen_position"]
