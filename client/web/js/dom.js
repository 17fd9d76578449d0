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

export function fmtTime(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
