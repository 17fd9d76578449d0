// The rule sets the server plays, as its engine describes them (GET /api/variants; the list lives
// in server/engine/variants.py only). Loaded once, before any screen draws.
import { t } from "./i18n.js";

async function load() {
  try {
    const r = await fetch("/api/variants");
    if (r.ok) return (await r.json()).variants;
  } catch {
    /* the server is not there: the page says so when its connection fails */
  }
  return [];
}

/** [{name, cards, columns, wastes, ...}] in the server's order (classic first). */
export const VARIANTS = await load();

/** The number of cards a variant deals (96, or 48 in single-deck). */
export function totalCards(name) {
  const v = VARIANTS.find((x) => x.name === name);
  return v ? v.cards : 0;
}

/** A variant's name in the page's language. */
export function variantName(name) {
  return t(variantKey(name));
}

/** The i18n key of a variant's name: v_classic, v_free_swap... */
export function variantKey(name) {
  return `v_${name.replaceAll("-", "_")}`;
}
