"""The game: one player's deal, its legal moves, play, undo (RULES.md, "Play").

Shaped like python-chess's Board: ``legal_moves()``, ``play()``/``undo()``,
and one precise exception, ``IllegalMove``, naming the move and the reason.
``BaseGame`` holds the rules and plays from any position; ``Game`` deals its
position from a seed (the server's, which knows every card), ``ClientGame``
(``client_game.py``) builds it from what a player sees.

Speed matters (every validated move of every match passes here), so the state
is plain lists of int cards plus an incremental index: for every top card,
the spots whose pile ends in it. Finding where a card fits is then one list
lookup instead of a scan of the grid. Moves are interned per grid size, so
listing legal moves allocates nothing but the list.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence
from functools import cache
from typing import Any

from .cards import BASE_RANKS, BUILD_DELTA, FIRST_VALUE, HIDDEN, card_text, shuffled_deck
from .moves import InvalidMove, Move, MoveKind
from .variants import Variant, get_variant

PILE_MAX = 4  # base, +3, +6, +9: no pile can hold more
RATINGS = ((0, "win"), (2, "brilliant"), (5, "excellent"), (10, "good"))


class IllegalMove(ValueError):
    """A well-formed move that the rules forbid in this position."""

    def __init__(self, move: Move | str, reason: str) -> None:
        super().__init__(f"{move}: {reason}")
        self.move = move
        self.reason = reason


def rating(score: int) -> str | None:
    """The Bicycle rating of a final leftover, or None below "good"."""
    for limit, name in RATINGS:
        if score <= limit:
            return name
    return None


class _Table:
    """Spot names and the interned moves of one grid width."""

    def __init__(self, columns: int) -> None:
        n = 3 * columns
        self.columns = columns
        self.names = tuple(f"{'ABC'[i // columns]}{i % columns + 1}" for i in range(n))
        self.index = {name: i for i, name in enumerate(self.names)}
        self.row = tuple(i // columns for i in range(n))
        self.row_spots = tuple(tuple(range(r * columns, (r + 1) * columns)) for r in range(3))
        self.pile = [
            [[Move.from_pile(self.names[x], k, self.names[y]) for y in range(n)] for k in range(PILE_MAX)]
            for x in range(n)
        ]
        self.waste = [[Move.from_waste(self.names[y], w) for y in range(n)] for w in range(4)]
        self.swap = [
            [Move.swap(self.names[x], self.names[y]) if x != y else None for y in range(n)] for x in range(n)
        ]
        self.swap_by_pair = [m for moves in self.swap for m in moves]  # at x * n + y
        self.swap_text_by_pair = [m.text if m else "" for m in self.swap_by_pair]


@cache
def _table(columns: int) -> _Table:
    return _Table(columns)


def spot_names(variant: Variant) -> tuple[str, ...]:
    """The spots of the variant's grid, in spot order (A1..A8, B1..B8, C1..C8 in classic)."""
    return _table(variant.columns).names


def waste_names(variant: Variant) -> tuple[str, ...]:
    """The wastes as moves and reveals name them: ``W``, or ``W1 W2 W3`` in three-waste."""
    return ("W",) if variant.wastes == 1 else tuple(f"W{w + 1}" for w in range(variant.wastes))


# What a spot's bottom card says about swaps: the row it is the base rank of
# (0..2), _NO_HOME for any other rank, _EMPTY for an empty spot. Swaps depend
# on nothing else, so the swap list is kept until one of these changes.
_NO_HOME, _EMPTY = 3, 4
_HOME = [v if 0 <= (v := (c >> 2) - FIRST_VALUE) < 3 else _NO_HOME for c in range(64)]
# A hidden card's rank is unknown: its pile swaps with nothing until it is revealed (as an empty
# spot), so no swap a client offers can turn out illegal when the card comes into view.
_HOME[HIDDEN] = _EMPTY


def _keys(shift: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Each card's key, and the key of the top it builds on (-1: none), for ``BaseGame``'s index of
    tops: a card's own (suits count), or its value's alone (``suitless``)."""
    key = tuple(c >> shift for c in range(64))
    need = tuple((c - BUILD_DELTA) >> shift if (c >> 2) - 3 >= FIRST_VALUE else -1 for c in range(64))
    return key, need


_KEYS = {False: _keys(0), True: _keys(2)}  # by ``Variant.suitless``: the same for every game


def _home_of(pile: list[int]) -> int:
    return _HOME[pile[0]] if pile else _EMPTY


# Where an emptied spot's refill came from, in a pile move's undo record
# (a waste index >= 0, or None when it stayed empty).
_STOCK = -1
_NOT_EMPTIED = -2

_TURN = Move.turn()
_REDEAL = Move.redeal()
_PILE, _SWAP, _TURN_KIND, _WASTE = MoveKind.PILE, MoveKind.SWAP, MoveKind.TURN, MoveKind.WASTE

# Undo records: (kind, a, b, c, d, auto). Kinds are the MoveKind members.
_Record = tuple[MoveKind, Any, int, int, int, bool]


class BaseGame:
    """One player's game of Devil's Grip from any position: the rules, play, undo and views.

    ``piles`` in spot order, bottom first; ``stock`` and each waste with their
    tops at the end. The lists become the position's own.
    """

    def __init__(
        self,
        variant: Variant,
        piles: list[list[int]],
        stock: list[int],
        wastes: list[list[int]],
        redeals_left: int,
    ) -> None:
        v = variant
        self.variant = v
        self._t = _table(v.columns)
        self._n = v.spots
        self._piles = piles
        self._stock = stock  # top at the end
        self._wastes = wastes  # tops at the end
        self._waste_names = waste_names(v)
        self._redeals_left = redeals_left
        # A card builds on the top whose key is need[card]; tops are indexed by key.
        self._key, self._need = _KEYS[v.suitless]
        self._tops: list[list[int]] = []
        self._texts: list[tuple[str, ...]] = []  # tuples: a view hands them out without copying
        self._strings: list[str] = []  # each pile's cards as one text: v2's check reads them every move
        self._homes: list[int] = []  # per spot: _HOME of its bottom card, or _EMPTY
        self._complete = 0  # full piles in their home row: every view and progress shows it
        self._empty: list[int] = []  # spots left empty (only when stock and waste are)
        self._swaps: tuple[list[Move], list[str]] | None = None  # cached; depends on bottoms only
        self._index_piles()
        # three-waste refills from the waste of the spot's own row first, then W1..W3.
        self._refill_order = tuple(
            (r, *(w for w in range(v.wastes) if w != r)) if v.wastes > 1 else (0,) for r in range(3)
        )
        self._log: list[_Record] = []
        self.moves: list[Move] = []

    # ------------------------------------------------------------- properties

    @property
    def spot_names(self) -> tuple[str, ...]:
        return self._t.names

    @property
    def move_count(self) -> int:
        """The moves of the whole game so far, automatic ones included."""
        return len(self.moves)

    @property
    def leftover(self) -> int:
        return len(self._stock) + sum(map(len, self._wastes))

    @property
    def on_grid(self) -> int:
        return self.variant.cards - self.leftover

    @property
    def complete(self) -> int:
        return self._complete

    @property
    def stock_count(self) -> int:
        return len(self._stock)

    @property
    def redeals_left(self) -> int:
        return self._redeals_left

    @property
    def drawn(self) -> int:
        """How many of the deal's stock cards have come out (turned, or refilled onto the grid).

        Both racers of a match share the deal, so this is how far into the
        other's stock one's board tells. It only grows: a redeal (``relaxed``)
        brings back cards that all came out before (the stock was empty), so
        from then on the whole stock counts as drawn.
        """
        stock_size = self.variant.cards - self._n
        if self._redeals_left < self.variant.redeals:
            return stock_size
        return stock_size - len(self._stock)

    @property
    def is_won(self) -> bool:
        return not self._stock and not any(self._wastes)

    @property
    def score(self) -> int:
        return self.leftover

    @property
    def rating(self) -> str | None:
        return rating(self.leftover)

    @property
    def is_over(self) -> bool:
        """No move can lower the leftover any more (RULES.md, "End")."""
        if self._stock:
            return False
        wastes = self._wastes
        if not any(wastes):
            return True
        if self._redeals_left:
            return False
        tops, need, empty = self._tops, self._need, self._empty
        for w in wastes:
            if w and (tops[need[w[-1]]] or (empty and self._empty_fits(w[-1]))):
                return False
        # A whole pile that moves leaves a spot the waste refills.
        return not any(tops[need[p[0]]] or (empty and self._empty_fits(p[0])) for p in self._piles if p)

    # ------------------------------------------------------------ legal moves

    def legal_moves(self) -> list[Move]:
        """Every legal move, swaps and moves of part of a pile included."""
        moves = self._legal_but_swaps()
        moves.extend(self._legal_swaps()[0])
        return moves

    def _legal_but_swaps(self) -> list[Move]:
        t = self._t
        tops, need, empty = self._tops, self._need, self._empty
        moves: list[Move] = []
        add = moves.append
        if self._stock:
            add(_TURN)
        elif self._redeals_left and self._wastes[0]:
            add(_REDEAL)
        wastes = self._wastes
        for w, waste in enumerate(wastes, 0 if len(wastes) == 1 else 1):
            if waste:
                c = waste[-1]
                row_moves = t.waste[w]
                for y in tops[need[c]]:
                    add(row_moves[y])
                if empty:
                    moves.extend(row_moves[y] for y in self._empty_fits(c))
        pile_moves = t.pile
        for x, pile in enumerate(self._piles):
            for c in pile:
                targets = tops[need[c]]
                if targets:
                    # A pile builds up in value, so its cards are distinct and index() is the
                    # depth; finding it only on a hit keeps enumerate() off the hot loop.
                    km = pile_moves[x][pile.index(c)]
                    for y in targets:
                        if y != x:
                            add(km[y])
            if empty:
                for k, c in enumerate(pile):
                    moves.extend(pile_moves[x][k][y] for y in self._empty_fits(c))
        return moves

    def _legal_swaps(self) -> tuple[list[Move], list[str]]:
        """The legal swaps and their texts, both in text order; kept until a bottom changes."""
        swaps = self._swaps
        if swaps is None:
            swaps = self._swaps = self._list_swaps()
        return swaps

    def _empty_fits(self, card: int) -> list[int]:
        """The empty spots ``card`` may go to: those of the row it is the base rank of."""
        row = self._t.row
        return [y for y in self._empty if (card >> 2) - FIRST_VALUE == row[y]]

    def _list_swaps(self) -> tuple[list[Move], list[str]]:
        """Every legal swap, in spot order (which is also their texts' order: one-digit columns).

        A classic swap sends some pile x home, so it pairs a pile whose bottom
        is a base rank but stands in another row with a pile of that home row
        whose bottom differs in rank. Starting from those few piles is much
        cheaper than testing all pairs.
        """
        t, homes, n = self._t, self._homes, self._n
        pairs: list[int] = []
        if self.variant.free_swap:
            full = [x for x in range(n) if homes[x] != _EMPTY]
            pairs = [x * n + y for i, x in enumerate(full) for y in full[i + 1 :]]
        else:
            row, row_spots = t.row, t.row_spots
            for x, home in enumerate(homes):
                if home < 3 and home != row[x]:
                    rx = row[x]
                    for y in row_spots[home]:
                        other = homes[y]
                        # A pair whose piles both go home is found from both ends: keep it once.
                        if other != home and other != _EMPTY and (other != rx or x < y):
                            pairs.append(x * n + y if x < y else y * n + x)
            pairs.sort()
        by_pair, text_by_pair = t.swap_by_pair, t.swap_text_by_pair
        return [by_pair[p] for p in pairs], [text_by_pair[p] for p in pairs]  # type: ignore[misc]

    # ------------------------------------------------------------------- play

    def play(self, move: Move | str) -> list[Move]:
        """Play ``move``; return the moves recorded (it, then any automatic ones).

        Raises InvalidMove for text that is no move, IllegalMove (the game
        unchanged) for a move the rules forbid here.
        """
        if not isinstance(move, Move):
            move = Move.parse(move)
        kind = move.kind
        if kind is _PILE:
            self._from_pile(move)
        elif kind is _SWAP:
            self._swap(move, auto=False)
        elif kind is _TURN_KIND:
            self._turn(move)
        elif kind is _WASTE:
            self._from_waste(move)
        else:
            self._redeal(move)
        self.moves.append(move)
        if not self._stock and not any(self._wastes):
            return [move, *self._arrange_home()]
        return [move]

    def _spot(self, move: Move, name: str) -> int:
        x = self._t.index.get(name)
        if x is None:
            raise IllegalMove(move, f"there is no spot {name} in {self.variant.name}")
        return x

    def _check_fits(self, move: Move, card: int, y: int) -> None:
        target = self._piles[y]
        if target:
            if self._key[target[-1]] != self._need[card]:
                raise IllegalMove(move, f"{card_text(card)} does not fit on {card_text(target[-1])}")
        elif (card >> 2) - FIRST_VALUE != self._t.row[y]:
            base = BASE_RANKS[self._t.row[y]]
            raise IllegalMove(
                move, f"{card_text(card)} does not fit the empty spot {self._t.names[y]}, only a {base}"
            )

    def _turn(self, move: Move) -> None:
        stock = self._stock
        if not stock:
            raise IllegalMove(move, "the stock is empty")
        wastes = self._wastes
        if len(wastes) == 1:
            w = wastes[0]
            n = min(3, len(stock))
            for _ in range(n):
                w.append(stock.pop())
        else:
            n = min(len(wastes), len(stock))
            for i in range(n):
                wastes[i].append(stock.pop())
        self._log.append((MoveKind.TURN, None, n, 0, 0, False))

    def _redeal(self, move: Move) -> None:
        if not self.variant.redeals:
            raise IllegalMove(move, f"{self.variant.name} has no redeal")
        if not self._redeals_left:
            raise IllegalMove(move, "the redeal has been used")
        if self._stock:
            raise IllegalMove(move, "the stock is not empty yet")
        waste = self._wastes[0]
        if not waste:
            raise IllegalMove(move, "the waste is empty")
        waste.reverse()
        self._stock, self._wastes[0] = waste, []
        self._redeals_left -= 1
        self._log.append((MoveKind.REDEAL, None, 0, 0, 0, False))

    def _waste_index(self, move: Move) -> int:
        many = len(self._wastes) > 1
        if many != bool(move.waste):
            names = "W1, W2 or W3" if many else "W"
            raise IllegalMove(move, f"{self.variant.name} plays from {names}")
        return move.waste - 1 if many else 0

    def _from_waste(self, move: Move) -> None:
        w = self._waste_index(move)
        y = self._spot(move, move.target)
        waste = self._wastes[w]
        if not waste:
            raise IllegalMove(move, "the waste is empty")
        card = waste[-1]
        self._check_fits(move, card, y)
        waste.pop()
        self._put_card(y, card)
        self._log.append((MoveKind.WASTE, None, w, y, 0, False))

    def _from_pile(self, move: Move) -> None:
        x = self._spot(move, move.source)
        y = self._spot(move, move.target)
        if x == y:
            raise IllegalMove(move, "a pile cannot move onto itself")
        pile, k = self._piles[x], move.depth
        if k >= len(pile):
            raise IllegalMove(move, f"{move.source} has no card at position {k}")
        self._check_fits(move, pile[k], y)
        run = self._take(x, k)
        self._put(y, run)
        refill = self._refill(x) if not pile else _NOT_EMPTIED
        self._log.append((MoveKind.PILE, refill, x, y, len(run), False))

    def _swap(self, move: Move, *, auto: bool) -> None:
        x = self._spot(move, move.source)
        y = self._spot(move, move.target)
        piles, row = self._piles, self._t.row
        if x == y:
            raise IllegalMove(move, "a pile cannot swap with itself")
        homes = self._homes
        if homes[x] == _EMPTY or homes[y] == _EMPTY:  # or a hidden bottom card (a client's refill)
            raise IllegalMove(move, "both spots must hold a pile with its bottom card in view")
        free = self.variant.free_swap
        if not free:
            if row[x] == row[y]:
                raise IllegalMove(move, "swaps are between piles in different rows")
            bx, by = (piles[x][0] >> 2) - FIRST_VALUE, (piles[y][0] >> 2) - FIRST_VALUE
            if bx == by:
                raise IllegalMove(move, "both bottom cards have the same rank")
            if bx != row[y] and by != row[x]:
                raise IllegalMove(move, "neither pile would be home after the swap")
        self._exchange(x, y)
        self._log.append((MoveKind.SWAP, None, x, y, 0, auto))

    def _arrange_home(self) -> list[Move]:
        """At a win, swap every pile into its home row, recording the swaps.

        With a full deck every pile is then complete, so each stray pile has a
        non-home partner in its home row. Empty spots and piles without a base
        rank at the bottom only occur with other decks; they are left as they are.
        """
        auto: list[Move] = []
        row, table, homes = self._t.row, self._t.swap, self._homes
        for x in range(self._n):
            # A swap sends x's pile home for good but may bring x a stray pile: repeat.
            while True:
                r = homes[x]
                if r >= _NO_HOME or r == row[x]:
                    break
                y = next((y for y in range(self._n) if row[y] == r and homes[y] not in (r, _EMPTY)), None)
                if y is None:
                    break
                move = table[x][y]
                assert move is not None
                self._swap(move, auto=True)
                self.moves.append(move)
                auto.append(move)
        return auto

    # ------------------------------------------------- pile edits with index

    def _index_piles(self) -> None:
        """Build what is kept beside the piles: the tops by key, the empty spots,
        and the piles as text (every view shows the grid; the server makes one per move)."""
        self._tops = [[] for _ in range(64)]
        for x, pile in enumerate(self._piles):
            if pile:
                self._tops[self._key[pile[-1]]].append(x)
        self._texts = [tuple(map(card_text, pile)) for pile in self._piles]
        self._strings = ["".join(texts) for texts in self._texts]
        self._empty = [x for x, pile in enumerate(self._piles) if not pile]
        self._homes = list(map(_home_of, self._piles))
        self._complete = sum(
            1 for x in range(self._n) if len(self._piles[x]) == PILE_MAX and self._is_complete(x)
        )
        self._swaps = None

    def _is_complete(self, x: int) -> bool:
        return len(self._piles[x]) == PILE_MAX and self._homes[x] == self._t.row[x]

    def _rebottom(self, x: int) -> None:
        """Spot x has a new bottom card, or none: drop the swap list if that matters to swaps."""
        home = _home_of(self._piles[x])
        if home != self._homes[x]:
            self._homes[x] = home
            self._swaps = None

    def _exchange(self, x: int, y: int) -> None:
        """Swap the piles at x and y (a swap, and its undo)."""
        piles, texts = self._piles, self._texts
        before = self._is_complete(x) + self._is_complete(y)
        piles[x], piles[y] = piles[y], piles[x]
        texts[x], texts[y] = texts[y], texts[x]
        strings = self._strings
        strings[x], strings[y] = strings[y], strings[x]
        self._retop(x, piles[y], piles[x])
        self._retop(y, piles[x], piles[y])
        self._rebottom(x)
        self._rebottom(y)
        self._complete += self._is_complete(x) + self._is_complete(y) - before

    def _retop(self, x: int, old: list[int], new: list[int]) -> None:
        """Spot x changed from pile ``old`` to ``new``: keep the top index."""
        if old:
            self._tops[self._key[old[-1]]].remove(x)
        if new:
            self._tops[self._key[new[-1]]].append(x)

    def _take(self, x: int, k: int) -> list[int]:
        pile = self._piles[x]
        key = self._key
        self._tops[key[pile[-1]]].remove(x)
        if self._is_complete(x):
            self._complete -= 1
        run = pile[k:]
        del pile[k:]
        self._texts[x] = self._texts[x][:k]
        self._strings[x] = self._strings[x][: 2 * k]  # every card's text is two characters
        if pile:
            self._tops[key[pile[-1]]].append(x)
        # An emptied spot keeps its bottom's home until the caller knows it stays empty:
        # most are refilled at once, often with a card that changes no swap.
        return run

    def _put_card(self, y: int, card: int) -> None:
        """``_put`` of one card, without building a list: most moves move one card."""
        pile = self._piles[y]
        tops, key = self._tops, self._key
        pile.append(card)
        text = card_text(card)
        self._texts[y] += (text,)
        self._strings[y] += text
        if len(pile) > 1:
            tops[key[pile[-2]]].remove(y)
        else:
            self._rebottom(y)
            if y in self._empty:
                self._empty.remove(y)
        tops[key[card]].append(y)
        if self._is_complete(y):  # a pile can grow to full, never past it
            self._complete += 1

    def _put(self, y: int, cards: Sequence[int]) -> None:
        pile = self._piles[y]
        key = self._key
        if pile:
            self._tops[key[pile[-1]]].remove(y)
        pile.extend(cards)
        texts = tuple(card_text(c) for c in cards)
        self._texts[y] += texts
        self._strings[y] += "".join(texts)
        if len(pile) == len(cards):
            self._rebottom(y)
            if y in self._empty:
                self._empty.remove(y)
        self._tops[key[pile[-1]]].append(y)
        if self._is_complete(y):  # a pile can grow to full, never past it
            self._complete += 1

    def _refill(self, x: int) -> int | None:
        """Fill the emptied spot x; return where from: _STOCK, a waste index, or None."""
        if self._stock:
            self._put_card(x, self._stock.pop())
            return _STOCK
        wastes = self._wastes
        for w in self._refill_order[self._t.row[x]]:
            if wastes[w]:
                self._put_card(x, wastes[w].pop())
                return w
        self._empty.append(x)
        self._rebottom(x)
        return None

    # ------------------------------------------------------------------- undo

    def undo(self) -> list[Move]:
        """Take back the last move (with the automatic moves it caused)."""
        if not self._log:
            raise IndexError("no move to undo")
        undone: list[Move] = []
        while True:
            kind, a, b, c, d, auto = self._log.pop()
            undone.append(self.moves.pop())
            self._unplay(kind, a, b, c, d)
            if not auto:
                return undone[::-1]

    def _unplay(self, kind: MoveKind, a: Any, b: int, c: int, d: int) -> None:
        piles = self._piles
        if kind is MoveKind.TURN:
            wastes = self._wastes
            if len(wastes) == 1:
                for _ in range(b):
                    self._stock.append(wastes[0].pop())
            else:
                for i in reversed(range(b)):
                    self._stock.append(wastes[i].pop())
        elif kind is MoveKind.REDEAL:
            self._stock.reverse()
            self._wastes[0], self._stock = self._stock, []
            self._redeals_left += 1
        elif kind is MoveKind.WASTE:
            self._wastes[b].extend(self._take(c, len(piles[c]) - 1))
            self._empty_if_bare(c)
        elif kind is MoveKind.PILE:
            x, y, n = b, c, d
            if a == _STOCK:
                self._stock.extend(self._take(x, 0))
            elif a is not None and a >= 0:
                self._wastes[a].extend(self._take(x, 0))
            run = self._take(y, len(piles[y]) - n)
            self._empty_if_bare(y)
            self._put(x, run)
        else:
            self._exchange(b, c)

    def _empty_if_bare(self, y: int) -> None:
        """After an undo took a spot's only card, the spot was empty before."""
        if not self._piles[y]:
            self._empty.append(y)
            self._rebottom(y)

    # ------------------------------------------------------------------ views

    def grid(self) -> dict[str, list[str]]:
        return {name: list(texts) for name, texts in zip(self._t.names, self._texts, strict=True)}

    def legal_texts(self) -> list[str]:
        """The legal moves' texts, sorted: the swaps' are kept sorted, so the sort is mostly a merge."""
        texts = [m.text for m in self._legal_but_swaps()]
        texts += self._legal_swaps()[1]
        texts.sort()
        return texts

    def state(self) -> dict[str, Any]:
        """The full state, stock order included: for the server's own use and the CLI."""
        wastes = [[card_text(c) for c in w] for w in self._wastes]
        return {
            "grid": self.grid(),
            "stock": [card_text(c) for c in reversed(self._stock)],
            "waste": wastes[0] if len(wastes) == 1 else wastes,
            "leftover": self.leftover,
            "on_grid": self.on_grid,
            "complete": self.complete,
            "legal": self.legal_texts(),
            "over": self.is_over,
            "won": self.is_won,
        }

    def player_view(self) -> dict[str, Any]:
        """What the player may see: the stock's order only in ``open`` (None otherwise)."""
        open_stock = self.variant.open_stock
        return {
            "variant": self.variant.name,
            "grid": dict(zip(self._t.names, self._texts, strict=True)),
            "waste": [{"top": card_text(w[-1]) if w else None, "count": len(w)} for w in self._wastes],
            "stock_count": len(self._stock),
            "stock": [card_text(c) for c in reversed(self._stock)] if open_stock else None,
            "leftover": self.leftover,
            "on_grid": self.on_grid,
            "complete": self.complete,
            "redeals_left": self._redeals_left,
            "moves": self.move_count,
            "legal": self.legal_texts(),
            "over": self.is_over,
            "won": self.is_won,
        }

    # ------------------------------------------------- protocol v2 agreement

    def revealed(self) -> dict[str, str]:
        """The cards the last play brought into view, by spot or waste name: protocol v2's ``reveal``.

        A refill from the stock, by the spot it filled; then the top of every
        waste whose count the play changed and which is not empty after it.
        Nothing else a play moves was out of a player's sight. Read off the undo
        record, so the server pays next to nothing for it per move. A client's
        engine answers ``??`` for each card it has to wait for. (A win never
        follows a refill from the stock, whose spot then holds one card where a
        win needs full piles, so the automatic swaps never move a revealed card.)
        """
        log = self._log
        i = len(log) - 1
        while i >= 0 and log[i][5]:  # the automatic swaps after a win
            i -= 1
        if i < 0:
            return {}
        kind, source, b, _, _, _ = log[i]
        wastes, names = self._wastes, self._waste_names
        if kind is _TURN_KIND:  # b cards turned: one waste, or one card on each of the first b
            return {names[w]: card_text(wastes[w][-1]) for w in range(min(b, len(wastes)))}
        if kind is _WASTE:
            source = b
        elif kind is not _PILE or source is None or source == _NOT_EMPTIED:
            return {}
        elif source == _STOCK:
            return {self._t.names[b]: card_text(self._piles[b][0])}
        waste = wastes[source]
        return {names[source]: card_text(waste[-1])} if waste else {}

    def position_text(self) -> str:
        """The position as protocol v2's agreement check reads it (docs/client-engine.md).

        Every pile's cards bottom first, in spot order, joined by ``/``; then
        each waste's top (``-`` when empty) and count; the stock's count; the
        redeals left; the four parts joined by ``|``. Only what both a client
        and the server know.
        """
        wastes = "/".join([f"{card_text(w[-1])}{len(w)}" if w else "-0" for w in self._wastes])
        return f"{'/'.join(self._strings)}|{wastes}|{len(self._stock)}|{self._redeals_left}"

    def check(self) -> int:
        """CRC-32 of ``position_text()``: a client whose check differs from the server's has diverged."""
        return zlib.crc32(self.position_text().encode("ascii"))


class Game(BaseGame):
    """One player's game of Devil's Grip on the deal of ``seed``: the server's, which knows every card."""

    def __init__(self, seed: str, variant: str | Variant = "classic") -> None:
        v = get_variant(variant)
        deck = shuffled_deck(seed, v.decks)
        n = v.spots
        stock = list(reversed(deck[n:]))
        super().__init__(v, [[c] for c in deck[:n]], stock, [[] for _ in range(v.wastes)], v.redeals)
        self.seed = seed

    @classmethod
    def new(cls, seed: str, variant: str | Variant = "classic") -> Game:
        return cls(seed, variant)

    @classmethod
    def replay(cls, seed: str, variant: str | Variant, moves: Iterable[Move | str]) -> Game:
        """The game after ``moves``; raises IllegalMove/InvalidMove at the first bad one (see ``play_log``)."""
        game = cls(seed, variant)
        for _ in game.play_log(moves):
            pass
        return game

    def play_log(self, moves: Iterable[Move | str]) -> Iterator[list[Move]]:
        """Play a recorded log on, yielding once for each of its moves taken in: what ``play``
        recorded for it (the move, then any automatic swaps), or nothing for such a swap in the log.

        A recorded log holds the automatic arrangement swaps after a win (the
        engine records them as moves); they are accepted, and checked, whether
        or not the log includes them. Raises IllegalMove/InvalidMove at the
        first bad move, the moves before it played.
        """
        pending: list[Move] = []
        for item in moves:
            move = item if isinstance(item, Move) else Move.parse(item)
            if pending:
                if move != pending.pop(0):
                    raise IllegalMove(move, "differs from the automatic arrangement")
                yield []
            else:
                recorded = self.play(move)
                pending = recorded[1:]
                yield recorded


__all__ = ["BaseGame", "Game", "IllegalMove", "InvalidMove", "rating", "spot_names", "waste_names"]
