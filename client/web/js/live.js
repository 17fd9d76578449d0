// The races being played now that anyone may watch (/live): the server sends the list again as it
// changes (`live`), until this page asks it to stop (`live_stop`). Names are the players' own text:
// they go in as text, never as markup.
import { el, fmtTime } from "./dom.js";
import { t } from "./i18n.js";
import { variantName } from "./variants.js";

const SHOWN = 50;

export function liveScreen(app, { net }) {
  const st = { order: "newest", live: null };

  function ask() {
    net.send({ type: "live", order: st.order, limit: SHOWN });
  }
  ask();

  function racer(r) {
    return el(
      "span",
      { class: "racer", "data-seat": String(r.seat) },
      el("strong", { class: "racer-name", text: r.name }),
      r.rating == null ? null : el("span", { class: "racer-rating", text: ` (${r.rating})` }),
      " · ",
      el("span", { class: "left", i18n: "live_left", args: { n: r.leftover } }),
      " · ",
      el("span", { class: "sub", i18n: "live_moves", args: { n: r.moves } }),
    );
  }

  function row(race) {
    const playing = Math.max(0, Date.now() - race.started_at);
    return el(
      "li",
      { class: "live-race", "data-match": race.match },
      el(
        "p",
        { class: "row" },
        el("span", { class: "tag mini", text: variantName(race.variant) }),
        race.rated ? el("span", { class: "tag mini rated", i18n: "rated_tag" }) : null,
        el("span", { class: "sub", text: fmtTime(playing) }),
        el("a", { class: "btn small", href: `/w/${race.match}`, "data-link": true, i18n: "watch" }),
      ),
      el("p", { class: "racers" }, ...race.racers.flatMap((r, i) => (i ? [el("span", { text: " — " }), racer(r)] : [racer(r)]))),
    );
  }

  function draw() {
    const order = (key) =>
      el("button", {
        class: `btn small${st.order === key ? " primary" : ""}`,
        type: "button",
        id: `live-${key}`,
        "aria-pressed": String(st.order === key),
        i18n: `live_${key}`,
        onclick: () => {
          st.order = key;
          ask();
          draw();
        },
      });
    const live = st.live;
    let body;
    if (!live) body = el("p", { class: "note", i18n: "loading" });
    else if (!live.races.length) body = el("p", { class: "note", id: "live-empty", i18n: "live_empty" });
    else body = el("ul", { class: "live-list", id: "live-list" }, ...live.races.map(row));
    app.replaceChildren(
      el(
        "section",
        { class: "panel", id: "live" },
        el("h1", { i18n: "live_title" }),
        el("p", { i18n: "live_lead" }),
        el("p", { class: "row" }, order("newest"), order("closest"), live ? el("span", { class: "sub", id: "live-total", i18n: "live_total", args: { n: live.total } }) : null),
        body,
      ),
    );
  }
  draw();

  return {
    rerender: draw,
    onReconnect: ask,
    destroy: () => net.send({ type: "live_stop" }),
    onMessage(msg) {
      if (msg.type !== "live") return false;
      if (msg.order === st.order) {
        st.live = msg;
        draw();
      }
      return true;
    },
  };
}
