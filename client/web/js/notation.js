// Moves in RULES.md's notation (T, R, W>B3, W2>B3, A2:1>C5, A2~B5), read for the page: their
// parts, a short label for move lists, and a sentence that says the move on a board (the hint).
import { t, cardText } from "./i18n.js";

/** A move's text -> {text, kind: turn|redeal|waste|pile|swap, from, pos, to, a, b}; null if not a move. */
export function parseMove(text) {
  let m;
  if (text === "T") return { text, kind: "turn" };
  if (text === "R") return { text, kind: "redeal" };
  if ((m = /^(W\d?)>([A-C]\d+)$/.exec(text))) return { text, kind: "waste", from: m[1], to: m[2] };
  if ((m = /^([A-C]\d+):(\d+)>([A-C]\d+)$/.exec(text))) return { text, kind: "pile", from: m[1], pos: Number(m[2]), to: m[3] };
  if ((m = /^([A-C]\d+)~([A-C]\d+)$/.exec(text))) return { text, kind: "swap", a: m[1], b: m[2] };
  return null;
}

/** The spots, wastes ("W", "W1".."W3") or "stock" a move touches. */
export function movePlaces(text) {
  const mv = parseMove(text);
  if (!mv) return [];
  if (mv.kind === "turn" || mv.kind === "redeal") return ["stock"];
  if (mv.kind === "swap") return [mv.a, mv.b];
  return [mv.from, mv.to];
}

/** A move as a list shows it: its notation, with the turn, the redeal and an undo in words. */
export function moveLabel(text) {
  if (text === "T") return t("mv_turn");
  if (text === "R") return t("mv_redeal");
  if (text === "undo") return t("mv_undo");
  return text;
}

/** The waste a move names ("W", "W2") -> its cards' top, from a view's `waste` list. */
function wasteTop(view, name) {
  const w = view.waste[name === "W" ? 0 : Number(name.slice(1)) - 1];
  return w ? w.top : null;
}

/**
 * A move said in words on `view`, the board it is to be played on:
 * "Move the 5♥ from A1 onto the 2♥ at C2." Falls back to the notation for a move the board
 * does not bear out (it cannot happen with the server's own hint).
 */
export function moveSentence(text, view) {
  const mv = parseMove(text);
  if (!mv) return text;
  if (mv.kind === "turn") return t("say_turn");
  if (mv.kind === "redeal") return t("say_redeal");
  if (mv.kind === "swap") return t("say_swap", { a: mv.a, b: mv.b });
  let card;
  let from;
  let more = 0; // cards that go along on top of it
  if (mv.kind === "waste") {
    card = wasteTop(view, mv.from);
    from = mv.from === "W" ? t("from_waste") : t("from_waste_n", { n: mv.from.slice(1) });
  } else {
    const pile = view.grid[mv.from] || [];
    card = pile[mv.pos];
    more = pile.length - mv.pos - 1;
    from = t("from_spot", { spot: mv.from });
  }
  if (!card) return text;
  const what = more > 0 ? t("card_and_above", { card: cardText(card) }) : cardText(card);
  const target = view.grid[mv.to] || [];
  if (!target.length) return t("say_move_empty", { what, from, to: mv.to });
  return t("say_move", { what, from, onto: cardText(target[target.length - 1]), to: mv.to });
}
