// Tiny DOM helpers shared by the screens.
import { t } from "./i18n.js";

/** el("button", {class, text, onclick, ...attrs}, ...children) */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k === "i18n") {
      node.dataset.i18n = v;
      node.textContent = t(v, attrs.args || {});
    } else if (k === "args") {
      node.dataset.i18nArgs = JSON.stringify(v);
    } else if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

/** A table in its scrolling box: `attrs` of the table, the text keys of its column heads, its rows. */
export function table(attrs, heads, rows) {
  return el(
    "div",
    { class: "table-wrap" },
    el("table", attrs, el("thead", {}, el("tr", {}, ...heads.map((k) => el("th", { scope: "col", i18n: k })))), el("tbody", {}, ...rows)),
  );
}

export function fmtTime(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
