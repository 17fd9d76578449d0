// Moves: small frozen values whose text notation round-trips (RULES.md, "Play";
// server/engine/moves.py). parseMove("A2:1>C5") and String(move) are inverse for every canonical
// text; a swap given in the other order ("B5~A2") parses to its canonical form. A move names
// spots, not indices: whether a spot exists on a grid is the game's question, not the parser's.
// Input may be in any case, with ASCII blanks around it: the texts Python reads as moves.

/** Text that is not a move in any variant's notation. */
export class InvalidMove extends Error {
  constructor(text, why = "not a move in RULES.md notation") {
    super(`${JSON.stringify(text)}: ${why}`);
    this.name = "InvalidMove";
    this.text = text;
    this.why = why;
  }
}

/** Sort key order of spot names: A1..A8, B1..B8, C1..C8 (any grid width). */
export function spotBefore(a, b) {
  return a[0] !== b[0] ? a[0] < b[0] : Number(a.slice(1)) < Number(b.slice(1));
}

/**
 * One move: kind "turn" | "redeal" | "waste" | "pile" | "swap"; `source` (a pile move's or a
 * swap's first spot), `target` (where a waste or pile move goes, a swap's second spot), `depth`
 * (a pile move's card position, 0 = bottom), `waste` (0 for the single waste W, else 1..3), `text`.
 */
export class Move {
  constructor(kind, { source = "", target = "", depth = 0, waste = 0 } = {}) {
    this.kind = kind;
    this.source = source;
    this.target = target;
    this.depth = depth;
    this.waste = waste;
    this.text = notation(this);
    Object.freeze(this);
  }

  static turn() {
    return TURN;
  }

  static redeal() {
    return REDEAL;
  }

  static fromWaste(target, waste = 0) {
    return new Move("waste", { target, waste });
  }

  static fromPile(source, depth, target) {
    return new Move("pile", { source, target, depth });
  }

  static swap(first, second) {
    return spotBefore(second, first)
      ? new Move("swap", { source: second, target: first })
      : new Move("swap", { source: first, target: second });
  }

  /** The move written `text`; an InvalidMove naming the text if none. */
  static parse(text) {
    if (typeof text !== "string") throw new InvalidMove(String(text), "a move is written as text");
    const t = text.replace(BLANKS, "").toUpperCase();
    if (t === "T") return TURN;
    if (t === "R") return REDEAL;
    let m;
    if ((m = WASTE.exec(t))) return Move.fromWaste(m[2], m[1] ? Number(m[1]) : 0);
    if ((m = PILE.exec(t))) return Move.fromPile(m[1], Number(m[2]), m[3]);
    if ((m = SWAP.exec(t))) return Move.swap(m[1], m[2]);
    throw new InvalidMove(text);
  }

  toString() {
    return this.text;
  }
}

// Only ASCII blanks: trim() takes U+FEFF too, and Python's strip() U+001C..U+001F and U+0085.
const BLANKS = /^[ \t\n\r\f\v]+|[ \t\n\r\f\v]+$/g;
const SPOT = "([ABC][1-8])";
const WASTE = new RegExp(`^W([1-3]?)>${SPOT}$`);
const PILE = new RegExp(`^${SPOT}:(0|[1-9][0-9]?)>${SPOT}$`);
const SWAP = new RegExp(`^${SPOT}~${SPOT}$`);

function notation(move) {
  switch (move.kind) {
    case "turn":
      return "T";
    case "redeal":
      return "R";
    case "waste":
      return `W${move.waste || ""}>${move.target}`;
    case "pile":
      return `${move.source}:${move.depth}>${move.target}`;
    default:
      return `${move.source}~${move.target}`;
  }
}

const TURN = new Move("turn");
const REDEAL = new Move("redeal");
