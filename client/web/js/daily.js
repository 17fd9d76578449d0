// The daily challenge: today's commitment and attempt, play or race on today's deal, the day's
// leaderboard with its score distribution, and past days with their revealed seed checked in the
// browser against the commitment published while the day ran.
import { el, fmtTime, table } from "./dom.js";
import { t } from "./i18n.js";
import { barChart } from "./charts.js";
import { fatalPanel } from "./race-parts.js";
import { nameField } from "./home.js";
import { sha256Hex } from "./sha256.js";

const DAYS_PAGE = 14;

/** Does SHA-256(seed) equal the commitment? {ok, digest}: the page shows both. */
export async function verifySeed(seed, commitment) {
  const digest = await sha256Hex(seed);
  return { ok: digest === String(commitment).trim().toLowerCase(), digest };
}

export function me() {
  return localStorage.getItem("grip:player");
}

/** A day's leaderboard: rank, name, score, time; the player's own line marked, and shown below the top if not in it. */
export function leaderboardTable(lb, { replays = false, id } = {}) {
  const mine = me();
  const row = (e, extra = "") =>
    el(
      "tr",
      { class: `${e.player === mine ? "me" : ""} ${extra}`.trim(), "data-player": e.player, "data-score": String(e.score) },
      el("td", { class: "rank", text: String(e.rank) }),
      el(
        "th",
        { scope: "row" },
        el("a", { href: `/stats/${encodeURIComponent(e.player)}`, "data-link": true, text: e.name }),
        e.player === mine ? el("span", { class: "you-tag", text: ` (${t("you")})` }) : null,
      ),
      el("td", { class: "score", text: String(e.score) }),
      el("td", { class: "time", text: fmtTime(e.time_ms) }),
      replays ? el("td", {}, el("a", { href: `/r/${e.match}`, "data-link": true, class: "replay-link", i18n: "replay_link" })) : null,
    );
  const rows = lb.top.map((e) => row(e));
  if (lb.you && !lb.top.some((e) => e.player === lb.you.player)) {
    rows.push(el("tr", { class: "gap", "aria-hidden": "true" }, el("td", { colspan: replays ? "5" : "4", text: "⋯" })));
    rows.push(row(lb.you, "outside"));
  }
  const cols = ["rank", "player", "score", "time"];
  if (replays) cols.push("replay_title");
  return table({ class: "result-table board-table", id }, cols, rows);
}

function distributionChart(lb) {
  if (!lb.distribution.length) return null;
  return el(
    "figure",
    { class: "chart-box" },
    barChart(
      lb.distribution.map((d) => ({ x: d.score, y: d.players })),
      {
        title: t("dist_title"),
        xLabel: t("dist_x"),
        mark: lb.you ? lb.you.score : null,
        label: (x, y) => t("dist_bar", { score: x, n: y }),
      },
    ),
    el("figcaption", { i18n: "dist_title" }),
  );
}

/** A link down to the explanation; no hash navigation (that would re-route the page). */
function howLink() {
  return el("a", {
    href: "#how-verify",
    class: "how-link",
    i18n: "how_verify_link",
    onclick: (e) => {
      e.preventDefault();
      const box = document.getElementById("how-verify");
      if (box) {
        box.scrollIntoView({ behavior: "smooth", block: "start" });
        box.focus({ preventScroll: true });
      }
    },
  });
}

function commitmentBlock(info, withLink) {
  return el(
    "div",
    { class: "commit" },
    el("p", { class: "field-line" }, el("span", { class: "label", i18n: "commitment" }), " ", el("code", { class: "hash", id: withLink ? "commitment" : null, text: info.commitment })),
    withLink
      ? el("p", { class: "note" }, el("span", { i18n: "commitment_why" }), " ", howLink())
      : null,
  );
}

export function dailyScreen(app, ctx, day = null) {
  const { net, navigate, toast, errorText, saveSeat } = ctx;
  const st = { info: null, boards: {}, days: null, daysEnd: false, verify: null, busy: false, fatal: null };
  // No name saved (none given on the start page): asked here, as the start page asks it, before
  // the game, which would go on the leaderboard as "Player". One field for the visit, kept across
  // redraws (each message redraws the page) so what is typed and the focus stay.
  const nameBox = (localStorage.getItem("grip:name") || "").trim() ? null : nameField({ required: true });
  const nameInput = nameBox && nameBox.querySelector("input");

  function ask() {
    net.send({ type: "daily" });
    net.send({ type: "days", limit: DAYS_PAGE });
    if (day) net.send({ type: "leaderboard", day });
  }
  ask();

  function create(seats) {
    if (nameInput && !nameInput.checkValidity()) {
      nameInput.reportValidity();
      nameInput.focus();
      return;
    }
    const used = Boolean(st.info && st.info.attempt);
    const msg = { type: "create", daily: true, seats, variant: "classic", time_limit_s: 600 };
    if (used) msg.ranked = false;
    const name = (localStorage.getItem("grip:name") || "").trim();
    if (name) msg.name = name;
    st.busy = true;
    st.pending = { ranked: !used, day: st.info ? st.info.today.day : null };
    draw();
    net.send(msg);
  }

  function todayPanel() {
    const info = st.info;
    if (!info) return el("section", { class: "panel" }, el("p", { class: "note", i18n: "loading" }));
    const used = Boolean(info.attempt);
    return el(
      "section",
      { class: "panel daily-today", id: "daily-today", "aria-labelledby": "daily-h" },
      el("h1", { id: "daily-h" }, el("span", { i18n: "daily_title" }), " ", el("span", { class: "day", text: info.today.day })),
      el("p", { class: "lead", i18n: "daily_lead" }),
      el(
        "p",
        { class: `attempt ${used ? "used" : "open"}`, id: "daily-status", "data-used": String(used) },
        el("span", { i18n: used ? "attempt_used" : "attempt_open" }),
      ),
      nameBox,
      el(
        "p",
        { class: "row" },
        el("button", {
          class: "btn primary",
          type: "button",
          id: "daily-play",
          "data-ranked": String(!used),
          disabled: st.busy,
          i18n: used ? "daily_practice" : "daily_play",
          onclick: () => create(1),
        }),
        el("button", {
          class: "btn",
          type: "button",
          id: "daily-race",
          "data-ranked": String(!used),
          disabled: st.busy,
          i18n: used ? "daily_race_practice" : "daily_race",
          onclick: () => create(2),
        }),
      ),
      used ? el("p", { class: "note unranked", i18n: "practice_note" }) : el("p", { class: "note", i18n: "ranked_note" }),
      el("p", { class: "note", i18n: "players_today", args: { n: info.today.players } }),
      commitmentBlock(info.today, true),
    );
  }

  function boardPanel(d, { past }) {
    const lb = st.boards[d];
    const h = past ? el("h2", { i18n: "board_of", args: { day: d } }) : el("h2", { i18n: "board_today" });
    if (!lb) return el("section", { class: "panel" }, h, el("p", { class: "note", i18n: "loading" }));
    const parts = [h];
    if (past) {
      const info = lb.day;
      parts.push(
        el(
          "dl",
          { class: "day-facts" },
          el("dt", { i18n: "seed" }),
          el("dd", {}, info.seed ? el("code", { class: "hash", id: "day-seed", text: info.seed }) : el("span", { i18n: "seed_hidden" })),
          el("dt", { i18n: "commitment" }),
          el("dd", {}, el("code", { class: "hash", id: "day-commitment", text: info.commitment })),
          el("dt", { i18n: "par" }),
          el("dd", { id: "day-par", text: info.par === null || info.par === undefined ? "—" : String(info.par) }),
          el("dt", { i18n: "players" }),
          el("dd", { text: String(info.players) }),
        ),
      );
      if (info.seed) {
        const out = el("p", { class: "verify-out", id: "verify-result", role: "status", "aria-live": "polite" });
        if (st.verify && st.verify.day === d) {
          out.classList.add(st.verify.ok ? "ok" : "bad");
          out.dataset.ok = String(st.verify.ok);
          out.append(
            el("span", { i18n: st.verify.ok ? "verify_ok" : "verify_bad" }),
            el("br"),
            el("span", { class: "label", i18n: "verify_digest" }),
            " ",
            el("code", { class: "hash", text: st.verify.digest }),
          );
        }
        parts.push(
          el(
            "p",
            { class: "row" },
            el("button", {
              class: "btn",
              type: "button",
              id: "verify",
              i18n: "verify",
              onclick: async () => {
                const r = await verifySeed(info.seed, info.commitment);
                st.verify = { day: d, ...r };
                draw();
              },
            }),
            howLink(),
          ),
          out,
        );
      }
    }
    if (!lb.top.length) parts.push(el("p", { class: "note", id: past ? "day-empty" : "today-empty", i18n: "board_empty" }));
    else parts.push(el("div", { class: "board-cols" }, leaderboardTable(lb, { replays: past, id: past ? "day-board" : "today-board" }), distributionChart(lb)));
    return el("section", { class: "panel leaderboard", id: past ? "day-panel" : "today-panel" }, ...parts);
  }

  function daysPanel() {
    const parts = [el("h2", { i18n: "past_days" })];
    if (!st.days) parts.push(el("p", { class: "note", i18n: "loading" }));
    else if (!st.days.length) parts.push(el("p", { class: "note", id: "no-days", i18n: "no_past_days" }));
    else {
      parts.push(
        el(
          "ul",
          { class: "days", id: "days" },
          ...st.days.map((d) =>
            el(
              "li",
              { class: d.day === day ? "current" : "" },
              el("a", { href: `/daily/${d.day}`, "data-link": true, "data-day": d.day, text: d.day }),
              " ",
              el("span", { class: "note", i18n: "n_players", args: { n: d.players } }),
              " ",
              el("span", { class: "note" }, el("span", { i18n: "par" }), `: ${d.par === null || d.par === undefined ? "—" : d.par}`),
            ),
          ),
        ),
      );
      if (!st.daysEnd) {
        parts.push(
          el("button", {
            class: "btn small",
            type: "button",
            id: "older-days",
            i18n: "older",
            onclick: () => {
              st.olderPending = true;
              net.send({ type: "days", limit: DAYS_PAGE, before: st.days[st.days.length - 1].day });
            },
          }),
        );
      }
    }
    return el("section", { class: "panel", id: "past-days" }, ...parts);
  }

  /** How anyone checks a day: the Verify button of a past day, or any SHA-256 tool (the command
   * carries the seed of the past day shown, if any). */
  function howPanel(seed) {
    return el(
      "section",
      { class: "panel how", id: "how-verify", tabindex: "-1" },
      el("h2", { i18n: "how_verify_title" }),
      el("p", { i18n: "how_verify_1" }),
      el("p", { i18n: "how_verify_2" }),
      el("pre", {}, el("code", { id: "how-command", text: `printf '%s' ${seed || "SEED"} | sha256sum` })),
    );
  }

  function draw() {
    if (st.fatal) {
      app.replaceChildren(fatalPanel(errorText(st.fatal), el("a", { class: "btn", href: "/daily", "data-link": true, i18n: "daily_back" })));
      return;
    }
    const today = st.info ? st.info.today.day : null;
    const children = [];
    if (day && day !== today) {
      children.push(el("p", {}, el("a", { href: "/daily", "data-link": true, i18n: "daily_back" })), boardPanel(day, { past: true }));
    } else {
      children.push(todayPanel());
      if (today) children.push(boardPanel(today, { past: false }));
    }
    const shown = day && st.boards[day] ? st.boards[day].day.seed : null;
    children.push(el("div", { class: "cards2" }, daysPanel(), howPanel(shown)));
    const typing = nameInput && nameInput === document.activeElement;
    app.replaceChildren(el("div", { class: "daily" }, ...children));
    if (typing && nameInput.isConnected) nameInput.focus({ preventScroll: true });
  }
  draw();

  return {
    rerender: draw,
    onReconnect: ask,
    onMessage(msg) {
      switch (msg.type) {
        case "daily":
          st.info = msg;
          if (!day || day === msg.today.day) net.send({ type: "leaderboard", day: msg.today.day });
          draw();
          return true;
        case "leaderboard":
          st.boards[msg.day.day] = msg;
          draw();
          return true;
        case "days":
          st.days = st.olderPending && st.days ? st.days.concat(msg.days) : msg.days;
          st.olderPending = false;
          st.daysEnd = msg.days.length < DAYS_PAGE;
          draw();
          return true;
        case "created":
          saveSeat(msg.match, msg.token, msg.seat);
          navigate(`/m/${msg.match}`);
          return true;
        case "error":
          st.busy = false;
          if (day && !st.boards[day] && ["not_yet", "bad_message"].includes(msg.code)) {
            st.fatal = msg.code === "not_yet" ? "day_not_yet" : msg.code;
            draw();
            return true;
          }
          // not_allowed here: a practice game asked for while the ranked attempt is still to be played out
          toast(errorText(msg.code === "not_allowed" ? "practice_not_yet" : msg.code));
          if (msg.code === "already_played") net.send({ type: "daily" });
          draw();
          return true;
        default:
          return false;
      }
    },
  };
}
