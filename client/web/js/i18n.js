// Interface texts: one module per language under i18n/, each with the same keys (a test checks it).
// A count is written in ICU's plural syntax, "{n, plural, one {# card} other {# cards}}", with the
// forms the language has; t() picks one by Intl.PluralRules (see plurals below).
// Card letters differ per language, for display only: the protocol always uses 2-9 T J Q K and S H D C.

import en from "./i18n/en.js";
import de from "./i18n/de.js";
import it from "./i18n/it.js";
import nl from "./i18n/nl.js";
import pt from "./i18n/pt.js";

const LANGUAGES = { en, de, it, nl, pt };

/** code -> the language's own name, for the language menu. */
export const LANGS = Object.fromEntries(Object.entries(LANGUAGES).map(([code, l]) => [code, l.name]));
/** code -> key -> text. */
export const STRINGS = Object.fromEntries(Object.entries(LANGUAGES).map(([code, l]) => [code, l.strings]));

const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };

let current = "en";

export function detectLang() {
  const saved = localStorage.getItem("grip:lang");
  if (saved && STRINGS[saved]) return saved;
  for (const l of navigator.languages || [navigator.language || "en"]) {
    const code = (l || "").slice(0, 2).toLowerCase();
    if (STRINGS[code]) return code;
  }
  return "en";
}

export function setLang(lang) {
  current = STRINGS[lang] ? lang : "en";
  document.documentElement.lang = current;
  localStorage.setItem("grip:lang", current);
}

export function lang() {
  return current;
}

export function t(key, params = {}) {
  let s = STRINGS[current][key] ?? STRINGS.en[key];
  if (s === undefined) {
    console.warn("missing string", key);
    return key;
  }
  s = plurals(s, params);
  for (const [k, v] of Object.entries(params)) s = s.replaceAll(`{${k}}`, String(v));
  return s;
}

/** The locale whose plural rules each language follows: the page's Portuguese is Portugal's,
 * where 0 takes the plural ("0 cartas"); plain "pt" is Brazil's, where 0 takes the singular. */
const PLURAL_LOCALE = { pt: "pt-PT" };
const pluralRules = {};

/** The plural category ("one", "other", ...) of count n in the current language. */
export function pluralOf(n) {
  pluralRules[current] ??= new Intl.PluralRules(PLURAL_LOCALE[current] ?? current);
  return pluralRules[current].select(n);
}

const PLURAL = /\{(\w+), plural,/g;

/**
 * Every "{n, plural, one {# card} other {# cards}}" in s replaced by the form its count takes
 * (the ICU MessageFormat plural syntax, "#" the count; "=0 {...}" matches an exact count).
 * Each language writes its own forms, as many as its grammar has: a per-string "is it 1?"
 * would be wrong for languages whose singular is not just 1 (Portugal's and Brazil's differ on 0).
 */
function plurals(s, params) {
  if (!s.includes(", plural,")) return s;
  let out = "", at = 0;
  PLURAL.lastIndex = 0;
  for (let m; (m = PLURAL.exec(s)); ) {
    const forms = {};
    let i = PLURAL.lastIndex;
    for (;;) {
      while (s[i] === " ") i++;
      if (s[i] === "}" || i >= s.length) break;
      const name = /^=?\w+/.exec(s.slice(i))[0];
      i = s.indexOf("{", i) + 1;
      const start = i;
      for (let depth = 1; depth > 0 && i < s.length; i++) depth += s[i] === "{" ? 1 : s[i] === "}" ? -1 : 0;
      forms[name] = s.slice(start, i - 1);
    }
    const n = Number(params[m[1]]);
    const form = forms[`=${n}`] ?? forms[pluralOf(n)] ?? forms.other ?? "";
    out += s.slice(at, m.index) + form.replaceAll("#", String(params[m[1]]));
    at = PLURAL.lastIndex = i + 1;
  }
  return out + s.slice(at);
}

/** A server error code in words (an unknown code reads as "try again"). */
export function errorText(code) {
  const key = `err_${code}`;
  const text = t(key);
  return text === key ? t("err_unavailable") : text;
}

/** Translate every element carrying data-i18n (text) or data-i18n-aria (aria-label) under root. */
export function translateTree(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) {
    const args = el.dataset.i18nArgs ? JSON.parse(el.dataset.i18nArgs) : {};
    el.textContent = t(el.dataset.i18n, args);
  }
  for (const el of root.querySelectorAll("[data-i18n-aria]")) el.setAttribute("aria-label", t(el.dataset.i18nAria));
}

/** The rank as this language writes it ("T" is always "10"). */
export function rankText(rank) {
  return LANGUAGES[current].ranks[rank] ?? rank;
}

export function suitSymbol(suit) {
  return SUIT_SYMBOL[suit];
}

/** What the server has still to reveal (protocol v2): a card drawn face down. */
export const FACE_DOWN = "??";

/** A card ("QH") as it is printed: "D♥" in German; "?" face down. */
export function cardText(card) {
  if (card === FACE_DOWN) return "?";
  return rankText(card.slice(0, -1)) + SUIT_SYMBOL[card.slice(-1)];
}

/** A card ("QH") spoken in full for screen readers. */
export function cardName(card) {
  if (card === FACE_DOWN) return t("aria_face_down");
  const r = card.slice(0, -1), s = card.slice(-1);
  const rank = LANGUAGES[current].rankNames[r] ?? (r === "T" ? "10" : r);
  return t("aria_card", { rank, suit: LANGUAGES[current].suitNames[s] });
}
