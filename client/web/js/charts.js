// Two small pictures drawn with plain SVG: no library, nothing from the network.
// Every bar is a <rect class="bar">, every point a <circle class="pt">, so tests can count them.

const NS = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  for (const c of children) if (c) node.append(c);
  return node;
}

function text(x, y, content, attrs = {}) {
  const node = svg("text", { x, y, ...attrs });
  node.textContent = content;
  return node;
}

/** A nice round top for an axis holding values up to `max`. */
function niceMax(max) {
  if (max <= 4) return Math.max(1, max);
  const step = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * step >= max) return m * step;
  return max;
}

/**
 * Bars: `items` [{x, y}] (x a label such as a score, y a count), in the order given.
 * `mark` is an x whose bar is highlighted (the player's own score). `label(x, y)` titles each bar.
 */
export function barChart(items, { title, xLabel, mark = null, label = (x, y) => `${x}: ${y}` } = {}) {
  const W = 320, H = 150, L = 28, R = 6, T = 10, B = 30;
  const top = niceMax(Math.max(1, ...items.map((i) => i.y)));
  const n = Math.max(1, items.length);
  const slot = (W - L - R) / n;
  const bw = Math.max(2, Math.min(28, slot * 0.78));
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart bars", role: "img", "aria-label": title });
  root.append(svg("title", {}, document.createTextNode(title)));
  const y0 = H - B;
  const yOf = (v) => y0 - ((H - T - B) * v) / top;
  for (const v of [0, top / 2, top]) {
    if (v !== Math.round(v) && v !== 0) continue;
    root.append(svg("line", { x1: L, x2: W - R, y1: yOf(v), y2: yOf(v), class: "grid-line" }));
    root.append(text(L - 4, yOf(v) + 3, String(v), { class: "tick", "text-anchor": "end" }));
  }
  const every = Math.ceil(n / 16); // at most ~16 labels under the bars
  items.forEach((it, i) => {
    const cx = L + slot * i + slot / 2;
    const h = y0 - yOf(it.y);
    const bar = svg("rect", {
      x: (cx - bw / 2).toFixed(1),
      y: (y0 - h).toFixed(1),
      width: bw.toFixed(1),
      height: Math.max(h, 0.5).toFixed(1),
      rx: 2,
      class: it.x === mark ? "bar mine" : "bar",
      "data-x": it.x,
      "data-y": it.y,
    });
    bar.append(svg("title", {}, document.createTextNode(label(it.x, it.y))));
    root.append(bar);
    if (i % every === 0) root.append(text(cx, y0 + 12, String(it.x), { class: "tick", "text-anchor": "middle" }));
  });
  root.append(svg("line", { x1: L, x2: W - R, y1: y0, y2: y0, class: "axis" }));
  if (xLabel) root.append(text((L + W - R) / 2, H - 3, xLabel, { class: "axis-label", "text-anchor": "middle" }));
  return root;
}

/** Points joined by a line: `values` oldest first, 0 on the bottom line (or, with `fit`, the
 * lowest value rounded down: ratings sit far from 0). */
export function lineChart(values, { title, xLabel, label = (i, v) => `${i}: ${v}`, fit = false } = {}) {
  const W = 320, H = 150, L = 34, R = 8, T = 10, B = 30;
  const low = fit && values.length ? Math.floor(Math.min(...values) / 100) * 100 : 0;
  const top = low + niceMax(Math.max(1, ...values.map((v) => v - low)));
  const n = values.length;
  const xOf = (i) => (n <= 1 ? (L + W - R) / 2 : L + ((W - L - R) * i) / (n - 1));
  const y0 = H - B;
  const yOf = (v) => y0 - ((H - T - B) * (v - low)) / (top - low);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart line", role: "img", "aria-label": title });
  root.append(svg("title", {}, document.createTextNode(title)));
  for (const v of [low, (low + top) / 2, top]) {
    if (v !== Math.round(v) && v !== 0) continue;
    root.append(svg("line", { x1: L, x2: W - R, y1: yOf(v), y2: yOf(v), class: "grid-line" }));
    root.append(text(L - 4, yOf(v) + 3, String(v), { class: "tick", "text-anchor": "end" }));
  }
  if (n > 1) {
    const d = values.map((v, i) => `${i ? "L" : "M"}${xOf(i).toFixed(1)},${yOf(v).toFixed(1)}`).join(" ");
    root.append(svg("path", { d, class: "trend" }));
  }
  values.forEach((v, i) => {
    const c = svg("circle", { cx: xOf(i).toFixed(1), cy: yOf(v).toFixed(1), r: 3.2, class: v === 0 && !fit ? "pt win" : "pt", "data-y": v });
    c.append(svg("title", {}, document.createTextNode(label(i + 1, v))));
    root.append(c);
  });
  root.append(svg("line", { x1: L, x2: W - R, y1: y0, y2: y0, class: "axis" }));
  if (xLabel) root.append(text((L + W - R) / 2, H - 3, xLabel, { class: "axis-label", "text-anchor": "middle" }));
  return root;
}
