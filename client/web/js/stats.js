// A player's figures (/stats: one's own, /stats/ID: anyone's public ones): their ratings with a
// chart of each, per variant the daily streak and two SVG pictures (score distribution, last 30
// scores), practice games apart, the head-to-head table and the paged history, each game opening in
// the replay viewer; and the board of the best ratings, a page at a time.
import { el, table } from "./dom.js";
import { t } from "./i18n.js";
import { barChart, lineChart } from "./charts.js";
import { PROVISIONAL_GAMES, fatalPanel, provisionalTag } from "./race-parts.js";
import { VARIANTS, variantKey, variantName } from "./variants.js";

const LAST = 30;
const BOARD_PAGE = 20;

function fmtNum(x) {
  return (Math.round(x * 10) / 10).toLocaleString(document.documentElement.lang, { maximumFractionDigits: 1 });
}

/** "Dec 2", or "Dec 2, 2025" for another year than this one. */
function fmtDate(ms) {
  const d = new Date(ms);
  const year = d.getFullYear() === new Date().getFullYear() ? undefined : "numeric";
  return d.toLocaleDateString(document.documentElement.lang, { year, month: "short", day: "numeric" });
}

function todayUTC() {
  return new Date().toISOString().slice(0, 10);
}


function scoreChart(distribution) {
  const items = distribution.map((d) => ({ x: d.score, y: d.games }));
  return barChart(items, { title: t("chart_dist"), xLabel: t("dist_x"), label: (x, y) => t("chart_dist_bar", { score: x, n: y }) });
}

/** "Your last 12 scores", or "Your last score" for one: as an el() i18n attribute pair. */
function trendCaption(n) {
  return { i18n: "chart_trend", args: { n } };
}

function trendChart(scores) {
  const last = scores.slice(-LAST);
  const title = trendCaption(last.length);
  return lineChart(last, { title: t(title.i18n, title.args), xLabel: t("chart_trend_x"), label: (i, v) => t("chart_trend_pt", { k: i, score: v }) });
}

// Practice games (alone, with hints and undo) count in none of the figures and charts above: a line
// per variant here, apart.
function practicePanel(practice) {
  if (!practice.length) return null;
  return el(
    "section",
    { class: "panel", id: "practice-stats" },
    el("h2", { i18n: "st_practice_title" }),
    el("p", { class: "note", i18n: "st_practice_note" }),
    el(
      "dl",
      { class: "figures" },
      ...practice.map((v) =>
        el(
          "div",
          { class: "fig", "data-variant": v.variant, "data-played": String(v.played), "data-best": String(v.best_score) },
          el("dt", { i18n: variantKey(v.variant) }),
          el("dd", { i18n: "st_practice_fig", args: { n: v.played, best: v.best_score } }),
        ),
      ),
    ),
  );
}

function variantSection(v) {
  const fig = (key, value, cls) => el("div", { class: "fig" }, el("dt", { i18n: key }), el("dd", { class: cls, text: value }));
  return el(
    "section",
    { class: "panel variant-stats", "data-variant": v.variant, "aria-label": variantName(v.variant) },
    el("h2", { i18n: variantKey(v.variant) }),
    el(
      "dl",
      { class: "figures" },
      fig("st_played", String(v.played), "played"),
      fig("st_cleared", String(v.wins), "wins"), // games won outright (nothing left); races won: head to head
      fig("st_mean", fmtNum(v.mean_score), "mean"),
      fig("st_best", String(v.best_score), "best"),
      fig("rating_brilliant", String(v.ratings.brilliant || 0), "brilliant"),
      fig("rating_excellent", String(v.ratings.excellent || 0), "excellent"),
      fig("rating_good", String(v.ratings.good || 0), "good"),
      fig("st_on_grid", fmtNum(v.mean_on_grid), "on-grid"),
      fig("st_complete", fmtNum(v.mean_complete), "complete"),
    ),
    el(
      "div",
      { class: "charts" },
      el("figure", { class: "chart-box dist" }, scoreChart(v.distribution), el("figcaption", { i18n: "chart_dist" })),
      el(
        "figure",
        { class: "chart-box trend" },
        trendChart(v.recent),
        el("figcaption", trendCaption(Math.min(LAST, v.recent.length))),
      ),
    ),
  );
}

export function statsScreen(app, ctx, player = null) {
  const { net, errorText, toast } = ctx;
  const limit = Math.max(1, Math.min(100, Number(new URLSearchParams(location.search).get("limit")) || 20));
  const st = { stats: null, games: [], next: null, historyLoaded: false, olderPending: false, fatal: null, ratings: null, board: null, boardVariant: "classic", boardAfter: null, boardBack: [], boardPending: false };
  const who = player ? { player } : {};

  // The board pages by cursor: each page's `next` is where the following one goes on from, so a page
  // never repeats or skips a player who kept their rating while others came or moved. `boardBack`
  // holds the cursors of the pages before (null: the first), for "previous".
  function askBoard() {
    const where = st.boardAfter ? { after: st.boardAfter } : {};
    st.boardPending = true; // the page's buttons wait for it: a second click would turn from the page still shown
    net.send({ type: "rating_board", variant: st.boardVariant, ...where, limit: BOARD_PAGE });
  }

  function ask() {
    st.games = [];
    st.historyLoaded = false;
    net.send({ type: "stats", ...who });
    net.send({ type: "history", ...who, limit });
    net.send({ type: "ratings", ...who });
    askBoard();
  }
  ask();

  function ratingsPanel() {
    const r = st.ratings;
    const parts = [el("h2", { i18n: "ratings_title" })];
    if (!r) parts.push(el("p", { class: "note", i18n: "loading" }));
    else if (!r.variants.length) parts.push(el("p", { class: "note", id: "ratings-empty", i18n: "ratings_empty" }));
    for (const v of r ? r.variants : []) {
      const points = v.history.map((h) => h.rating);
      parts.push(
        el(
          "div",
          { class: "rating-variant", "data-variant": v.variant, "data-rating": String(v.rating) },
          el(
            "p",
            {},
            el("strong", { i18n: variantKey(v.variant) }),
            " ",
            el("span", { class: "big rating-now", text: `${v.rating}${v.provisional ? "?" : ""}` }),
            el("span", { class: "sub", text: ` ±${v.deviation}` }),
            v.provisional ? provisionalTag() : null,
            v.rank ? el("span", { class: "tag mini rank", i18n: "rating_rank", args: { rank: v.rank } }) : null,
          ),
          el("p", { class: "sub", i18n: "rating_games", args: { n: v.games, w: v.wins, l: v.losses, d: v.draws } }),
          el(
            "figure",
            { class: "chart-box rating-chart" },
            lineChart(points, { title: t("chart_rating"), xLabel: t("chart_rating_x"), fit: true, label: (k, rating) => t("chart_rating_pt", { k, rating }) }),
            el("figcaption", { i18n: "chart_rating" }),
          ),
        ),
      );
    }
    return el("section", { class: "panel", id: "ratings-panel" }, ...parts);
  }

  function boardPanel() {
    const b = st.board;
    const pick = el("select", { id: "board-variant", "aria-label": t("variant") }, ...VARIANTS.map((v) => el("option", { value: v.name, i18n: variantKey(v.name) })));
    pick.value = st.boardVariant;
    pick.addEventListener("change", () => {
      st.boardVariant = pick.value;
      st.boardAfter = null;
      st.boardBack = [];
      askBoard();
    });
    const parts = [el("h2", { i18n: "board_title" }), el("p", { class: "note", i18n: "board_lead", args: { n: PROVISIONAL_GAMES } }), el("p", {}, pick)];
    if (!b) parts.push(el("p", { class: "note", i18n: "loading" }));
    else if (!b.entries.length) parts.push(el("p", { class: "note", id: "board-empty", i18n: "rating_board_empty" }));
    else {
      parts.push(
        table(
          { class: "result-table", id: "rating-board" },
          ["rank", "player", "rating", "games"],
          b.entries.map((e) =>
                el(
                  "tr",
                  { "data-player": e.player, class: e.player === localStorage.getItem("grip:player") ? "mine" : "" },
                  el("td", { text: String(e.rank) }),
                  el("th", { scope: "row" }, el("a", { href: `/stats/${encodeURIComponent(e.player)}`, "data-link": true, text: e.name })),
                  el("td", { class: "rating", text: String(e.rating) }),
                  el("td", { text: String(e.games) }),
                ),
          ),
        ),
      );
    }
    if (b && b.you) parts.push(el("p", { id: "board-you", i18n: "board_you", args: { rank: b.you.rank } }));
    const turn = (id, key, enabled, go) =>
      el("button", { class: "btn small", type: "button", id, i18n: key, disabled: !enabled || st.boardPending, onclick: () => {
        go();
        askBoard();
        draw();
      } });
    if (b && (b.next || st.boardBack.length)) {
      parts.push(
        el(
          "p",
          { class: "row" },
          turn("board-prev", "prev", st.boardBack.length > 0, () => {
            st.boardAfter = st.boardBack.pop();
          }),
          turn("board-next", "next", Boolean(b.next), () => {
            st.boardBack.push(st.boardAfter);
            st.boardAfter = b.next;
          }),
        ),
      );
    }
    return el("section", { class: "panel", id: "board-panel" }, ...parts);
  }

  function h2hPanel() {
    const rows = st.stats.head_to_head;
    const body = rows.length
      ? table(
          { class: "result-table", id: "h2h" },
          ["opponent", "st_wins", "st_losses", "st_draws", "st_last"],
          rows.map((r) =>
                el(
                  "tr",
                  { "data-opponent": r.opponent },
                  el("th", { scope: "row" }, el("a", { href: `/stats/${encodeURIComponent(r.opponent)}`, "data-link": true, text: r.name })),
                  el("td", { class: "wins", text: String(r.wins) }),
                  el("td", { class: "losses", text: String(r.losses) }),
                  el("td", { class: "draws", text: String(r.draws) }),
                  el("td", {}, el("a", { href: `/r/${r.last_match}`, "data-link": true, class: "replay-link", text: fmtDate(r.last_at) })),
                ),
          ),
        )
      : el("p", { class: "note", id: "h2h-empty", i18n: "h2h_empty" });
    return el("section", { class: "panel", id: "h2h-panel" }, el("h2", { i18n: "h2h_title" }), body);
  }

  function historyPanel() {
    const parts = [el("h2", { i18n: "history_title" })];
    if (!st.historyLoaded) parts.push(el("p", { class: "note", i18n: "loading" }));
    else if (!st.games.length) parts.push(el("p", { class: "note", i18n: "history_empty" }));
    else {
      const today = todayUTC();
      parts.push(
        table(
          { class: "result-table history", id: "history" },
          // five columns, the rules under the date and the rating under the score: it fits a phone
          ["st_when", "opponent", "st_outcome", "score", "replay_title"],
          st.games.map((g) =>
                el(
                  "tr",
                  { "data-match": g.match, class: `o-${g.outcome}` },
                  el(
                    "td",
                    {},
                    el("span", { class: "date", text: fmtDate(g.at) }),
                    g.daily ? el("span", { class: "tag mini", i18n: "nav_daily" }) : null,
                    g.practice ? el("span", { class: "tag mini practice", i18n: "nav_practice" }) : null,
                    el("span", { class: "sub variant", i18n: variantKey(g.variant) }),
                  ),
                  el("td", { text: g.opponent || "—" }),
                  el("td", { class: "outcome", i18n: `out_${g.outcome}` }),
                  el(
                    "td",
                    {},
                    el("span", { class: "score", text: String(g.score) }),
                    g.rating ? el("span", { class: "sub rating", i18n: `rating_${g.rating}` }) : null,
                  ),
                  el(
                    "td",
                    {},
                    g.daily && g.daily >= today
                      ? el("span", { class: "note", i18n: "replay_tomorrow" })
                      : el("a", { href: `/r/${g.match}`, "data-link": true, class: "replay-link", i18n: "replay_link" }),
                  ),
                ),
          ),
        ),
      );
      if (st.next) {
        parts.push(
          el("button", {
            class: "btn small",
            type: "button",
            id: "older",
            i18n: "older",
            disabled: st.olderPending,
            onclick: () => {
              st.olderPending = true;
              net.send({ type: "history", ...who, before: st.next, limit });
              draw();
            },
          }),
        );
      }
    }
    return el("section", { class: "panel", id: "history-panel" }, ...parts);
  }

  function draw() {
    if (st.fatal) {
      app.replaceChildren(fatalPanel(errorText(st.fatal), el("a", { class: "btn", href: "/stats", "data-link": true, i18n: "my_stats" })));
      return;
    }
    if (!st.stats) {
      app.replaceChildren(el("p", { class: "note", i18n: "loading" }));
      return;
    }
    const s = st.stats;
    const mine = s.player === localStorage.getItem("grip:player");
    const variants = [...s.variants].sort((a, b) => b.played - a.played);
    app.replaceChildren(
      el(
        "div",
        { class: "stats", id: "stats", "data-player": s.player },
        el(
          "section",
          { class: "panel stats-head" },
          el("h1", {}, mine ? el("span", { i18n: "stats_mine" }) : el("span", { i18n: "stats_of", args: { name: s.name } })),
          el(
            "dl",
            { class: "figures streak" },
            el("div", { class: "fig" }, el("dt", { i18n: "st_games" }), el("dd", { id: "total-games", text: String(s.variants.reduce((n, v) => n + v.played, 0)) })),
            el("div", { class: "fig" }, el("dt", { i18n: "st_streak" }), el("dd", { id: "streak", text: String(s.daily_streak) })),
            el("div", { class: "fig" }, el("dt", { i18n: "st_best_streak" }), el("dd", { id: "best-streak", text: String(s.best_daily_streak) })),
          ),
          el(
            "p",
            { class: "fine" },
            el("span", { i18n: mine ? "stats_public" : "stats_public_other" }),
            " ",
            el("a", { href: `/stats/${encodeURIComponent(s.player)}`, "data-link": true, id: "public-link", text: net.shareLink(`/stats/${s.player}`) }),
          ),
          mine ? null : el("p", {}, el("a", { href: "/stats", "data-link": true, i18n: "my_stats" })),
        ),
        el("div", { class: "cards2" }, ratingsPanel(), boardPanel()),
        variants.length || s.practice.length ? null : el("p", { class: "panel note", id: "no-games", i18n: "stats_empty" }),
        ...variants.map(variantSection),
        practicePanel(s.practice),
        el("div", { class: "cards2" }, h2hPanel(), historyPanel()),
      ),
    );
  }
  draw();

  return {
    rerender: draw,
    onReconnect: ask,
    onMessage(msg) {
      switch (msg.type) {
        case "stats":
          st.stats = msg;
          draw();
          return true;
        case "ratings":
          st.ratings = msg;
          draw();
          return true;
        case "rating_board":
          if (msg.variant === st.boardVariant) {
            st.board = msg;
            st.boardPending = false;
          }
          draw();
          return true;
        case "history":
          st.games = st.olderPending ? st.games.concat(msg.games) : msg.games;
          st.olderPending = false;
          st.next = msg.next;
          st.historyLoaded = true;
          draw();
          return true;
        case "error":
          if (!st.stats && ["not_found", "bad_key"].includes(msg.code)) {
            st.fatal = msg.code === "not_found" ? "no_player" : msg.code;
            draw();
            return true;
          }
          st.olderPending = false;
          st.boardPending = false;
          toast(errorText(msg.code));
          draw();
          return true;
        default:
          return false;
      }
    },
  };
}
