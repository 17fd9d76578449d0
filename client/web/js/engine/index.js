// The rules engine of the web page (protocol v2): import from here. No build step, no
// dependencies; the same rules as server/engine, held to exact agreement by tests/js.

export { HIDDEN, HIDDEN_TEXT, cardText, parseCard } from "./cards.js";
export { crc32 } from "./crc32.js";
export { ClientGame, IllegalMove, InvalidView, RevealMismatch, rating, spotNames, wasteNames } from "./game.js";
export { InvalidMove, Move } from "./moves.js";
export { VARIANTS, UnknownVariant, getVariant } from "./variants.js";
