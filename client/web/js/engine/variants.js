// The rule sets of RULES.md, "Variants": each a few switches on classic (server/engine/variants.py).

function variant(name, switches = {}) {
  const v = { name, columns: 8, decks: 2, redeals: 0, freeSwap: false, openStock: false, wastes: 1, suitless: false };
  Object.assign(v, switches);
  v.spots = 3 * v.columns;
  v.cards = 48 * v.decks;
  return Object.freeze(v);
}

export const VARIANTS = Object.freeze(
  Object.fromEntries(
    [
      variant("classic"),
      variant("relaxed", { redeals: 1 }),
      variant("free-swap", { freeSwap: true }),
      variant("single-deck", { columns: 4, decks: 1 }),
      variant("open", { openStock: true }),
      variant("three-waste", { wastes: 3 }),
      variant("suitless", { suitless: true }),
    ].map((v) => [v.name, v]),
  ),
);

export class UnknownVariant extends RangeError {
  constructor(name) {
    super(`unknown variant ${JSON.stringify(name)}; one of ${Object.keys(VARIANTS).join(", ")}`);
    this.name = "UnknownVariant";
    this.variant = name;
  }
}

export function getVariant(name) {
  if (!Object.hasOwn(VARIANTS, name)) throw new UnknownVariant(name);
  return VARIANTS[name];
}
