"""Properties over random deals and random legal play (hypothesis).

``reference_is_over`` is RULES.md's "End" written again from the state's
texts, slowly and independently of the engine's indexes.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.engine import VARIANTS, Game, IllegalMove, InvalidMove
from server.engine.cards import card_text

RANKS = "23456789TJQK"
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
seeds = st.integers(min_value=0, max_value=10**6).map(str)
variants = st.sampled_from(sorted(VARIANTS))
MAX_MOVES = 150


def deck(variant: str) -> Counter[str]:
    decks = 1 if variant == "single-deck" else 2
    return Counter(r + s for r in RANKS[:] for s in "SHDC" for _ in range(decks))


def cards_of(state: dict[str, Any]) -> Counter[str]:
    waste = state["waste"]
    wastes = waste if waste and isinstance(waste[0], list) else [waste]
    return Counter(
        [c for p in state["grid"].values() for c in p] + state["stock"] + [c for w in wastes for c in w]
    )


def fits(card: str, pile: list[str], spot: str, suitless: bool) -> bool:
    if not pile:
        return RANKS.index(card[0]) == "ABC".index(spot[0])
    top = pile[-1]
    return RANKS.index(card[0]) - RANKS.index(top[0]) == 3 and (suitless or card[1] == top[1])


def reference_is_over(game: Game) -> bool:
    """Over when won, or stock empty, no redeal, and no move lowers the leftover."""
    state = game.state()
    waste = state["waste"]
    wastes = waste if waste and isinstance(waste[0], list) else [waste]
    if not state["stock"] and not any(wastes):
        return True
    if state["stock"] or (game.redeals_left and any(wastes)):
        return False
    suitless = game.variant.suitless
    grid = state["grid"]
    for w in wastes:
        if w and any(fits(w[-1], pile, spot, suitless) for spot, pile in grid.items()):
            return False
    for source, pile in grid.items():
        for spot, target in grid.items():
            if pile and spot != source and fits(pile[0], target, spot, suitless):
                return False  # the whole pile moves and the waste refills its spot
    return True


def all_candidate_texts(game: Game) -> list[str]:
    spots = game.spot_names
    texts = ["T", "R"]
    texts += [f"W{w}>{y}" for w in ("", "1", "2", "3") for y in spots]
    texts += [f"{x}:{k}>{y}" for x in spots for k in range(4) for y in spots]
    texts += [f"{x}~{y}" for i, x in enumerate(spots) for y in spots[i:]]
    return texts


def snapshot(game: Game) -> tuple[dict[str, Any], dict[str, Any]]:
    return game.state(), game.player_view()


@SETTINGS
@given(seed=seeds, variant=variants, choice=st.randoms(use_true_random=False))
def test_random_play_keeps_every_invariant(seed: str, variant: str, choice: random.Random) -> None:
    game = Game.new(seed, variant)
    full = deck(variant)
    for _ in range(MAX_MOVES):
        state = game.state()
        assert cards_of(state) == full
        # the texts kept beside the piles for views (plays and undos keep both)
        assert state["grid"] == {
            n: [card_text(c) for c in p] for n, p in zip(game.spot_names, game._piles, strict=True)
        }
        assert game.leftover + game.on_grid == sum(full.values())
        assert game.is_over == reference_is_over(game)
        # the indexes kept across plays and undos (tops, homes, the swap list) match fresh ones
        fresh = copy.copy(game)  # the same state, its indexes built from the piles alone
        fresh._piles = [list(pile) for pile in game._piles]
        fresh._index_piles()
        assert fresh.legal_texts() == game.legal_texts()
        assert fresh.complete == game.complete
        if game.is_over:
            break
        legal = game.legal_moves()
        texts = [str(m) for m in legal]
        assert len(set(texts)) == len(texts)
        before = snapshot(game)
        for text in choice.sample(texts, min(3, len(texts))):
            game.play(text)
            game.undo()
            assert snapshot(game) == before
        move = choice.choice(legal)
        game.play(move)
    assert Game.replay(seed, variant, game.moves).state() == game.state()
    assert Game.replay(seed, variant, [str(m) for m in game.moves]).state() == game.state()


def piles_home(game: Game) -> int:
    return sum(
        bool(pile) and RANKS.index(pile[0][0]) == "ABC".index(spot[0]) for spot, pile in game.grid().items()
    )


@SETTINGS
@given(seed=seeds, variant=variants, play=st.integers(0, 2**32))
def test_swaps_never_cycle_and_what_is_left_at_the_end_keeps_it_over(
    seed: str, variant: str, play: int
) -> None:
    """RULES.md: every legal swap puts at least one more pile home (free-swap aside); once over,
    moves of part of a pile and swaps neither lower the leftover nor keep the game alive."""
    game = Game.new(seed, variant)
    choice = random.Random(play)  # a whole game's choices: too many draws for st.randoms()
    while not game.is_over:
        legal = game.legal_texts()
        others = [t for t in legal if "~" not in t]
        move = choice.choice(others if others and choice.random() < 0.8 else legal)
        home = piles_home(game)
        game.play(move)
        if "~" in move and not game.variant.free_swap:
            assert piles_home(game) > home, move
    before = snapshot(game)
    for text in game.legal_texts():
        game.play(text)
        assert game.is_over and game.leftover == before[0]["leftover"], text
        game.undo()
    assert snapshot(game) == before


@SETTINGS
@given(seed=seeds, variant=variants, choice=st.randoms(use_true_random=False))
def test_undo_all_the_way_back_restores_the_deal(seed: str, variant: str, choice: random.Random) -> None:
    game = Game.new(seed, variant)
    history = [snapshot(game)]
    for _ in range(60):
        if game.is_over:
            break
        game.play(choice.choice(game.legal_moves()))
        history.append(snapshot(game))
    while game.moves:
        game.undo()
        history.pop()
        assert snapshot(game) == history[-1]


# Move texts of every form and some that are none (the parser's own tests try any text).
move_texts = st.one_of(
    st.from_regex(r"\A(T|R|W[0-3]?>[A-C][1-8]|[A-C][1-8]:[0-4]>[A-C][1-8]|[A-C][1-8]~[A-C][1-8])\Z"),
    st.text(alphabet="TRWABC12345678:>~", max_size=8),
)


@SETTINGS
@given(
    seed=seeds,
    variant=variants,
    choice=st.randoms(use_true_random=False),
    steps=st.integers(0, 80),
    texts=st.lists(move_texts, max_size=40),
)
def test_every_listed_move_plays_and_any_other_is_refused_changing_nothing(
    seed: str, variant: str, choice: random.Random, steps: int, texts: list[str]
) -> None:
    game = Game.new(seed, variant)
    for _ in range(steps):
        if game.is_over:
            break
        game.play(choice.choice(game.legal_moves()))
    listed = game.legal_texts()
    before = snapshot(game)
    for text in listed:
        assert str(game.play(text)[0]) == text
        game.undo()
        assert snapshot(game) == before
    candidates = [t for t in all_candidate_texts(game) if t not in set(listed)]
    for text in [*choice.sample(candidates, 60), *texts]:
        try:
            played = game.play(text)
        except (IllegalMove, InvalidMove):
            assert snapshot(game) == before
            continue
        assert str(played[0]) in listed, f"{text} played but was not listed"
        game.undo()
        assert snapshot(game) == before
