// A player's own copy of their game, built from what they see: the rules engine of the web page
// (protocol v2, docs/protocol.md). The same rules, checks, move order and messages as the Python
// engine (server/engine/game.py, client_game.py); tests/js holds the two to exact agreement.
//
// It never deals: ClientGame.fromView builds the position of a v1 view (every pile, each waste's
// top and count, the stock's count, its order only in `open`) with HIDDEN cards for the rest. A
// hidden card fits nowhere, nothing fits on it and its pile swaps with nothing, so every move
// offered stays legal whatever the card turns out to be. A play that brings cards into view
// leaves them hidden: revealed() names each with "??" (draw it face down) and reveal(cards) puts
// in the cards of the server's ack; then check() must equal the ack's, or the page has diverged
// and resyncs from a snapshot. A page that played on before an earlier ack came takes the later
// plays back, reveals, and plays them again (they stay legal):
//
//   const later = []; for (let i = 0; i < playsSince; i++) later.push(game.undo()[0]);
//   game.reveal(ack.reveal);
//   const agrees = game.check() === ack.check;
//   for (const move of later.reverse()) game.play(move);

import { BUILD_DELTA, FIRST_VALUE, HIDDEN, cardText, parseCard } from "./cards.js";
import { crc32 } from "./crc32.js";
import { Move } from "./moves.js";
import { getVariant } from "./variants.js";

const PILE_MAX = 4; // base, +3, +6, +9: no pile can hold more
const RATINGS = [
  [0, "win"],
  [2, "brilliant"],
  [5, "excellent"],
  [10, "good"],
];
// What a spot's bottom card says about swaps: the row it is the base rank of (0..2), NO_HOME for
// any other rank, EMPTY for an empty spot or a hidden bottom card (its rank is unknown).
const NO_HOME = 3;
const EMPTY = 4;
// Where an emptied spot's refill came from, in a pile move's undo record: a waste index >= 0,
// STOCK, null when it stayed empty, NOT_EMPTIED.
const STOCK = -1;
const NOT_EMPTIED = -2;

/** A well-formed move that the rules forbid in this position. */
export class IllegalMove extends Error {
  constructor(move, reason) {
    super(`${move}: ${reason}`);
    this.name = "IllegalMove";
    this.move = move;
    this.reason = reason;
  }
}

/** A snapshot that is not a view of a game of its variant. */
export class InvalidView extends Error {
  constructor(why) {
    super(why);
    this.name = "InvalidView";
  }
}

/** A reveal this position cannot hold: the page has diverged from the server and must resync. */
export class RevealMismatch extends Error {
  constructor(key, card, why) {
    super(`reveal ${key}=${card}: ${why}`);
    this.name = "RevealMismatch";
    this.key = key;
    this.card = card;
    this.why = why;
  }
}

/** The Bicycle rating of a final leftover, or null below "good". */
export function rating(score) {
  for (const [limit, name] of RATINGS) if (score <= limit) return name;
  return null;
}

/** The spots of a variant's grid in spot order (A1..A8, B1..B8, C1..C8 in classic). */
export function spotNames(variant) {
  const names = [];
  for (let i = 0; i < variant.spots; i++) names.push(`${"ABC"[Math.floor(i / variant.columns)]}${(i % variant.columns) + 1}`);
  return names;
}

/** The wastes as moves and reveals name them: W, or W1 W2 W3 in three-waste. */
export function wasteNames(variant) {
  return variant.wastes === 1 ? ["W"] : Array.from({ length: variant.wastes }, (_, w) => `W${w + 1}`);
}

function count(view, name, most) {
  const value = view?.[name];
  if (!Number.isInteger(value) || value < 0 || value > most)
    throw new InvalidView(`${name} must be a whole number from 0 to ${most}, not ${JSON.stringify(value)}`);
  return value;
}

function cards(texts, where) {
  if (!Array.isArray(texts) || !texts.every((t) => typeof t === "string"))
    throw new InvalidView(`${where} must be a list of cards, not ${JSON.stringify(texts)}`);
  try {
    return texts.map(parseCard);
  } catch (e) {
    throw new InvalidView(`${where}: ${e.message}`);
  }
}

export class ClientGame {
  /**
   * A position: `piles` in spot order, bottom first; `stock` and each waste with their tops at
   * the end; the arrays become the game's own. Most callers want ClientGame.fromView.
   */
  constructor(variant, piles, stock, wastes, redealsLeft, movesBefore = 0) {
    this.variant = variant;
    this.spotNames = spotNames(variant);
    this.wasteNames = wasteNames(variant);
    this.moves = []; // the Moves played here, automatic ones included
    this._n = variant.spots;
    this._row = this.spotNames.map((_, x) => Math.floor(x / variant.columns));
    this._index = new Map(this.spotNames.map((name, x) => [name, x]));
    this._piles = piles;
    this._stock = stock;
    this._wastes = wastes;
    this._redealsLeft = redealsLeft;
    this._movesBefore = movesBefore; // the view's count: the moves before it are not known here
    this._shift = variant.suitless ? 2 : 0;
    this._log = []; // undo records: [kind, a, b, c, d, auto]
  }

  /** The position a v1 view shows; InvalidView naming what does not fit, UnknownVariant. */
  static fromView(view) {
    const variant = getVariant(view?.variant);
    const names = spotNames(variant);
    const grid = view.grid;
    if (grid === null || typeof grid !== "object" || Object.keys(grid).sort().join() !== [...names].sort().join())
      throw new InvalidView(`a ${variant.name} grid has the spots ${names.join(", ")}`);
    const piles = names.map((name) => cards(grid[name], name));
    if (!Array.isArray(view.waste) || view.waste.length !== variant.wastes)
      throw new InvalidView(`${variant.name} has ${variant.wastes} waste(s), as a list of {top, count}`);
    const wastes = view.waste.map((shown, w) => {
      const n = shown !== null && typeof shown === "object" ? count(shown, "count", variant.cards) : -1;
      const top = n >= 0 ? shown.top ?? null : null;
      if (n < 0 || (top === null) !== (n === 0))
        throw new InvalidView(`waste ${w + 1} must show its count, and its top card when not empty`);
      return n ? [...Array(n - 1).fill(HIDDEN), ...cards([top], `waste ${w + 1}`)] : [];
    });
    const stockCount = count(view, "stock_count", variant.cards);
    let stock;
    if (view.stock === null || view.stock === undefined) stock = Array(stockCount).fill(HIDDEN);
    else {
      stock = cards(view.stock, "stock").reverse();
      if (stock.length !== stockCount)
        throw new InvalidView(`the stock shows ${stock.length} cards, stock_count says ${stockCount}`);
    }
    const held = piles.reduce((s, p) => s + p.length, 0) + wastes.reduce((s, w) => s + w.length, 0) + stockCount;
    if (held !== variant.cards)
      throw new InvalidView(`the view holds ${held} cards; ${variant.name} is played with ${variant.cards}`);
    const redealsLeft = count(view, "redeals_left", variant.redeals);
    return new ClientGame(variant, piles, stock, wastes, redealsLeft, count(view, "moves", 2 ** 30));
  }

  // ------------------------------------------------------------------ numbers

  get leftover() {
    return this._stock.length + this._wastes.reduce((s, w) => s + w.length, 0);
  }

  get onGrid() {
    return this.variant.cards - this.leftover;
  }

  /** Full piles in their home row. */
  get complete() {
    let n = 0;
    for (let x = 0; x < this._n; x++) if (this._isComplete(x)) n++;
    return n;
  }

  get stockCount() {
    return this._stock.length;
  }

  get redealsLeft() {
    return this._redealsLeft;
  }

  /** The moves of the whole game so far, automatic ones included. */
  get moveCount() {
    return this._movesBefore + this.moves.length;
  }

  get isWon() {
    return !this._stock.length && this._wastes.every((w) => !w.length);
  }

  get score() {
    return this.leftover;
  }

  get rating() {
    return rating(this.leftover);
  }

  /** No move can lower the leftover any more (RULES.md, "End"). */
  get isOver() {
    if (this._stock.length) return false;
    if (this._wastes.every((w) => !w.length)) return true;
    if (this._redealsLeft) return false;
    for (const w of this._wastes) if (w.length && this._fitsSomewhere(w[w.length - 1], -1)) return false;
    // A whole pile that moves leaves a spot the waste refills.
    return !this._piles.some((p, x) => p.length && this._fitsSomewhere(p[0], x));
  }

  // ------------------------------------------------------------- legal moves

  /** Every legal move's text, sorted: exactly the server's legal_texts(). */
  legalTexts() {
    const names = this.spotNames;
    const n = this._n;
    const piles = this._piles;
    // The spots by the key of their top card, and the empty ones: where each card may go.
    const tops = new Map();
    const empty = [];
    for (let y = 0; y < n; y++) {
      const pile = piles[y];
      if (!pile.length) empty.push(y);
      else {
        const key = this._key(pile[pile.length - 1]);
        const spots = tops.get(key);
        if (spots) spots.push(y);
        else tops.set(key, [y]);
      }
    }
    const none = [];
    const targets = (card) => {
      const found = tops.get(this._need(card)) || none;
      if (!empty.length) return found; // always, with a whole deck
      return [...found, ...empty.filter((y) => (card >> 2) - FIRST_VALUE === this._row[y])];
    };
    const texts = [];
    if (this._stock.length) texts.push("T");
    else if (this._redealsLeft && this._wastes[0].length) texts.push("R");
    this._wastes.forEach((waste, w) => {
      if (waste.length) for (const y of targets(waste[waste.length - 1])) texts.push(`${this.wasteNames[w]}>${names[y]}`);
    });
    piles.forEach((pile, x) => {
      pile.forEach((card, k) => {
        for (const y of targets(card)) if (y !== x) texts.push(`${names[x]}:${k}>${names[y]}`);
      });
    });
    const homes = this._homes();
    for (let x = 0; x < n; x++)
      if (homes[x] !== EMPTY)
        for (let y = x + 1; y < n; y++) if (this._swapReason(x, y, homes) === null) texts.push(`${names[x]}~${names[y]}`);
    return texts.sort();
  }

  /** Every legal move, as Moves, in the order of legalTexts(). */
  legalMoves() {
    return this.legalTexts().map((text) => Move.parse(text));
  }

  _key(card) {
    return card >> this._shift;
  }

  // The key of the top `card` builds on, or -1 when it builds on nothing (a base rank, HIDDEN).
  _need(card) {
    return (card >> 2) - 3 >= FIRST_VALUE ? (card - BUILD_DELTA) >> this._shift : -1;
  }

  _fits(card, y) {
    const target = this._piles[y];
    if (target.length) return this._key(target[target.length - 1]) === this._need(card);
    return (card >> 2) - FIRST_VALUE === this._row[y];
  }

  _fitsSomewhere(card, from) {
    for (let y = 0; y < this._n; y++) if (y !== from && this._fits(card, y)) return true;
    return false;
  }

  _home(x) {
    const pile = this._piles[x];
    if (!pile.length || pile[0] === HIDDEN) return EMPTY;
    const row = (pile[0] >> 2) - FIRST_VALUE;
    return row >= 0 && row < 3 ? row : NO_HOME;
  }

  _homes() {
    return this._piles.map((_, x) => this._home(x));
  }

  _isComplete(x) {
    return this._piles[x].length === PILE_MAX && this._home(x) === this._row[x];
  }

  // Why the piles at x and y may not swap, in the engine's order of checks; null when they may.
  _swapReason(x, y, homes = this._homes()) {
    if (x === y) return "a pile cannot swap with itself";
    if (homes[x] === EMPTY || homes[y] === EMPTY)
      return "both spots must hold a pile with its bottom card in view";
    if (this.variant.freeSwap) return null;
    const row = this._row;
    if (row[x] === row[y]) return "swaps are between piles in different rows";
    if (this._piles[x][0] >> 2 === this._piles[y][0] >> 2) return "both bottom cards have the same rank";
    if (homes[x] !== row[y] && homes[y] !== row[x]) return "neither pile would be home after the swap";
    return null;
  }

  // -------------------------------------------------------------------- play

  /**
   * Play `move` (a Move or its text); return the Moves recorded: it, then any automatic
   * arrangement swaps after a win. Throws InvalidMove for text that is no move, IllegalMove
   * (the game unchanged) for a move the rules forbid here.
   */
  play(move) {
    const m = move instanceof Move ? move : Move.parse(move);
    if (m.kind === "pile") this._fromPile(m);
    else if (m.kind === "swap") this._swap(m, false);
    else if (m.kind === "turn") this._turn(m);
    else if (m.kind === "waste") this._fromWaste(m);
    else this._redeal(m);
    this.moves.push(m);
    if (this.isWon) return [m, ...this._arrangeHome()];
    return [m];
  }

  _spot(move, name) {
    const x = this._index.get(name);
    if (x === undefined) throw new IllegalMove(move, `there is no spot ${name} in ${this.variant.name}`);
    return x;
  }

  _checkFits(move, card, y) {
    const target = this._piles[y];
    if (this._fits(card, y)) return;
    if (target.length)
      throw new IllegalMove(move, `${cardText(card)} does not fit on ${cardText(target[target.length - 1])}`);
    const base = "234"[this._row[y]];
    throw new IllegalMove(move, `${cardText(card)} does not fit the empty spot ${this.spotNames[y]}, only a ${base}`);
  }

  _turn(move) {
    const stock = this._stock;
    if (!stock.length) throw new IllegalMove(move, "the stock is empty");
    const wastes = this._wastes;
    let n;
    if (wastes.length === 1) {
      n = Math.min(3, stock.length);
      for (let i = 0; i < n; i++) wastes[0].push(stock.pop());
    } else {
      n = Math.min(wastes.length, stock.length);
      for (let i = 0; i < n; i++) wastes[i].push(stock.pop());
    }
    this._log.push(["turn", null, n, 0, 0, false]);
  }

  _redeal(move) {
    if (!this.variant.redeals) throw new IllegalMove(move, `${this.variant.name} has no redeal`);
    if (!this._redealsLeft) throw new IllegalMove(move, "the redeal has been used");
    if (this._stock.length) throw new IllegalMove(move, "the stock is not empty yet");
    const waste = this._wastes[0];
    if (!waste.length) throw new IllegalMove(move, "the waste is empty");
    waste.reverse();
    this._stock = waste;
    this._wastes[0] = [];
    this._redealsLeft -= 1;
    this._log.push(["redeal", null, 0, 0, 0, false]);
  }

  _wasteIndex(move) {
    const many = this._wastes.length > 1;
    if (many !== Boolean(move.waste))
      throw new IllegalMove(move, `${this.variant.name} plays from ${many ? "W1, W2 or W3" : "W"}`);
    return many ? move.waste - 1 : 0;
  }

  _fromWaste(move) {
    const w = this._wasteIndex(move);
    const y = this._spot(move, move.target);
    const waste = this._wastes[w];
    if (!waste.length) throw new IllegalMove(move, "the waste is empty");
    this._checkFits(move, waste[waste.length - 1], y);
    this._piles[y].push(waste.pop());
    this._log.push(["waste", null, w, y, 0, false]);
  }

  _fromPile(move) {
    const x = this._spot(move, move.source);
    const y = this._spot(move, move.target);
    if (x === y) throw new IllegalMove(move, "a pile cannot move onto itself");
    const pile = this._piles[x];
    const k = move.depth;
    if (k >= pile.length) throw new IllegalMove(move, `${move.source} has no card at position ${k}`);
    this._checkFits(move, pile[k], y);
    const run = pile.splice(k);
    this._piles[y].push(...run);
    const refill = pile.length ? NOT_EMPTIED : this._refill(x);
    this._log.push(["pile", refill, x, y, run.length, false]);
  }

  _swap(move, auto) {
    const x = this._spot(move, move.source);
    const y = this._spot(move, move.target);
    const reason = this._swapReason(x, y);
    if (reason !== null) throw new IllegalMove(move, reason);
    this._exchange(x, y);
    this._log.push(["swap", null, x, y, 0, auto]);
  }

  _exchange(x, y) {
    const piles = this._piles;
    [piles[x], piles[y]] = [piles[y], piles[x]];
  }

  // Fill the emptied spot x: from the stock, else the waste of its row first (three-waste), then
  // the first non-empty waste. Returns where from: STOCK, a waste index, or null.
  _refill(x) {
    if (this._stock.length) {
      this._piles[x].push(this._stock.pop());
      return STOCK;
    }
    const wastes = this._wastes;
    const row = this._row[x];
    const order = wastes.length > 1 ? [row, ...[...wastes.keys()].filter((w) => w !== row)] : [0];
    for (const w of order) {
      if (wastes[w].length) {
        this._piles[x].push(wastes[w].pop());
        return w;
      }
    }
    return null;
  }

  // At a win, swap every pile into its home row, recording the swaps (as the server does).
  _arrangeHome() {
    const auto = [];
    const row = this._row;
    for (let x = 0; x < this._n; x++) {
      // A swap sends x's pile home for good but may bring x a stray pile: repeat.
      for (;;) {
        const r = this._home(x);
        if (r >= NO_HOME || r === row[x]) break;
        let y = 0;
        while (y < this._n && !(row[y] === r && this._home(y) !== r && this._home(y) !== EMPTY)) y++;
        if (y === this._n) break;
        const move = Move.swap(this.spotNames[x], this.spotNames[y]);
        this._swap(move, true);
        this.moves.push(move);
        auto.push(move);
      }
    }
    return auto;
  }

  // -------------------------------------------------------------------- undo

  /** Take back the last move (with the automatic moves it caused); returns them, in play order. */
  undo() {
    if (!this._log.length) throw new RangeError("no move to undo");
    const undone = [];
    for (;;) {
      const [kind, a, b, c, d, auto] = this._log.pop();
      undone.push(this.moves.pop());
      this._unplay(kind, a, b, c, d);
      if (!auto) return undone.reverse();
    }
  }

  _unplay(kind, a, b, c, d) {
    const piles = this._piles;
    const wastes = this._wastes;
    if (kind === "turn") {
      if (wastes.length === 1) for (let i = 0; i < b; i++) this._stock.push(wastes[0].pop());
      else for (let i = b - 1; i >= 0; i--) this._stock.push(wastes[i].pop());
    } else if (kind === "redeal") {
      this._stock.reverse();
      wastes[0] = this._stock;
      this._stock = [];
      this._redealsLeft += 1;
    } else if (kind === "waste") {
      wastes[b].push(piles[c].pop());
    } else if (kind === "pile") {
      const [x, y, n] = [b, c, d];
      if (a === STOCK) this._stock.push(...piles[x].splice(0));
      else if (a !== null && a >= 0) wastes[a].push(...piles[x].splice(0));
      piles[x].push(...piles[y].splice(piles[y].length - n));
    } else {
      this._exchange(b, c);
    }
  }

  // ------------------------------------------------------------------ reveal

  /**
   * The cards the last play brought into view, by spot or waste name (the server's `reveal`):
   * a refill from the stock by the spot it filled, then the top of every waste whose count the
   * play changed and which is not empty. "??" for each card still to come from the server.
   */
  revealed() {
    const log = this._log;
    let i = log.length - 1;
    while (i >= 0 && log[i][5]) i--; // the automatic swaps after a win
    if (i < 0) return {};
    const [kind, a, b] = log[i];
    const wastes = this._wastes;
    const names = this.wasteNames;
    const top = (w) => cardText(wastes[w][wastes[w].length - 1]);
    if (kind === "turn") {
      const out = {};
      for (let w = 0; w < Math.min(b, wastes.length); w++) out[names[w]] = top(w);
      return out;
    }
    let source = a;
    if (kind === "waste") source = b;
    else if (kind !== "pile" || source === null || source === NOT_EMPTIED) return {};
    else if (source === STOCK) return { [this.spotNames[b]]: cardText(this._piles[b][0]) };
    return wastes[source].length ? { [names[source]]: top(source) } : {};
  }

  /**
   * Put in the cards the server revealed for the last play (an ack's or a board's `reveal`).
   * Throws RevealMismatch, the game unchanged, for a reveal that does not fit: a key that is no
   * spot or waste here, an empty waste, a spot not holding exactly one card, or another card
   * than one this engine already knew there.
   */
  reveal(revealedCards) {
    const changes = [];
    for (const [key, text] of Object.entries(revealedCards || {})) {
      let card;
      try {
        card = parseCard(text);
      } catch {
        throw new RevealMismatch(key, String(text), "not a card");
      }
      let there;
      const w = this.wasteNames.indexOf(key);
      if (w >= 0) {
        there = this._wastes[w];
        if (!there.length) throw new RevealMismatch(key, text, "the waste is empty");
      } else if (this._index.has(key)) {
        there = this._piles[this._index.get(key)];
        if (there.length !== 1) throw new RevealMismatch(key, text, `the spot holds ${there.length} cards, not a refill`);
      } else throw new RevealMismatch(key, text, `no spot or waste ${key} in ${this.variant.name}`);
      const known = there[there.length - 1];
      if (known !== HIDDEN && known !== card) throw new RevealMismatch(key, text, "another card is there");
      changes.push([there, card]);
    }
    for (const [there, card] of changes) there[there.length - 1] = card;
  }

  // ------------------------------------------------------------ agreement

  /** The position as protocol v2's check reads it: piles | waste tops and counts | stock | redeals. */
  positionText() {
    const piles = this._piles.map((p) => p.map(cardText).join("")).join("/");
    const wastes = this._wastes.map((w) => (w.length ? `${cardText(w[w.length - 1])}${w.length}` : "-0")).join("/");
    return `${piles}|${wastes}|${this._stock.length}|${this._redealsLeft}`;
  }

  /** CRC-32 of positionText(): a page whose check differs from the server's has diverged. */
  check() {
    return crc32(this.positionText());
  }

  // ------------------------------------------------------------------- views

  grid() {
    return Object.fromEntries(this.spotNames.map((name, x) => [name, this._piles[x].map(cardText)]));
  }

  /** The full state as the server's state() has it (hidden cards as "??"). */
  state() {
    const wastes = this._wastes.map((w) => w.map(cardText));
    return {
      grid: this.grid(),
      stock: this._stock.map(cardText).reverse(),
      waste: wastes.length === 1 ? wastes[0] : wastes,
      leftover: this.leftover,
      on_grid: this.onGrid,
      complete: this.complete,
      legal: this.legalTexts(),
      over: this.isOver,
      won: this.isWon,
    };
  }

  /** The position as a v1 view (the server's player_view()), so a board can draw it. */
  view() {
    return {
      variant: this.variant.name,
      grid: this.grid(),
      waste: this._wastes.map((w) => ({ top: w.length ? cardText(w[w.length - 1]) : null, count: w.length })),
      stock_count: this._stock.length,
      stock: this.variant.openStock ? this._stock.map(cardText).reverse() : null,
      leftover: this.leftover,
      on_grid: this.onGrid,
      complete: this.complete,
      redeals_left: this._redealsLeft,
      moves: this.moveCount,
      legal: this.legalTexts(),
      over: this.isOver,
      won: this.isWon,
    };
  }
}
