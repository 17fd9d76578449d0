// Cards as small ints, as the Python engine has them (server/engine/cards.py): value << 2 | suit,
// values 2..13, suits S H D C as 0..3. HIDDEN (value 0) is a card the player cannot see yet: no
// card builds on value 0 and value 0 builds on nothing, so the rules need no special case for it.

export const SUITS = "SHDC";
export const RANKS = "23456789TJQK"; // values 2..13
export const FIRST_VALUE = 2;
export const BUILD_DELTA = 3 << 2; // a card builds on the card BUILD_DELTA below it: same suit, value - 3
export const HIDDEN = 0;
export const HIDDEN_TEXT = "??";

const TEXT = [];
const CARD_BY_TEXT = new Map();
for (let c = 0; c < 64; c++) {
  const value = c >> 2;
  TEXT.push(value >= FIRST_VALUE && value <= 13 ? RANKS[value - FIRST_VALUE] + SUITS[c & 3] : "");
  if (TEXT[c]) CARD_BY_TEXT.set(TEXT[c], c);
}
TEXT[HIDDEN] = HIDDEN_TEXT;

/** The text of a card ("5S", "TH"; "??" for a hidden one). */
export function cardText(card) {
  return TEXT[card];
}

/** The card written `text` (any case); throws a RangeError if none. */
export function parseCard(text) {
  const card = typeof text === "string" ? CARD_BY_TEXT.get(text.toUpperCase()) : undefined;
  if (card === undefined) throw new RangeError(`not a card: ${JSON.stringify(text)}`);
  return card;
}
