"""Players that see only what a player sees: the greedy baseline and the hint.

What a player knows: the grid, the stock's size, and the waste. The waste
counts as seen: every card in it was turned face up in front of the player,
so anyone could have written it down (the player view shows only its top;
the server's hint stands in for that memory). The stock's order is never
read, except in ``open`` where the rules show it.

The hint solves sampled deals: the unseen cards (the deck minus the grid and
the waste) are shuffled into stock orders the player cannot tell from the
real one, each candidate next move is played in every sample and the rest of
each sample solved with a narrow beam, and the move with the best mean wins.
Unlike greedy rollouts, the beam plays each sample well, so the comparison
shows which choices cost cards whatever the order (mostly: when to move a
whole pile, which pulls the next stock card and shifts every later turn).
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter

from .cards import canonical_deck, parse_card
from .game import Game
from .moves import Move
from .solver import Model, OutOfBudget, Position, State, _Search, real_move, solve_position

SAMPLES = 3
BEAM = 2
ENDGAME_NODES = 3_000


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


def seen_position(game: Game, rng: random.Random) -> Position:
    """The game as the player sees it, with the unseen cards shuffled into a stock.

    In ``open`` the stock is shown, so it is the real one.
    """
    view = game.player_view()
    v = game.variant
    waste = game.state()["waste"]  # seen cards only; the stock field is dropped unread
    wastes = waste if v.wastes > 1 else [waste]
    piles = tuple(tuple(parse_card(c) for c in p) for p in view["grid"].values())
    waste_cards = tuple(tuple(parse_card(c) for c in w) for w in wastes)
    if v.open_stock:
        stock = [parse_card(c) for c in view["stock"]]
    else:
        unseen = Counter(canonical_deck(v.decks))
        unseen.subtract(c for p in piles for c in p)
        unseen.subtract(c for w in waste_cards for c in w)
        stock = sorted(unseen.elements())
        rng.shuffle(stock)
        assert len(stock) == view["stock_count"]
    return Position(v, piles, tuple(stock), waste_cards, view["redeals_left"])


def _beam_value(model: Model, state: State, width: int) -> int:
    search = _Search(model, float("inf"), 10**9)
    model.root = state
    search.best = model.leftover(state)
    with contextlib.suppress(OutOfBudget):
        search.beam(width)
    return search.best


def hint(
    game: Game, rng: random.Random, samples: int = SAMPLES, width: int = BEAM, budget_s: float = 1.0
) -> Move | None:
    """The suggested next move, or None when the best is to finish.

    Once nothing is hidden (the stock is empty, or ``open``) the position is
    solved outright. Before that, a move that lowers the leftover is always
    taken (holding one back only shifts the turns in a way the player cannot
    foresee), and only a choice between such moves is put to the samples:
    ``samples`` stock orders, each candidate scored by a ``width``-wide beam
    on the rest of each. Deterministic for a given ``rng`` state.
    """
    if game.is_over:
        return None
    position = seen_position(game, rng)
    model = Model(position)
    root = model.root
    if game.variant.open_stock or not position.stock:
        line = solve_position(
            position, budget_s=float("inf"), max_nodes=ENDGAME_NODES, beam_widths=(20,), prove=False
        ).abstract
        return real_move(game, model, line[0]) if line else None
    candidates = [mv for mv in model.window_moves(root) if model.play(root, mv) is not None]
    if not candidates:
        return real_move(game, model, model.turn_moves(root)[0])
    if len(candidates) > 1:
        totals = dict.fromkeys(candidates, 0)
        for pos in [position, *(seen_position(game, rng) for _ in range(samples - 1))]:
            m = Model(pos)
            start = m.root
            for mv in candidates:
                child = m.play(start, mv)
                assert child is not None
                totals[mv] += _beam_value(m, child, width)
        candidates.sort(key=lambda mv: totals[mv])
    return real_move(game, model, candidates[0])


def play_out(game: Game, player: str, rng: random.Random, budget_s: float = 1.0) -> int:
    """Play ``game`` to its end with ``"greedy"`` or ``"hint"``; the final leftover."""
    while not game.is_over:
        move = greedy_move(game) if player == "greedy" else hint(game, rng, budget_s=budget_s)
        if move is None:
            break
        game.play(move)
    return game.leftover
