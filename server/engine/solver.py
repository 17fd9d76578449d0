"""Par of a deal with the stock order known: the lowest leftover reachable, and a line reaching it.

Pure: no I/O. The search never goes through ``Game`` (too slow and too
concrete); it works on a canonical state, and only the reported line is
mapped back to real spots by replaying it through a ``Game``.

Canonical state, and why it is exact
------------------------------------
A pile only ever holds a run ``c, c+3, c+6, ...`` of one suit (any suit in
``suitless``), so it is fully described by its bottom card and its top card.
What can happen next depends on the piles only through two multisets:

* the **tops** (a waste card or a pile bottom ``b`` needs a top ``b - 3``),
* the **bottoms** (a pile whose bottom is ``b`` can move whole onto such a top,
  freeing a spot that the stock or waste refills: one card fewer left over).

A whole-pile move removes one bottom ``b`` and one top ``b - 3`` whichever two
piles carry them, so the pairing of bottoms with tops never matters, nor does
where a pile stands (building ignores spots). Hence (rule **D1**) the grid is
the pair of multisets, packed as 4-bit counts per card key into one int.

Rule **D2**: a move of part of a pile (``X:k>Y``, k > 0) lands on a card
identical to the one it leaves on top (same key), so both multisets stay the
same; a swap moves no card. Both are the identity on the canonical state, so
the search never generates them.

The stock and waste are kept exactly: a stock position ``ptr`` into a
sequence (the deal's stock, or after a redeal the turned-over waste) and the
waste as a tuple, bottom first. Every move either lowers the leftover, moves
``ptr`` forward, or spends the redeal, so the state graph is acyclic and a
transposition table of failed thresholds is sound.

Search: the greedy line, then capped beams over turn windows find a good
line fast (the upper bound); a depth-first branch and bound with the
transposition table tries to beat it, pruned by three admissible bounds
(``Model.bound``): the link bound, the waste-stack bound once the stock is
empty, and while it is not the stock-phase bound (waste cards that cannot
leave before the stock runs out, walked as the waste-stack bound from the
moment they are exposed); finishing it proves the par optimal.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from .cards import FIRST_VALUE, parse_card
from .game import Game
from .moves import Move
from .variants import Variant

# Abstract moves: kind | arg << 2. A waste play names its waste, a merge the
# key of the bottom card of the pile that moves whole.
TURN = 0
REDEAL = 1
WASTE = 2
MERGE = 3

_NIB = 8  # bits per count: counts stay below 16, the spare bits let _lane_min work lane by lane
_BOT = 512  # bottoms live above the tops in the packed grid int
_MAX_KEY = 56


def _nonzero_nibbles(x: int, ones: int) -> int:
    """One bit (the low bit of each lane) per non-zero count (counts are below 16)."""
    return (x | x >> 1 | x >> 2 | x >> 3) & ones


def _lane_sum(x: int, ones: int) -> int:
    """The sum of the lanes of ``x`` (each below 32), by bit planes."""
    return sum(((x >> b) & ones).bit_count() << b for b in range(5))


class OutOfBudget(Exception):
    """The time or node budget ran out; the search keeps its best line."""


@dataclass(frozen=True, slots=True)
class Position:
    """Everything the solver needs of a game: piles, stock (top first), wastes (bottom first)."""

    variant: Variant
    piles: tuple[tuple[int, ...], ...]
    stock: tuple[int, ...]
    wastes: tuple[tuple[int, ...], ...]
    redeals: int

    @classmethod
    def of_game(cls, game: Game) -> Position:
        """The position of a game, stock order included (the solver knows the deal)."""
        s = game.state()
        wastes = s["waste"] if game.variant.wastes > 1 else [s["waste"]]
        return cls(
            game.variant,
            tuple(tuple(parse_card(c) for c in pile) for pile in s["grid"].values()),
            tuple(parse_card(c) for c in s["stock"]),
            tuple(tuple(parse_card(c) for c in w) for w in wastes),
            game.redeals_left,
        )


# A search state: (grid, ptr, wastes, redeals, stock sequence).
State = tuple[int, int, tuple[tuple[int, ...], ...], int, tuple[int, ...]]


@dataclass(slots=True)
class Solution:
    """What ``solve`` found: ``moves`` replay in a ``Game`` to leftover ``par``."""

    par: int
    proven: bool
    lower_bound: int
    moves: list[str]
    nodes: int
    seconds: float
    abstract: list[int] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "par": self.par,
            "proven": self.proven,
            "lower_bound": self.lower_bound,
            "moves": self.moves,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 3),
        }


class Model:
    """The rules on canonical states, for one variant and one initial position."""

    def __init__(self, position: Position) -> None:
        v = position.variant
        self.variant = v
        self.suitless = v.suitless
        self.three = v.wastes > 1
        self.copies = v.decks * (4 if v.suitless else 1)
        shift = 2 if v.suitless else 0
        self.key = [c >> shift for c in range(_MAX_KEY)]
        step = 3 if v.suitless else 12
        self.step = step
        # need[k]: the key a card of key k builds on, or -1 for a base rank.
        self.need = [-1] * _MAX_KEY
        for c in range(FIRST_VALUE << 2, _MAX_KEY):
            if (c >> 2) - 3 >= FIRST_VALUE:
                self.need[c >> shift] = (c >> shift) - step
        self.keys = sorted({self.key[c] for c in range(FIRST_VALUE << 2, _MAX_KEY)})
        self.nonbase = [k for k in self.keys if self.need[k] >= 0]
        ones = 0
        for k in range(_MAX_KEY):
            ones |= 1 << (_NIB * k)
        self.ones = ones
        self.nonbase_mask = sum(1 << (_NIB * k) for k in self.nonbase)
        self.top_mask = (1 << _BOT) - 1
        self.nonbase_full = self.nonbase_mask * 255
        self.nonbase_high = self.nonbase_mask << 7
        self._suffixes: dict[int, tuple[tuple[int, ...], list[int]]] = {}
        self._packed: dict[tuple[int, ...], int] = {}
        grid = 0
        for pile in position.piles:
            if pile:
                grid += (1 << (_NIB * self.key[pile[-1]])) + (1 << (_NIB * self.key[pile[0]] + _BOT))
        self.root: State = (grid, 0, position.wastes, position.redeals, position.stock)
        # 1 gives the one-card-turn game, a relaxation of classic: a 3-card turn
        # is three 1-card turns with no move between, so every classic line is
        # a line of it and its par is a lower bound (docs/solver.md measures
        # why that bound is too weak to certify classic pars). Not used by solve().
        self.turn_size = 3
        # B3 needs one waste, every spot filled and base ranks only at bottoms.
        self.spots = sum(1 for pile in position.piles if pile)
        everything = [c for pile in position.piles for c in pile] + list(position.stock)
        everything += [c for w in position.wastes for c in w]
        self.base_total = sum(1 for c in everything if self.need[self.key[c]] < 0)
        self.b3 = not self.three and all(position.piles)
        self.restricted = False  # set when a three-waste refill had to be skipped
        self.nodes = 0

    # -------------------------------------------------------------- basics

    @staticmethod
    def leftover(s: State) -> int:
        return len(s[4]) - s[1] + sum(len(w) for w in s[2])

    def tt_key(self, s: State) -> object:
        """The transposition key: the stock sequence only matters once a redeal made a new one."""
        return s if s[3] < self.variant.redeals else s[:4]

    def tops(self, grid: int, k: int) -> int:
        return (grid >> (_NIB * k)) & 15

    def bottoms(self, grid: int, k: int) -> int:
        return (grid >> (_NIB * k + _BOT)) & 15

    def mergeable(self, grid: int) -> Iterator[int]:
        """Keys b with a pile bottomed b and a top b - 3: whole-pile moves (D1: one per key)."""
        bots = _nonzero_nibbles(grid >> _BOT, self.ones) & self.nonbase_mask
        tops = _nonzero_nibbles(grid & self.top_mask, self.ones) << (_NIB * self.step)
        both = bots & tops
        while both:
            low = both & -both
            yield (low.bit_length() - 1) // _NIB
            both ^= low

    # ---------------------------------------------------------------- moves

    def play(self, s: State, move: int) -> State | None:
        """The state after an abstract move, or None if the model cannot play it exactly."""
        grid, ptr, wastes, redeals, stock = s
        kind, arg = move & 3, move >> 2
        if kind == TURN:
            n = len(wastes)
            got = stock[ptr : ptr + self.turn_size] if n == 1 else stock[ptr : ptr + n]
            if n == 1:
                return grid, ptr + len(got), (wastes[0] + got,), redeals, stock
            new = list(wastes)
            for i, c in enumerate(got):
                new[i] = new[i] + (c,)
            return grid, ptr + len(got), tuple(new), redeals, stock
        if kind == REDEAL:
            return grid, 0, ((),), redeals - 1, wastes[0]
        if kind == WASTE:
            w = wastes[arg]
            k = self.key[w[-1]]
            grid += (1 << (_NIB * k)) - (1 << (_NIB * self.need[k]))
            new = list(wastes)
            new[arg] = w[:-1]
            return grid, ptr, tuple(new), redeals, stock
        b = arg
        grid -= (1 << (_NIB * b + _BOT)) + (1 << (_NIB * self.need[b]))
        if ptr < len(stock):
            r = stock[ptr]
            ptr += 1
        else:
            full = [i for i, w in enumerate(wastes) if w]
            if not full:
                return grid, ptr, wastes, redeals, stock  # a win: the spot stays empty
            if len(full) > 1:
                # three-waste: the refill depends on the spot's row, which the
                # canonical state forgets; the model does not play this move.
                self.restricted = True
                return None
            i = full[0]
            r = wastes[i][-1]
            new = list(wastes)
            new[i] = wastes[i][:-1]
            wastes = tuple(new)
        k = self.key[r]
        grid += (1 << (_NIB * k)) + (1 << (_NIB * k + _BOT))
        return grid, ptr, wastes, redeals, stock

    def window_moves(self, s: State) -> list[int]:
        """Moves that lower the leftover, best first; a forced one (D3) alone."""
        grid, _ptr, wastes, redeals, _stock = s
        plays: list[int] = []
        for i, w in enumerate(wastes):
            if w:
                k = self.key[w[-1]]
                n = self.need[k]
                if n >= 0 and self.tops(grid, n):
                    if redeals == 0 and self._only_user(s, k, w):
                        return [WASTE | i << 2]
                    plays.append(WASTE | i << 2)
        plays.extend(MERGE | b << 2 for b in self.mergeable(grid))
        return plays

    def _only_user(self, s: State, k: int, waste: tuple[int, ...]) -> bool:
        """D3 (forced waste play): nothing but this card can ever use the top it fits on.

        The top ``k - 3`` serves only cards of key ``k``. If no pile is bottomed
        ``k`` and every other card of key ``k`` already lies on the grid, only
        this waste card can ever use that top. Any line that leaves it in the
        waste is matched, move for move, by the line that plays it now: turns
        do not look at the waste, the other waste cards keep their order, and
        where the old line later refills a spot with this card (stock empty) and
        builds on it, the new line has the same card on the grid one merge
        ahead. Without a redeal left, that is: a redeal would re-deal this card
        and shift every later turn by one.
        """
        grid, ptr, wastes, _redeals, stock = s
        if self.bottoms(grid, k):
            return False
        off = 0
        key = self.key
        for c in stock[ptr:]:
            if key[c] == k:
                return False
        for w in wastes:
            for c in w:
                if key[c] == k:
                    off += 1
        return off == 1 and key[waste[-1]] == k

    def turn_moves(self, s: State) -> list[int]:
        _grid, ptr, wastes, redeals, stock = s
        if ptr < len(stock):
            return [TURN]
        if redeals and wastes[0]:
            return [REDEAL]
        return []

    # ---------------------------------------------------------------- bound

    def link_bound(self, s: State) -> int:
        """An admissible lower bound on the final leftover.

        Every card that reaches the grid adds exactly one link (a card lying on
        the card three below it): a waste play links the card itself, a merge
        links the moved pile's bottom and its refill card arrives as a new
        bottom. Links are never undone (D2 moves trade one for an identical
        one). A new link above key ``n`` (a card of key ``k`` on one of key
        ``n = k - 3``) needs a card ``k`` that is off the grid or a pile bottom,
        and a top ``n`` that is a top now or a card ``n`` still to come; so at
        most ``min`` of the two per key, and the leftover cannot fall by more
        than their sum.
        """
        grid, ptr, wastes, _redeals, stock = s
        off = self.suffix(stock)[ptr]
        for w in wastes:
            off += self.packed(w)
        a = (off + (grid >> _BOT)) & self.nonbase_full  # lane k: cards k off the grid or at a bottom
        b = ((off + (grid & self.top_mask)) << (_NIB * self.step)) & self.nonbase_full  # tops k-3 to be
        ge = (((a | self.nonbase_high) - b) & self.nonbase_high) >> 7  # 1 in the lanes where a >= b
        links = _lane_sum((b & ge * 255) | (a & ~(ge * 255)), self.ones)
        bound = self.leftover(s) - links
        if ptr == len(stock) and s[3] == 0 and len(wastes) == 1:
            bound = max(bound, self.waste_stack_bound(grid, wastes[0]))
        return max(0, bound)

    def suffix(self, stock: tuple[int, ...]) -> list[int]:
        """Packed counts per key of ``stock[ptr:]``, for every ``ptr``."""
        got = self._suffixes.get(id(stock))
        if got is None or got[0] is not stock:
            out = [0] * (len(stock) + 1)
            for i in range(len(stock) - 1, -1, -1):
                out[i] = out[i + 1] + (1 << (_NIB * self.key[stock[i]]))
            got = (stock, out)
            self._suffixes[id(stock)] = got
        return got[1]

    def packed(self, waste: tuple[int, ...]) -> int:
        """Packed counts per key of a waste (cached: wastes repeat along the search)."""
        got = self._packed.get(waste)
        if got is None:
            if len(self._packed) > 200_000:
                self._packed.clear()
            got = sum(1 << (_NIB * self.key[c]) for c in waste)
            self._packed[waste] = got
        return got

    def waste_stack_bound(self, grid: int, waste: tuple[int, ...]) -> int:
        """Cards certainly stuck in the waste once the stock is empty and no redeal is left.

        Then the waste is a stack that only shrinks from the top: the top card
        leaves by a waste play (it needs a top ``need``) or as the refill of a
        whole-pile move (every merge takes the waste top). Per key ``n`` the
        walk counts ``cum[n]``, the cards ``n`` that are or have been tops
        (tops now, and cards that left the waste), and the waste plays onto
        cards ``n`` so far; ``units[n]`` is their difference. Relaxation:
        walking the waste from the top, a card of key ``k`` is played when
        ``units[need k] >= 1``, otherwise refilled; merges are allowed while
        the merges used (refills) stay at most the allowance, the sum over
        keys ``k`` of ``min(bottoms k, units[need k])`` (bottoms: the grid's
        non-base ones, plus every card the walk refilled). The first card that
        can leave neither way stays, with everything under it.

        Why it is admissible. (1) The real line's own choices (which cards it
        plays, which it refills) obey these rules: a real play onto ``n``
        needs an uncovered card ``n`` that has been a top, and plays and
        merges each cover a distinct one for good, so ``units >= 1``; the real
        merges of ``k`` bottoms so far number at most the ``k`` bottoms there
        ever were and at most ``cum[n]`` minus the plays onto ``n`` (the same
        distinct cards), so the merges never exceed the allowance. (2) Among
        lines obeying the rules the walk's (play whenever a unit is left)
        removes the most: playing a card ``k`` or refilling it both change the
        slack (allowance minus merges used) by ``-[bottoms k >= units]``, and
        leave states that differ only by one more ``k`` bottom, one more unit
        and one more merge used on the refill side; every later step changes
        both slacks alike (checked case by case: a new card ``need k``, a new
        ``k`` bottom, a later ``k`` card played on both sides), and at the
        first later card ``k`` the play side has no unit for, the play side
        refills it and the refill side plays it: the states are then equal.
        So the walk is never stuck where the real line goes on. (Before this
        session a seen top served every later card, and every card leaving
        the waste counted as a possible bottom; the tests check the new rule
        on every reachable state of small deals.)
        """
        return self._stack_walk(waste, grid & self.top_mask, grid >> _BOT)

    def _stack_walk(
        self, waste: tuple[int, ...], cum: int, bots: int, sure: int = -1, free: int = 0, charge: int = 0
    ) -> int:
        """The walk of ``waste_stack_bound``; how many cards at the bottom of ``waste`` certainly stay.

        ``cum`` counts per key (lane) the cards that are or have been tops;
        ``bots`` bounds per key the non-base bottoms; ``charge`` merges are
        used up before the walk. Every merge of a ``k`` bottom and every play
        of a ``k`` card covers a distinct card ``need[k]`` that has been a
        top, so the merges of ``k`` bottoms number at most ``min(bots[k],
        cum[need[k]] - plays onto need[k])``; the allowance is the sum over
        keys (see ``waste_stack_bound`` for the proof). With ``sure`` (bottoms
        known to be there, per key) and ``free`` (how many others there are,
        keys unknown), the merges after ``charge`` are also at most ``free``
        plus the sum of ``min(sure[k], cum[need[k]])`` (plays not counted
        there: looser, and the play-or-refill argument still holds since a
        play never lowers it). Refilled cards join ``bots`` and ``sure``.
        """
        key, need = self.key, self.need
        step = _NIB * self.step
        full, high, ones = self.nonbase_full, self.nonbase_high, self.ones
        need_cum = (cum << step) & full

        def min_sum(x: int) -> int:
            x &= full
            ge = (((x | high) - need_cum) & high) >> 7  # lanes where x >= cum of the need
            return _lane_sum((need_cum & ge * 255) | (x & ~(ge * 255)), ones)

        allowance = min_sum(bots)
        two = sure >= 0
        other = free + min_sum(sure) if two else allowance
        used = charge
        played = 0  # per key n: waste plays onto cards n so far
        if used > allowance:
            # Not every charged arrival can come (each needs a merge): the ones
            # that cannot stay off the grid, and so does all of the waste.
            return len(waste) + used - allowance
        for depth in range(len(waste) - 1, -1, -1):
            k = key[waste[depth]]
            n = need[k]
            lane = _NIB * k
            lane_n = _NIB * n
            units = ((cum >> lane_n) & 255) - ((played >> lane_n) & 255) if n >= 0 else 0
            if units:
                # A waste play covers a card n for good: the k bottoms lose a
                # possible merge when they were not fewer than the cards n left.
                if (bots >> lane) & 255 >= units:
                    allowance -= 1
                    if used > allowance:
                        return depth + 1  # a refill instead would cost the same
                played += 1 << lane_n
            elif used < allowance and (used - charge < other or not two):
                used += 1  # a refill: a new bottom k, no cards n left for it in ``allowance``
                if n >= 0:
                    if two and (sure >> lane) & 255 < (cum >> lane_n) & 255:
                        other += 1  # ``other`` does not count plays: cards n may be there
                    bots += 1 << lane
                    sure += 1 << lane
            else:
                return depth + 1
            # one more card k has been a top: one more bottom k + 3 may merge
            c = (cum >> lane) & 255
            up = lane + step
            if (bots >> up) & 255 > c - ((played >> lane) & 255):
                allowance += 1
            if two and (sure >> up) & 255 > c:
                other += 1
            cum += 1 << lane
        return 0

    def stock_phase_bound(self, s: State) -> int:
        """B3: cards of the waste that certainly stay, while the stock is not empty (no redeal left).

        **The frozen part Z.** While the stock is not empty a waste card leaves
        only by a waste play (a whole-pile move takes its refill from the
        stock). Its need must then be a top, and a top at any later time is a
        top now or a card that reached the grid since: a stock card or a waste
        card above it (cards below it cannot leave first). Walking the waste
        from the top with ``avail`` = keys that are tops now, in the stock, or
        above in the waste, the first card that is a base rank or whose need is
        not in ``avail`` cannot leave before the stock is empty; it and all the
        cards under it (Z) are still in the waste then. Counting copies is
        sharper and still sound: each play covers a distinct card of its need
        key for good, so the cards of key ``n`` the waste cards above can have
        landed on number at most the tops ``n`` now, plus the stock's cards
        ``n``, plus the cards ``n`` above that left, minus those already
        covered by the plays above (``supply``); a card whose need has none
        left is frozen. (Plays of stock cards and merges also use tops up;
        ignoring that only makes ``supply`` larger.)

        **Exposure.** Z can only start to leave once the stock is empty and
        everything turned onto it has left: the waste is then exactly Z and
        every other card of the position is on the grid. Then (1) the tops are
        keys of ``avail`` (tops now, or cards that arrived from the stock or from
        above Z); (2) base ranks lie only at pile bottoms (they fit on nothing)
        and every spot holds a pile (the waste refills it), so the non-base
        bottoms number exactly ``spots - (base cards of the position - base
        cards of Z)``; (3) a grid bottom ``b`` whose need has no copy in
        ``avail`` cannot have moved before exposure (its move needs a top
        ``need[b]``), so it is still a bottom then, and waits for its need; so
        does every card still to arrive (stock, waste above Z) with such a
        need: it is on the grid at exposure, could only come by a refill (no
        top to play it on), and cannot have moved since.
        From exposure on, ``waste_stack_bound``'s relaxation and its proof apply
        unchanged to Z: seen = ``avail``, allowance = the other non-base bottoms
        (all counted, whatever their need), pending = those waiting bottoms. A
        line that never exposes Z leaves all of Z, at least the walk's answer.
        If the counts say exposure is impossible, all of Z stays.

        **Charge.** Before exposure every arrival that cannot be played (a
        base rank, or a need with no copy outside Z) comes by a refill, so by
        a merge; merges are bounded as in the walk (per key, bottoms and
        copies of their need that can be tops). If these refills alone exceed
        that allowance, the excess cards never reach the grid, whether or not
        Z exists (so the bound can bite with an empty waste too), and Z stays.
        """
        grid, ptr, wastes, _redeals, stock = s
        waste = wastes[0]
        ones = self.ones
        key, need = self.key, self.need
        supply = (grid & self.top_mask) + self.suffix(stock)[ptr]  # per key: tops now and stock cards
        avail = _nonzero_nibbles(supply, ones)
        depth = len(waste) - 1
        while depth >= 0:
            k = key[waste[depth]]
            n = need[k]
            if n < 0 or not (supply >> (_NIB * n)) & 255:
                break
            supply += (1 << (_NIB * k)) - (1 << (_NIB * n))
            avail |= 1 << (_NIB * k)
            depth -= 1
        frozen = waste[: depth + 1]  # may be empty: the arrivals' charge alone can still bite
        base_z = sum(1 for c in frozen if need[key[c]] < 0)
        # Bottoms at exposure that wait for their need: grid bottoms now, and every
        # card still to arrive (stock, waste above Z), whose need is not in avail.
        arriving = self.suffix(stock)[ptr] + self.packed(waste[depth + 1 :])
        need_avail = (avail << _NIB * self.step) & self.nonbase_mask
        waiting = ((grid >> _BOT) + arriving) & (self.nonbase_mask ^ need_avail) * 255
        free = self.spots - self.base_total + base_z - _lane_sum(waiting, ones)  # the other bottoms
        if free < 0 and frozen:
            return len(frozen)
        cum = (grid & self.top_mask) + arriving  # copies outside Z not covered now
        # Arrivals that cannot be played (base ranks, needs not in avail) come by refills.
        late = arriving & (self.nonbase_mask ^ need_avail) * 255
        charge = _lane_sum(arriving & (ones ^ self.nonbase_mask) * 255, ones) + _lane_sum(late, ones)
        bots = ((grid >> _BOT) & self.nonbase_full) + late
        return self._stack_walk(frozen, cum, bots, waiting if frozen else -1, free, charge)

    def bound(self, s: State) -> int:
        """The best admissible lower bound: B1 and B2 (``link_bound``), B3 while cards are in the stock."""
        b = self.link_bound(s)
        if self.b3 and s[1] < len(s[4]) and s[3] == 0:
            b = max(b, self.stock_phase_bound(s))
        return b


# Paths are linked lists (move, parent) so states share their history.
Path = tuple[int, "Path"] | None


def _unwind(path: Path) -> list[int]:
    out: list[int] = []
    while path is not None:
        out.append(path[0])
        path = path[1]
    return out[::-1]


def _mobility(m: Model, s: State) -> int:
    """Beam tiebreak: how many tops could still take a card (more is more freedom)."""
    grid = s[0]
    return sum(1 for k in m.nonbase if m.tops(grid, m.need[k]))


class _Search:
    def __init__(self, m: Model, deadline: float, max_nodes: int) -> None:
        self.m = m
        self.deadline = deadline
        self.max_nodes = max_nodes
        self.best = m.leftover(m.root)
        self.best_path: Path = None
        self.failed: dict[object, int] = {}
        self.cap = 1 << 30  # the branch and bound looks for leftovers <= min(best - 1, cap)
        self.floor = 0  # a certified lower bound: reaching it ends the search

    def tick(self) -> None:
        m = self.m
        m.nodes += 1
        if m.nodes >= self.max_nodes or (m.nodes & 1023 == 0 and time.perf_counter() > self.deadline):
            raise OutOfBudget

    def offer(self, s: State, path: Path) -> None:
        left = self.m.leftover(s)
        if left < self.best:
            self.best, self.best_path = left, path

    def greedy(self) -> None:
        """Offer the greedy line (waste plays, whole piles, then turn) as a first incumbent."""
        m = self.m
        s = m.root
        path: Path = None
        while True:
            self.offer(s, path)
            for mv in m.window_moves(s) + m.turn_moves(s):
                c = m.play(s, mv)
                if c is not None:
                    s, path = c, (mv, path)
                    break
            else:
                return

    # ------------------------------------------------------------- beam

    def beam(self, width: int, cap: int = 0) -> None:
        """Best line found keeping ``width`` states per turn window.

        ``cap`` (if not 0) bounds the states explored inside one window from
        one beam state (depth first, best moves first): a cheaper, rougher beam.
        """
        m = self.m
        layer: list[tuple[State, Path]] = [(m.root, None)]
        seen: set[object] = set()
        while layer:
            nxt: dict[object, tuple[State, Path]] = {}
            for root, rpath in layer:
                stack = [(root, rpath)]
                explored = 0
                while stack:
                    s, path = stack.pop()
                    self.tick()
                    self.offer(s, path)
                    explored += 1
                    for mv in m.window_moves(s) if not cap or explored <= cap else ():
                        c = m.play(s, mv)
                        if c is None:
                            continue
                        key = m.tt_key(c)
                        if key not in seen:
                            seen.add(key)
                            stack.append((c, (mv, path)))
                    for mv in m.turn_moves(s):
                        c = m.play(s, mv)
                        if c is not None:
                            nxt.setdefault(m.tt_key(c), (c, (mv, path)))
            ranked = sorted(nxt.values(), key=lambda e: (m.leftover(e[0]), -_mobility(m, e[0])))
            layer = ranked[:width]
            if self.best == 0:
                return

    # ------------------------------------------------------ branch and bound

    def prove(self) -> bool:
        """Depth-first search for anything below the best; True when it finished."""
        self.failed = {}
        return self.refute(self.best - 1, 0)

    def refute(self, target: int, floor: int) -> bool:
        """Search every line for a leftover <= ``target`` (or below the best, if lower).

        True when the search finished: nothing below ``min(target, best - 1)``
        + 1 exists, whatever it found. ``floor`` is a certified lower bound:
        a line reaching it ends the search. The transposition table
        (``failed``, kept across calls) holds per state a leftover no line
        from it reaches or goes below.
        """
        self.cap, self.floor = target, floor
        self._dfs(self.m.root, None)
        return True

    def raise_bound(self, lower: int) -> int:
        """Refute "leftover <= t" for t = ``lower``, ``lower`` + 1, ... until the budget ends or t reaches the best.

        Returns the certified lower bound reached: the best's leftover when
        it is proven optimal (a refutation finished just below it, or a line
        was found at a refuted target's next value).
        """
        try:
            while lower < self.best:
                self.refute(lower, lower)
                if self.best <= lower:
                    return self.best
                lower += 1
        except OutOfBudget:
            pass
        return lower

    def _dfs(self, s: State, path: Path) -> None:
        m = self.m
        self.tick()
        self.offer(s, path)
        target = min(self.best - 1, self.cap)  # looking for a leftover <= target
        if target < 0 or self.best <= self.floor:
            return
        key = m.tt_key(s)
        if self.failed.get(key, -1) >= target or m.bound(s) > target:
            return
        for mv in m.window_moves(s) + m.turn_moves(s):
            c = m.play(s, mv)
            if c is not None:
                self._dfs(c, (mv, path))
                if self.best <= self.floor:
                    return
        # Whatever was found below, nothing under it reaches the target now.
        self.failed[key] = min(self.best - 1, self.cap)


def realize(position: Position, game: Game, line: Sequence[int]) -> list[Move]:
    """Play an abstract line on ``game`` (which must be at ``position``); the moves recorded.

    The engine checks each move as it goes.
    """
    m = Model(position)
    out: list[Move] = []
    for mv in line:
        out.extend(game.play(real_move(game, m, mv)))
    return out


def real_move(game: Game, model: Model, mv: int) -> Move:
    """The engine move for an abstract one in this game (D1: any matching pile will do)."""
    kind, arg = mv & 3, mv >> 2
    if kind == TURN:
        return Move.turn()
    if kind == REDEAL:
        return Move.redeal()
    names = game.spot_names
    grid = [[parse_card(c) for c in p] for p in game.grid().values()]
    key, need = model.key, model.need
    if kind == WASTE:
        three = game.variant.wastes > 1
        waste = game.state()["waste"]
        top = parse_card((waste[arg] if three else waste)[-1])
        y = next(y for y, p in enumerate(grid) if p and key[p[-1]] == need[key[top]])
        return Move.from_waste(names[y], arg + 1 if three else 0)
    assert kind == MERGE
    x = next(x for x, p in enumerate(grid) if p and key[p[0]] == arg)
    y = next(y for y, p in enumerate(grid) if p and y != x and key[p[-1]] == need[arg])
    return Move.from_pile(names[x], 0, names[y])


def solve_position(
    position: Position,
    *,
    budget_s: float = 10.0,
    max_nodes: int = 10**9,
    beam_widths: Sequence[int] = (100, 300, 1000, 3000, 10000),
    prove: bool = True,
    caps: Sequence[int] = (50, 50, 50, 50, 50),
    beam_share: float = 0.6,
    top_down_share: float = 0.4,
    clock: Callable[[], float] = time.perf_counter,
) -> Solution:
    """Best line from ``position`` within the budget; ``proven`` when the search finished.

    A greedy line first (an incumbent whatever the budget), then beams of
    growing width, each exploring at most ``caps[i]`` states per window and
    beam state, take up to ``beam_share`` of the budget; branch and bound
    spends ``top_down_share`` of the rest trying to beat the best line (a
    proof when it finishes), then raises ``lower_bound`` by refuting
    leftovers 0, 1, 2, ... in turn (each finished refutation is a proof that
    the par is higher; reaching the best line's leftover proves it). Capped beams: on deals 1..5
    of ``open``, width 3000 with cap 50 finds a mean of 11.0 in under 4 s
    where an uncapped width-20 beam needs 2 s for about 18 (the uncapped
    closure of each window, every order of its plays and whole-pile moves,
    costs far more than the width).
    """
    start = clock()
    m = Model(position)
    lower = m.bound(m.root)
    search = _Search(m, start + budget_s, max_nodes)
    search.greedy()  # an incumbent at once: never worse than greedy, whatever the budget
    proven = False
    try:
        for i, width in enumerate(beam_widths):
            if search.best <= lower or clock() - start > budget_s * beam_share:
                break
            search.deadline = start + budget_s * beam_share if prove else start + budget_s
            search.beam(width, caps[i] if i < len(caps) else 0)
    except OutOfBudget:
        pass
    search.deadline = start + budget_s
    search.floor = lower
    if search.best <= lower:
        proven = True
    elif prove:
        # First try to beat the best line outright (a proof if it finishes),
        # then raise the certified bound target by target from below: each
        # finished refutation of "leftover <= t" proves par > t; a line found
        # at t is then optimal. The table of refuted targets is shared.
        search.deadline = clock() + (start + budget_s - clock()) * top_down_share
        try:
            proven = search.refute(search.best - 1, lower)
        except OutOfBudget:
            search.deadline = start + budget_s
            lower = search.raise_bound(lower)
            proven = search.best <= lower
        if m.restricted:  # three-waste: the model skipped refills, it proves nothing
            proven = False
            lower = m.bound(m.root) if m.b3 else m.link_bound(m.root)
    if proven:
        lower = search.best
    return Solution(
        par=search.best,
        proven=proven,
        lower_bound=lower,
        moves=[],
        nodes=m.nodes,
        seconds=clock() - start,
        abstract=_unwind(search.best_path),
    )


def solve(seed: str, variant: str = "classic", *, budget_s: float = 10.0, max_nodes: int = 10**9) -> Solution:
    """The par of a deal, with a line the engine has replayed to that leftover."""
    game = Game.new(seed, variant)
    position = Position.of_game(game)
    sol = solve_position(position, budget_s=budget_s, max_nodes=max_nodes)
    sol.moves = [str(mv) for mv in realize(position, game, sol.abstract)]
    if game.leftover != sol.par:
        raise AssertionError(f"line replays to {game.leftover}, not the claimed {sol.par}")
    return sol
