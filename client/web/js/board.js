// A Devil's Grip board drawn from a view (the page's rules engine's: see race-state.js). Interactive
// boards offer the moves of the view's `legal` list only: the page matches the player's clicks
// (or drags, or keys) against that list and sends the move's text. A card the server has still to
// reveal ("??") is drawn face down. Rows and columns carry the
// notation's names, and each row says what it builds.

import { t, lang, rankText, cardName, suitSymbol, FACE_DOWN } from "./i18n.js";
import { el } from "./dom.js";
import { parseMove, movePlaces } from "./notation.js";
import { totalCards } from "./variants.js";

const ROWS = "ABC";
const ROW_BUILDS = [["2", "5", "8", "J"], ["3", "6", "9", "Q"], ["4", "7", "T", "K"]]; // RULES.md, "The grid"

/** Legal move texts -> structured moves. */
export function parseLegal(legal) {
  return (legal || []).map(parseMove).filter(Boolean);
}

export function cardEl(card, extra = "") {
  if (card === FACE_DOWN) return el("span", { class: `card back ${extra}`, "data-card": card, "aria-hidden": "true" });
  const r = card.slice(0, -1), s = card.slice(-1);
  const red = s === "H" || s === "D";
  return el(
    "span",
    { class: `card ${red ? "red" : "black"} ${extra}`, "data-card": card, "aria-hidden": "true" },
    el("span", { class: "cr", text: rankText(r) }),
    el("span", { class: "cs", text: suitSymbol(s) }),
    el("span", { class: "cbig", text: suitSymbol(s) }),
  );
}

export function columnsOf(view) {
  return Object.keys(view.grid).length / 3;
}

export class Board {
  /**
   * @param {HTMLElement} root
   * @param {{interactive?: boolean, name?: string, onMove?: (text: string) => void}} opts
   */
  constructor(root, opts = {}) {
    this.root = root;
    this.interactive = Boolean(opts.interactive);
    this.name = opts.name || "";
    this.onMove = opts.onMove || (() => {});
    this.view = null;
    this.moves = [];
    this.selected = null; // "W", "W1".."W3" or a spot
    this.targets = new Map(); // spot -> [move]
    this.hint = null;
    this.showPlayable = false; // mark the cards that have a legal move (interactive boards)
    this.busy = false;
    this.focusId = null;
    this.drag = null;
    this.suppressClick = false;
    this.root.classList.add("board");
    if (this.interactive) this.bindPointer();
  }

  /** Draw `view`. A pile or waste the player has selected stays selected while it still has a
   * move (an ack that turns a card face up comes while the player picks their next move). */
  setView(view) {
    const kept = this.selected;
    this.view = view;
    this.moves = this.interactive ? parseLegal(view.legal) : [];
    this.hint = null;
    if (kept && this.sources().has(kept)) this.select(kept);
    else {
      this.clearSelection(false);
      this.render();
    }
  }

  /** The piles and wastes that some legal move starts from. */
  sources() {
    const out = new Set();
    for (const m of this.moves) {
      if (m.kind === "waste" || m.kind === "pile") out.add(m.from);
      else if (m.kind === "swap") out.add(m.a).add(m.b);
    }
    return out;
  }

  setBusy(busy) {
    this.busy = busy;
    this.root.classList.toggle("busy", busy);
  }

  setHint(text) {
    this.hint = text;
    this.render();
  }

  setShowPlayable(on) {
    this.showPlayable = on;
    this.render();
  }

  // ---------------------------------------------------------------- selection

  clearSelection(redraw = true) {
    this.selected = null;
    this.targets = new Map();
    this.choice = null;
    if (redraw) this.render();
  }

  select(source) {
    const targets = new Map();
    const add = (spot, move) => targets.set(spot, [...(targets.get(spot) || []), move]);
    for (const m of this.moves) {
      if (m.kind === "waste" && m.from === source) add(m.to, m);
      else if (m.kind === "pile" && m.from === source) add(m.to, m);
      else if (m.kind === "swap" && (m.a === source || m.b === source)) add(m.a === source ? m.b : m.a, m);
    }
    this.selected = source;
    this.targets = targets;
    this.choice = null;
    this.render();
  }

  /** The player activated a pile, the waste or the stock (click, tap, key, drop). */
  activate(id) {
    if (!this.interactive || !this.view || this.view.over || this.busy) return;
    if (id === "stock") {
      const turn = this.moves.find((m) => m.kind === "turn") || this.moves.find((m) => m.kind === "redeal");
      this.clearSelection(false);
      if (turn) this.send(turn.text);
      else this.render();
      return;
    }
    if (this.selected && this.targets.has(id)) {
      const options = this.targets.get(id);
      if (options.length === 1) return this.send(options[0].text);
      this.choice = { spot: id, options };
      this.render();
      return;
    }
    if (this.selected === id) return this.clearSelection();
    this.select(id);
  }

  send(text) {
    this.clearSelection(false);
    this.hint = null;
    const before = this.view;
    this.onMove(text); // the page draws the board after the move (setView) at once
    if (this.view === before) this.render();
  }

  // ---------------------------------------------------------------- drawing

  /**
   * Draw the board. Only what changed is replaced (a pile whose cards or marks changed, the stock
   * and wastes): a move then costs the browser a pile or two to lay out, not the whole board, so
   * it is painted in the frame after the click (bench/click_to_paint.py).
   */
  render() {
    const v = this.view;
    const root = this.root;
    // Redrawing replaces buttons: note where the keyboard focus was, to put it back after.
    const active = document.activeElement;
    const hadFocus = Boolean(active && root.contains(active));
    if (hadFocus && active.dataset.id) this.focusId = active.dataset.id;
    if (!v) {
      root.replaceChildren();
      this.drawn = null;
      return;
    }
    const cols = columnsOf(v);
    const label = t("aria_board", { name: this.name || "" });
    const shape = `${cols}|${label}|${lang()}`; // the grid's size, the name, the language
    if (!this.drawn || this.drawn.shape !== shape || !root.contains(this.drawn.counter)) this.scaffold(shape, cols, label);
    const { counter, deck, piles } = this.drawn;
    root.dataset.moves = v.moves;
    root.dataset.stock = v.stock_count;
    root.dataset.over = v.over;
    counter.textContent = t("counter", { n: v.on_grid, total: totalCards(v.variant), m: v.leftover });
    counter.dataset.onGrid = v.on_grid;
    counter.dataset.leftover = v.leftover;

    const hintParts = new Set(this.hint ? movePlaces(this.hint) : []);
    const movable = this.movableCards();
    for (const [spot, drawn] of piles) {
      const cards = v.grid[spot] || [];
      const marks = cards.map((_, i) => movable.has(`${spot}:${i}`));
      const key = JSON.stringify([cards, marks, this.targets.has(spot), this.selected === spot, hintParts.has(spot)]);
      if (key === drawn.key) continue;
      const node = this.pileEl(spot, cards, ROWS.indexOf(spot[0]), hintParts, movable);
      drawn.node.replaceWith(node);
      piles.set(spot, { key, node });
    }
    deck.replaceChildren(...this.deckParts(v, hintParts, movable));

    if (this.drawn.choice) this.drawn.choice.remove();
    this.drawn.choice = this.choice ? this.choiceEl() : null;
    if (this.drawn.choice) {
      root.append(this.drawn.choice);
      this.drawn.choice.querySelector("button").focus();
    } else if (hadFocus && this.focusId && !root.contains(document.activeElement)) {
      const again = root.querySelector(`[data-id="${this.focusId}"]`);
      if (again) again.focus();
    }
  }

  /** The parts of the board that stay while the game goes on: the counter, the grid's labels and
   * places for its piles, the deck. */
  scaffold(shape, cols, label) {
    const root = this.root;
    root.style.setProperty("--cols", cols);
    root.setAttribute("aria-label", label);
    const counter = el("p", { class: "counter", "aria-live": this.interactive ? "polite" : "off" });
    const grid = el("div", { class: "grid", role: "group", "aria-label": label });
    grid.append(el("span", { class: "corner", "aria-hidden": "true" }));
    for (let c = 1; c <= cols; c++) grid.append(el("span", { class: "col-label", "aria-hidden": "true", text: String(c) }));
    const piles = new Map();
    for (let r = 0; r < 3; r++) {
      grid.append(this.rowLabel(r));
      for (let c = 1; c <= cols; c++) {
        const node = el("span");
        piles.set(ROWS[r] + c, { key: null, node });
        grid.append(node);
      }
    }
    const deck = el("div", { class: "deck" });
    root.replaceChildren(counter, el("div", { class: "tableau" }, grid), deck);
    this.drawn = { shape, counter, deck, piles, choice: null };
  }

  /** The stock, the wastes, and in `open` the stock's cards. */
  deckParts(v, hintParts, movable) {
    const parts = [];
    const stockLabel = t("aria_stock", { n: v.stock_count });
    const canTurn = this.moves.some((m) => m.kind === "turn" || m.kind === "redeal");
    parts.push(
      el(
        this.interactive ? "button" : "div",
        {
          class: `stock ${v.stock_count ? "" : "empty"} ${canTurn ? "can" : ""} ${hintParts.has("stock") ? "hinted" : ""}`,
          "data-id": "stock",
          "aria-label": stockLabel,
          title: stockLabel,
          type: this.interactive ? "button" : undefined,
          disabled: this.interactive && (!canTurn || v.over) ? true : undefined,
          onclick: this.interactive ? () => this.activate("stock") : undefined,
        },
        el("span", { class: "stock-count", text: String(v.stock_count) }),
        el("span", { class: "stock-label", text: this.moves.some((m) => m.kind === "redeal") ? t("redeal") : t("stock") }),
      ),
    );
    const wastes = v.waste;
    wastes.forEach((w, i) => {
      const id = wastes.length > 1 ? `W${i + 1}` : "W";
      const label = t("aria_waste", {
        w: wastes.length > 1 ? i + 1 : "",
        card: w.top ? cardName(w.top) : t("aria_empty"),
        n: w.count,
      }).replace(/\s+:/, ":");
      const playable = this.moves.some((m) => m.kind === "waste" && m.from === id);
      parts.push(
        el(
          this.interactive ? "button" : "div",
          {
            class: `waste ${this.selected === id ? "selected" : ""} ${playable ? "can" : ""} ${hintParts.has(id) ? "hinted" : ""}`,
            "data-id": id,
            "aria-label": label + (this.selected === id ? `, ${t("aria_selected")}` : ""),
            "aria-pressed": this.interactive ? String(this.selected === id) : undefined,
            type: this.interactive ? "button" : undefined,
            onclick: this.interactive ? () => this.click(id) : undefined,
          },
          w.top ? cardEl(w.top, movable.has(id) ? "movable" : "") : el("span", { class: "slot" }),
          el("span", { class: "waste-count", text: wastes.length > 1 ? `W${i + 1} · ${w.count}` : String(w.count) }),
        ),
      );
    });
    if (v.stock && v.stock.length) {
      const open = el("div", { class: "open-stock", "aria-label": v.stock.map(cardName).join(", ") });
      for (const c of v.stock.slice(0, 12)) open.append(cardEl(c, "mini"));
      parts.push(open);
    }
    return parts;
  }

  /** "A": the row's name, and the ranks it builds (2 5 8 J), in this language's letters. */
  rowLabel(row) {
    const builds = ROW_BUILDS[row].map(rankText);
    return el(
      "span",
      { class: "row-label", "data-row": ROWS[row], title: t("row_builds", { row: ROWS[row], ranks: builds.join(", ") }) },
      el("span", { class: "rl-name", text: ROWS[row] }),
      el("span", { class: "rl-builds", "aria-hidden": "true" }, ...builds.map((r) => el("span", { text: r }))),
    );
  }

  /** With "show playable cards" on: "A1:0", "B3:2", "W2"... for every card that can be built onto
   * another pile, and for the bottom card of every pile that a swap brings home. (Marking both
   * piles of every legal swap would mark nearly every card: a pile that can go home may swap with
   * any pile of that row.) */
  movableCards() {
    const out = new Set();
    if (!this.showPlayable || !this.interactive) return out;
    const goesHome = (pile, spot) => {
      const bottom = (this.view.grid[pile] || [])[0];
      return Boolean(bottom) && bottom.slice(0, -1) === ROW_BUILDS[ROWS.indexOf(spot[0])][0];
    };
    for (const m of this.moves) {
      if (m.kind === "pile") out.add(`${m.from}:${m.pos}`);
      else if (m.kind === "waste") out.add(m.from);
      else if (m.kind === "swap") {
        if (goesHome(m.a, m.b)) out.add(`${m.a}:0`);
        if (goesHome(m.b, m.a)) out.add(`${m.b}:0`);
      }
    }
    return out;
  }

  pileEl(spot, cards, row, hintParts, movable) {
    const home = cards.length > 0 && cards[0].slice(0, -1) === ROW_BUILDS[row][0];
    const isTarget = this.targets.has(spot);
    const isSel = this.selected === spot;
    const names = cards.map(cardName).join(", ");
    const label = [
      t("aria_pile", { spot }),
      cards.length ? names : t("aria_empty"),
      home ? t("aria_home") : null,
      isSel ? t("aria_selected") : null,
      isTarget ? t("aria_target") : null,
    ]
      .filter(Boolean)
      .join("; ");
    const classes = ["pile", home && "home", isTarget && "target", isSel && "selected", hintParts.has(spot) && "hinted"];
    const node = el(this.interactive ? "button" : "div", {
      class: classes.filter(Boolean).join(" "),
      "data-id": spot,
      "data-spot": spot,
      "data-count": cards.length,
      "aria-label": label,
      "aria-pressed": this.interactive ? String(isSel) : undefined,
      type: this.interactive ? "button" : undefined,
      onclick: this.interactive ? () => this.click(spot) : undefined,
      onkeydown: this.interactive ? (e) => this.arrowKey(e, spot) : undefined,
    });
    if (!this.interactive) node.setAttribute("role", "img");
    cards.forEach((c, i) =>
      node.append(cardEl(c, `${i === cards.length - 1 ? "top" : "under"} ${movable.has(`${spot}:${i}`) ? "movable" : ""}`)),
    );
    if (!cards.length) node.append(el("span", { class: "slot" }));
    return node;
  }

  choiceEl() {
    const box = el("div", { class: "choice", role: "dialog", "aria-label": t("choose_title") });
    box.append(el("p", { text: t("choose_title") }));
    for (const m of this.choice.options) {
      const label = m.kind === "swap" ? t("choose_swap") : t("choose_move");
      box.append(el("button", { type: "button", class: "btn", text: `${label} (${m.text})`, onclick: () => this.send(m.text) }));
    }
    box.append(el("button", { type: "button", class: "btn ghost", text: t("cancel"), onclick: () => this.clearSelection() }));
    return box;
  }

  /** Put the keyboard focus on the first pile (A1), where the arrow keys start from. */
  focusFirst() {
    const first = this.root.querySelector('[data-id="A1"]');
    if (first) first.focus({ preventScroll: true });
  }

  click(id) {
    if (this.suppressClick) {
      this.suppressClick = false;
      return;
    }
    this.activate(id);
  }

  arrowKey(e, spot) {
    const delta = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[e.key];
    if (!delta || !this.view) return;
    e.preventDefault();
    const cols = columnsOf(this.view);
    const row = ROWS.indexOf(spot[0]);
    const col = Number(spot.slice(1));
    const r = Math.min(2, Math.max(0, row + delta[0]));
    const c = Math.min(cols, Math.max(1, col + delta[1]));
    const next = this.root.querySelector(`[data-id="${ROWS[r]}${c}"]`);
    if (next) next.focus();
  }

  // ---------------------------------------------------------------- drag and drop

  bindPointer() {
    this.root.addEventListener("pointerdown", (e) => {
      if (e.button !== 0 || this.busy || !this.view || this.view.over) return;
      const src = e.target.closest(".pile, .waste");
      if (!src || !this.root.contains(src)) return;
      if (src.classList.contains("pile") && !Number(src.dataset.count)) return;
      this.drag = { id: src.dataset.id, x: e.clientX, y: e.clientY, ghost: null, pointer: e.pointerId };
    });
    this.root.addEventListener("pointermove", (e) => {
      const d = this.drag;
      if (!d || d.pointer !== e.pointerId) return;
      if (!d.ghost) {
        if (Math.hypot(e.clientX - d.x, e.clientY - d.y) < 8) return;
        this.select(d.id);
        this.root.setPointerCapture(e.pointerId);
        const src = this.root.querySelector(`[data-id="${d.id}"]`);
        const card = src && src.querySelector(".card.top, .waste .card");
        d.ghost = (card || src).cloneNode(true);
        d.ghost.classList.add("drag-ghost");
        document.body.append(d.ghost);
      }
      d.ghost.style.left = `${e.clientX - 20}px`;
      d.ghost.style.top = `${e.clientY - 20}px`;
    });
    const end = (e) => {
      const d = this.drag;
      if (!d || d.pointer !== e.pointerId) return;
      this.drag = null;
      if (!d.ghost) return; // a plain click: the click handler takes it
      d.ghost.remove();
      this.suppressClick = true;
      setTimeout(() => (this.suppressClick = false), 0);
      const under = document.elementFromPoint(e.clientX, e.clientY);
      const pile = under && under.closest(".pile");
      if (pile && this.root.contains(pile) && this.targets.has(pile.dataset.spot)) this.activate(pile.dataset.spot);
      else this.clearSelection();
    };
    this.root.addEventListener("pointerup", end);
    this.root.addEventListener("pointercancel", end);
  }
}
