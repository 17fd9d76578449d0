// The page: routes, screens and the protocol conversation. Routes (served by the server's
// index.html fallback): /  /practice  /rules  /m/CODE (play or join)  /w/CODE (watch)  /r/CODE (replay)
// /daily  /daily/YYYY-MM-DD (a day's leaderboard)  /stats  /stats/PLAYER (another player's figures).

import { LANGS, detectLang, setLang, t, translateTree } from "./i18n.js";
import { Net } from "./net.js";
import { Board } from "./board.js";
import { el, fmtTime } from "./dom.js";
import { rulesScreen } from "./rules.js";
import { replayScreen } from "./replay.js";
import { dailyScreen } from "./daily.js";
import { statsScreen } from "./stats.js";

const VARIANTS = ["classic", "relaxed", "free-swap", "single-deck", "open", "three-waste", "suitless"];
const TIME_LIMITS = [120, 300, 600, 900, 1800];
const SIZES = ["A", "A+", "A++", "A+++"];
const BOTS = ["greedy", "lookahead"];
const COUNTDOWN_MS = 3000; // from "countdown" to "start" (server/match.py)
const ARMED_MS = 5000; // how long Finish/Resign wait for the confirming click
const CODE_RE = /^[34679ACDEFGHJKMNPQRTUVWXY]{8}$/;

const app = document.getElementById("app");
let screen = null; // {onMessage, onReconnect, destroy, rerender}

// ------------------------------------------------------------------ settings, chrome

setLang(detectLang());

const settings = {
  size: localStorage.getItem("grip:size") || "A",
  sound: localStorage.getItem("grip:sound") === "on",
};

function applySettings() {
  document.body.dataset.size = SIZES.includes(settings.size) ? settings.size : "A";
  const sound = document.getElementById("sound");
  sound.dataset.i18n = settings.sound ? "sound_on" : "sound_off";
  sound.setAttribute("aria-pressed", String(settings.sound));
  translateTree(document.querySelector("header"));
}

function buildChrome() {
  const langSel = document.getElementById("lang");
  langSel.replaceChildren(...Object.entries(LANGS).map(([code, name]) => el("option", { value: code, text: name })));
  langSel.value = document.documentElement.lang;
  langSel.addEventListener("change", () => {
    setLang(langSel.value);
    translateTree(document);
    if (screen && screen.rerender) screen.rerender();
  });
  const sizeSel = document.getElementById("size");
  sizeSel.replaceChildren(...SIZES.map((s) => el("option", { value: s, text: s })));
  sizeSel.value = settings.size;
  sizeSel.addEventListener("change", () => {
    settings.size = sizeSel.value;
    localStorage.setItem("grip:size", settings.size);
    applySettings();
  });
  document.getElementById("sound").addEventListener("click", () => {
    settings.sound = !settings.sound;
    localStorage.setItem("grip:sound", settings.sound ? "on" : "off");
    applySettings();
    beep(660);
  });
  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-link]");
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    navigate(a.getAttribute("href"));
  });
  window.addEventListener("popstate", route);
  applySettings();
  translateTree(document);
}

let audio = null;
function beep(freq = 520, ms = 60) {
  if (!settings.sound) return;
  try {
    audio = audio || new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = freq;
    gain.gain.value = 0.06;
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + ms / 1000);
  } catch {
    /* no audio: fine */
  }
}

let toastTimer = null;
function toast(text, kind = "error") {
  if (kind === "error") window.__grip.errors.push(text);
  const box = document.getElementById("toast");
  box.textContent = text;
  box.className = `toast show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.className = "toast"), 6000);
}

export function errorText(code) {
  const key = `err_${code}`;
  const text = t(key);
  return text === key ? t("err_unavailable") : text;
}

function setConnStatus(status) {
  const banner = document.getElementById("conn");
  document.body.dataset.conn = status;
  if (status === "offline") {
    banner.hidden = false;
  } else if (status === "online" && !banner.hidden) {
    banner.hidden = true;
    toast(t("reconnected"), "info");
  }
}

// ------------------------------------------------------------------ net

const net = new Net({
  name: () => (localStorage.getItem("grip:name") || "").trim(),
  onStatus: (s) => {
    setConnStatus(s);
    if (screen && screen.onStatus) screen.onStatus(s);
  },
  onReconnect: () => screen && screen.onReconnect && screen.onReconnect(),
  onMessage: (msg) => {
    if (screen && screen.onMessage && screen.onMessage(msg)) return;
    if (msg.type === "error") toast(errorText(msg.code));
  },
});
// For tests: __grip.net.drop() simulates a dropped network; __grip.errors lists error messages shown.
window.__grip = { net, errors: [] };

// ------------------------------------------------------------------ routing

function navigate(path, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  route();
}

function route() {
  if (screen && screen.destroy) screen.destroy();
  screen = null;
  net.clearQueue();
  const path = location.pathname.replace(/\/+$/, "") || "/";
  let m;
  if ((m = /^\/([mwr])\/([a-zA-Z0-9]{8})$/.exec(path)) && m[2] !== m[2].toUpperCase()) {
    navigate(`/${m[1]}/${m[2].toUpperCase()}`, true); // a code typed in lower case
    return;
  }
  for (const a of document.querySelectorAll("nav a[data-link]")) {
    const href = a.getAttribute("href");
    const current = href === path || (href !== "/" && path.startsWith(`${href}/`));
    if (current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (path === "/") screen = homeScreen();
  else if (path === "/practice") screen = practiceScreen();
  else if (path === "/rules") screen = rulesScreen(app);
  else if ((m = /^\/m\/([A-Z0-9]+)$/.exec(path)) && CODE_RE.test(m[1])) screen = matchScreen(m[1]);
  else if ((m = /^\/w\/([A-Z0-9]+)$/.exec(path)) && CODE_RE.test(m[1])) screen = watchScreen(m[1]);
  else if ((m = /^\/r\/([A-Z0-9]+)$/.exec(path)) && CODE_RE.test(m[1])) screen = replayScreen(app, m[1]);
  else if (path === "/daily") screen = dailyScreen(app, screenContext());
  else if ((m = /^\/daily\/(\d{4}-\d{2}-\d{2})$/.exec(path))) screen = dailyScreen(app, screenContext(), m[1]);
  else if (path === "/stats") screen = statsScreen(app, screenContext());
  else if ((m = /^\/stats\/([A-Za-z0-9_-]{1,64})$/.exec(path))) screen = statsScreen(app, screenContext(), m[1]);
  else screen = homeScreen();
  document.getElementById("main").focus({ preventScroll: true });
  window.scrollTo(0, 0);
}

// ------------------------------------------------------------------ seats in the browser's storage

// Seats live in localStorage, not the tab's: a player who closes the tab, or opens the link in
// another, gets the seat back (the newer tab takes it over, the older one is told so and offers
// to take it back). Seats older than SEAT_KEEP_MS are forgotten whenever one is saved.
const SEAT_KEEP_MS = 2 * 86_400_000;

function saveSeat(code, token, seat, extra = {}) {
  // extra: {bot} for a race against a bot that this page created (the lobby does not say)
  const now = Date.now();
  for (let i = localStorage.length - 1; i >= 0; i -= 1) {
    const key = localStorage.key(i);
    if (!key || !key.startsWith("grip:seat:")) continue;
    try {
      if (!(now - JSON.parse(localStorage.getItem(key)).at < SEAT_KEEP_MS)) localStorage.removeItem(key);
    } catch {
      localStorage.removeItem(key);
    }
  }
  localStorage.setItem(`grip:seat:${code}`, JSON.stringify({ token, seat, at: now, ...extra }));
}

/** What the daily and stats screens need from the page. */
function screenContext() {
  return { net, navigate, toast, errorText, saveSeat };
}
function loadSeat(code) {
  try {
    return JSON.parse(localStorage.getItem(`grip:seat:${code}`) || "null");
  } catch {
    return null;
  }
}
function forgetSeat(code) {
  localStorage.removeItem(`grip:seat:${code}`);
}

// ------------------------------------------------------------------ home

function variantSelect(id) {
  return el(
    "select",
    { id, name: id },
    ...VARIANTS.map((v) => el("option", { value: v, i18n: `v_${v.replace("-", "_")}` })),
  );
}

/** `required`: a name with something in it before the form goes (a joiner's, whom the race would
 * otherwise call "Player"). */
function nameField({ required = false } = {}) {
  const input = el("input", {
    id: "name",
    type: "text",
    maxlength: "24",
    autocomplete: "nickname",
    value: localStorage.getItem("grip:name") || "",
    required,
    pattern: required ? ".*\\S.*" : null,
  });
  input.addEventListener("input", () => localStorage.setItem("grip:name", input.value.trim()));
  return el("p", { class: "field" }, el("label", { for: "name", i18n: "your_name" }), input);
}

function homeScreen() {
  const draw = () => {
    const timeSel = el(
      "select",
      { id: "time", name: "time" },
      ...TIME_LIMITS.map((s) => el("option", { value: String(s), i18n: "minutes", args: { n: s / 60 } })),
    );
    timeSel.value = "600";
    const deal = el("input", { id: "race-deal", type: "number", min: "0", inputmode: "numeric" });
    const opponent = el(
      "select",
      { id: "opponent", name: "opponent" },
      ...["friend", ...BOTS].map((o) => el("option", { value: o, i18n: `opp_${o}` })),
    );
    const createBtn = el("button", { class: "btn primary", type: "submit", id: "create", i18n: "create_race" });
    const form = el(
      "form",
      { class: "panel", id: "race-form", "aria-labelledby": "race-h" },
      el("h2", { id: "race-h", i18n: "race_friend" }),
      nameField(),
      el("p", { class: "field" }, el("label", { for: "opponent", i18n: "opponent" }), opponent),
      el("p", { class: "field" }, el("label", { for: "variant", i18n: "variant" }), variantSelect("variant")),
      el("p", { class: "field" }, el("label", { for: "time", i18n: "time_limit" }), timeSel),
      el("p", { class: "field" }, el("label", { for: "race-deal", i18n: "deal_optional" }), deal),
      createBtn,
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      localStorage.setItem("grip:name", document.getElementById("name").value.trim());
      const msg = {
        type: "create",
        variant: document.getElementById("variant").value,
        seats: 2,
        time_limit_s: Number(timeSel.value),
      };
      const name = document.getElementById("name").value.trim();
      if (name) msg.name = name;
      if (deal.value !== "") msg.deal = Number(deal.value);
      if (BOTS.includes(opponent.value)) msg.bot = opponent.value;
      createBtn.disabled = true;
      net.send(msg);
    });
    const code = el("input", {
      id: "join-code",
      type: "text",
      maxlength: "8",
      autocapitalize: "characters",
      autocomplete: "off",
      spellcheck: "false",
    });
    const joinForm = el(
      "form",
      { class: "panel", id: "join-form", "aria-labelledby": "join-h" },
      el("h2", { id: "join-h", i18n: "join_title" }),
      el("p", { class: "field" }, el("label", { for: "join-code", i18n: "code_label" }), code),
      el(
        "p",
        { class: "row" },
        el("button", { class: "btn primary", type: "submit", i18n: "join" }),
        el("button", {
          class: "btn",
          type: "button",
          i18n: "watch",
          onclick: () => {
            const c = code.value.trim().toUpperCase();
            if (CODE_RE.test(c)) navigate(`/w/${c}`);
            else toast(errorText("not_found"));
          },
        }),
      ),
    );
    joinForm.addEventListener("submit", (e) => {
      e.preventDefault();
      const c = code.value.trim().toUpperCase();
      if (CODE_RE.test(c)) navigate(`/m/${c}`);
      else toast(errorText("not_found"));
    });
    app.replaceChildren(
      el(
        "section",
        { class: "hero" },
        el("h1", { i18n: "home_title" }),
        el("p", { class: "lead", i18n: "home_lead" }),
      ),
      el(
        "div",
        { class: "cards2" },
        form,
        el(
          "div",
          { class: "stack" },
          joinForm,
          el(
            "section",
            { class: "panel" },
            el("h2", { i18n: "practice_title" }),
            el("p", { i18n: "practice_lead" }),
            el("a", { class: "btn", href: "/practice", "data-link": true, i18n: "start_practice" }),
            el("p", {}, el("a", { href: "/rules", "data-link": true, i18n: "nav_rules" })),
          ),
        ),
      ),
    );
  };
  draw();
  return {
    rerender: draw,
    onMessage: onCreated("create", () => {
      const bot = document.getElementById("opponent").value;
      return BOTS.includes(bot) ? { bot } : {};
    }),
  };
}

/** A racer's progress numbers, or the end of their game: the same on the race and watch screens. */
function noteRacer(st, msg) {
  if (msg.type === "progress") st.progress[msg.seat] = msg;
  else st.finished[msg.seat] = msg;
}

/** Whether a racer's game has ended: their last progress says so, a `finished` came (also for a
 * racer who never moved, so has no progress), or the race has its result. */
function racerDone(st, seat) {
  return Boolean(st.result || st.finished[seat] || (st.progress[seat] && st.progress[seat].finished));
}

/** The word under a racer's progress (an i18n key): done, not started yet, away, or playing.
 * Away in a race: their game goes on, and they are abandoned if they do not come back in time. */
function racerState(st, seat) {
  const s = st.lobby && st.lobby.seats.find((x) => x.seat === seat);
  const reason = st.finished[seat] && st.finished[seat].reason;
  if (reason === "resign" || reason === "abandoned") return `${reason}_flag`;
  if (racerDone(st, seat)) return "finished_flag";
  if (!s) return "playing_flag";
  if (st.lobby.status === "lobby") return s.ready ? "seat_ready" : "seat_waiting";
  if (!s.connected) return "seat_offline";
  return st.lobby.status === "countdown" ? "seat_ready" : "playing_flag";
}

/** A form's answer to "create": go to the new match, or let the form's button be pressed again.
 * `extra()`: what to keep with the seat that the lobby does not say (saveSeat). */
function onCreated(buttonId, extra = () => ({})) {
  return (msg) => {
    if (msg.type === "created") {
      saveSeat(msg.match, msg.token, msg.seat, extra());
      navigate(`/m/${msg.match}`);
      return true;
    }
    if (msg.type === "error") {
      const b = document.getElementById(buttonId);
      if (b) b.disabled = false;
    }
    return false;
  };
}

// ------------------------------------------------------------------ practice setup

function practiceScreen() {
  const draw = () => {
    const deal = el("input", {
      id: "deal",
      type: "number",
      min: "0",
      inputmode: "numeric",
      value: String(Math.floor(Math.random() * 1_000_000)),
    });
    const btn = el("button", { class: "btn primary", type: "submit", id: "start-practice", i18n: "start_practice" });
    const form = el(
      "form",
      { class: "panel narrow" },
      el("h1", { i18n: "practice_title" }),
      el("p", { i18n: "practice_lead" }),
      el("p", { class: "field" }, el("label", { for: "deal", i18n: "deal_number" }), deal),
      el("p", { class: "field" }, el("label", { for: "pvariant", i18n: "variant" }), variantSelect("pvariant")),
      btn,
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const n = Number(deal.value || 0);
      btn.disabled = true;
      net.send({
        type: "create",
        seats: 1,
        deal: Number.isFinite(n) && n >= 0 ? Math.floor(n) : 0,
        variant: document.getElementById("pvariant").value,
        time_limit_s: 3600, // the longest a create allows (MAX_TIME_LIMIT_S in server/protocol.py); the terminal uses it too
      });
    });
    app.replaceChildren(form);
  };
  draw();
  return {
    rerender: draw,
    onMessage: onCreated("start-practice"),
  };
}

// ------------------------------------------------------------------ shared bits of match screens

function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
}

function ratingText(r) {
  return t(`rating_${r || "none"}`);
}

function resultPanel(result, { mySeat = null, onRematch = null, rematchAsked = false, lobby = null }) {
  const seats = result.seats;
  let headline;
  if (seats.length === 1) headline = t("result_title");
  else if (result.draw) headline = t("draw");
  else if (mySeat !== null) headline = result.winner === mySeat ? t("you_won") : t("you_lost");
  else headline = t("wins", { name: seats.find((s) => s.seat === result.winner)?.name || "?" });
  // the same leftover, nobody resigned: the earlier finish won (RULES.md); the table shows the times, not why
  const winner = seats.find((s) => s.seat === result.winner);
  const byTime = seats.length === 2 && winner && seats.every((s) => s.score === winner.score && s.reason !== "resign");
  const table = el(
    "table",
    { class: "result-table" },
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ...["player", "score", "rating", "on_grid_short", "time", "reason"].map((k) => el("th", { scope: "col", i18n: k })),
      ),
    ),
    el(
      "tbody",
      {},
      ...seats.map((s) =>
        el(
          "tr",
          { class: s.seat === result.winner ? "winner" : "" },
          el("th", { scope: "row", text: s.name + (s.seat === mySeat ? ` (${t("you")})` : "") }),
          el("td", { class: "score", text: String(s.score) }),
          el("td", { text: ratingText(s.rating) }),
          el("td", { text: String(s.on_grid) }),
          el("td", { text: fmtTime(s.finished_at - result.started_at) }),
          el("td", { text: t(`reason_${s.reason}`) }),
        ),
      ),
    ),
  );
  const actions = el("p", { class: "row" });
  const asking = (lobby ? lobby.seats : []).filter((s) => s.rematch && s.seat !== mySeat);
  for (const s of asking) actions.append(el("span", { class: "note rematch-asked", i18n: "rematch_asked", args: { name: s.name } }));
  if (onRematch && seats.length === 2) {
    if (rematchAsked) actions.append(el("span", { class: "note", i18n: "rematch_wait" }));
    else actions.append(el("button", { class: "btn primary", type: "button", id: "rematch", i18n: "rematch", onclick: onRematch }));
  }
  if (result.daily && !result.seed) {
    // a daily game's replay (and seed) opens when its day is over
    actions.append(el("span", { class: "note", i18n: "replay_tomorrow" }));
  } else {
    actions.append(el("a", { class: "btn", href: `/r/${result.match}`, "data-link": true, id: "watch-replay", i18n: "watch_replay" }));
  }
  if (result.daily) {
    actions.append(el("a", { class: "btn", href: result.seed ? `/daily/${result.daily}` : "/daily", "data-link": true, id: "to-leaderboard", i18n: "to_leaderboard" }));
  }
  actions.append(el("a", { class: "btn ghost", href: "/", "data-link": true, i18n: "new_race" }));
  return el(
    "section",
    { class: "panel result", id: "result", "aria-labelledby": "result-h" },
    el("h2", { id: "result-h", text: headline }),
    byTime
      ? el("p", { class: "note", id: "tie-by-time", ...(winner.seat === mySeat ? { i18n: "tie_by_time_you" } : { i18n: "tie_by_time", args: { name: winner.name } }) })
      : null,
    table,
    result.seed ? el("p", { class: "seed" }, el("span", { i18n: "seed" }), ": ", el("code", { text: result.seed })) : null,
    actions,
  );
}

function progressBox(p, name, total, { opponent = true, state = "playing_flag" } = {}) {
  p = p || { seat: "", on_grid: total / 4, leftover: (total * 3) / 4, moves: 0 };
  const look = { finished_flag: "done", resign_flag: "done", abandoned_flag: "done", seat_offline: "away" }[state] || "";
  return el(
    "div",
    { class: `progress-box ${look}`, "data-seat": p.seat },
    el("h3", {}, opponent ? el("span", { i18n: "opponent" }) : null, opponent ? ": " : null, el("span", { text: name })),
    el(
      "dl",
      {},
      el("dt", { i18n: "on_grid_short" }),
      el("dd", { class: "p-grid", text: `${p.on_grid} / ${total}` }),
      el("dt", { i18n: "left_short" }),
      el("dd", { class: "p-left", text: String(p.leftover) }),
      el("dt", { i18n: "moves_short" }),
      el("dd", { class: "p-moves", text: String(p.moves) }),
    ),
    el("p", { class: "p-state", i18n: state }),
  );
}

function totalCards(variant) {
  return variant === "single-deck" ? 48 : 96;
}

function moveLabel(text) {
  if (text === "T") return t("mv_turn");
  if (text === "R") return t("mv_redeal");
  if (text === "undo") return t("mv_undo");
  return text;
}

class Clock {
  constructor() {
    this.offset = 0; // server clock minus ours (ms)
    this.endsAt = 0;
    this.node = el("span", { class: "clock", role: "timer", "aria-label": t("time_left") });
    this.timer = setInterval(() => this.tick(), 250);
  }
  now() {
    return Date.now() + this.offset;
  }
  /** A server time that is now (as it arrives live, give or take the network): estimate the offset. */
  sync(serverNow) {
    this.offset = serverNow - Date.now();
  }
  tick() {
    this.node.textContent = this.endsAt ? fmtTime(this.endsAt - this.now()) : "";
    this.node.classList.toggle("low", this.endsAt && this.endsAt - this.now() < 30_000);
  }
  stop() {
    clearInterval(this.timer);
  }
}

function countdownOverlay(startsAt, clock) {
  const box = el("div", { class: "countdown", role: "status", "aria-live": "assertive" });
  const num = el("span", { class: "num" });
  box.append(el("span", { class: "label", i18n: "countdown_label" }), num);
  const tick = () => {
    const left = Math.ceil((startsAt - clock.now()) / 1000);
    num.textContent = String(Math.max(1, Math.min(3, left)));
    if (left <= 0) {
      clearInterval(id);
      box.remove();
    }
  };
  const id = setInterval(tick, 100);
  tick();
  return box;
}

// ------------------------------------------------------------------ a seat: lobby, race, result

function matchScreen(code) {
  const st = {
    code,
    seat: null,
    token: null,
    lastEv: 0,
    lobby: null,
    view: null,
    seq: 0,
    pending: null,
    progress: {},
    finished: {},
    result: null,
    startsAt: 0,
    rematchAsked: false,
    takenOver: false,
    fatal: null,
    resumeTries: 0,
    confirm: null, // {key, sent}: Finish or Resign asks once more; kept across redraws
    confirmTimer: 0,
  };
  const saved = loadSeat(code);
  if (saved) {
    Object.assign(st, {
      token: saved.token,
      seat: saved.seat,
      bot: saved.bot || null,
    });
  }
  const clock = new Clock();

  const top = el("div", { class: "match-top" });
  const panel = el("div", { class: "match-panel" });
  const boardBox = el("section", { class: "board-wrap", id: "my-board", role: "region" });
  const side = el("aside", { class: "side" });
  const board = new Board(boardBox, { interactive: true, name: t("you"), onMove: sendMove });
  app.replaceChildren(top, panel, el("div", { class: "race" }, boardBox, side));

  function resume() {
    if (st.takenOver) return;
    net.send({ type: "resume", match: code, token: st.token, last_ev: st.lastEv });
  }
  /** Take the seat back from the tab that took it over (that one is then told so). */
  function playHere() {
    st.takenOver = false;
    st.fatal = null;
    drawAll();
    resume();
  }
  /** Take the free seat, under the name kept in this browser. */
  function join() {
    st.askName = false;
    const name = localStorage.getItem("grip:name");
    net.send({ type: "join", match: code, ...(name ? { name } : {}) });
  }
  // Someone who came by a friend's link has had no name field yet: ask once, before the seat.
  // Meanwhile the page watches the lobby (who invites them; whether a seat is still free).
  st.askName = !st.token && !localStorage.getItem("grip:name");
  if (st.token) resume();
  else if (st.askName) net.send({ type: "watch", match: code });
  else join();

  function sendMove(text) {
    if (st.pending || !net.online) return;
    st.pending = { seq: st.seq + 1, move: text };
    board.setBusy(true);
    net.send({ type: "move", seq: st.pending.seq, move: text });
  }

  /** A practice game needs no "ready" click: send it once for the player. */
  function autoReady(lobby) {
    const me = lobby.seats.find((s) => s.seat === st.seat);
    if (me && !me.ready && !st.readySent) {
      st.readySent = true;
      net.send({ type: "ready" });
    }
  }

  function solo() {
    return st.lobby && st.lobby.solo;
  }
  function myEnded() {
    return st.seat !== null && Boolean(st.finished[st.seat]);
  }

  function drawTop() {
    const lb = st.lobby;
    fill(
      top,
      el("span", { class: "tag" }, el("span", { i18n: "code" }), ": ", el("strong", { class: "code", text: code })),
      lb ? el("span", { class: "tag", i18n: `v_${lb.variant.replace("-", "_")}` }) : null,
      lb && lb.daily ? el("span", { class: "tag daily-tag", i18n: lb.ranked ? "daily_ranked_tag" : "daily_practice_tag" }) : null,
      lb && lb.solo && !lb.ranked ? el("span", { class: "tag", i18n: "solo_game" }) : null,
      // the creator picked the deal: they may know it, and whoever races them should know that
      lb && lb.chosen_deal && !lb.solo ? el("span", { class: "tag chosen-deal", i18n: "chosen_deal_tag", title: t("chosen_deal_note") }) : null,
      clock.node,
    );
  }

  function drawPanel() {
    if (st.askName && !st.fatal && st.joinForm && st.joinForm.parentNode === panel) {
      joinForm(); // in place: taken out and put back, the name field would lose the typing focus
      return;
    }
    panel.replaceChildren();
    if (st.fatal) {
      panel.append(
        el(
          "section",
          { class: "panel", role: "alert" },
          el("p", { class: "big", text: st.fatal }),
          el(
            "p",
            { class: "row" },
            st.takenOver
              ? el("button", { class: "btn", type: "button", id: "play-here", i18n: "play_here", onclick: playHere })
              : st.fatalCode === "not_found"
                ? null
                : el("a", { class: "btn", href: `/w/${code}`, "data-link": true, i18n: "go_watch" }),
            el("a", { class: "btn ghost", href: "/", "data-link": true, i18n: "go_home" }),
          ),
        ),
      );
      return;
    }
    if (st.askName) {
      panel.append(joinForm());
      return;
    }
    const lb = st.lobby;
    if (!lb) {
      panel.append(el("p", { class: "note", i18n: "loading" }));
      return;
    }
    if (st.result) {
      panel.append(
        resultPanel(st.result, {
          mySeat: st.seat,
          lobby: st.lobby,
          rematchAsked: st.rematchAsked || Boolean(st.lobby.seats.find((x) => x.seat === st.seat)?.rematch),
          onRematch: () => {
            st.rematchAsked = true;
            net.send({ type: "rematch" });
            drawPanel();
          },
        }),
      );
      return;
    }
    if (lb.status === "lobby" && !lb.solo) {
      const me = lb.seats.find((s) => s.seat === st.seat);
      const seats = el("ul", { class: "seats" });
      for (const n of [0, 1]) {
        const s = lb.seats.find((x) => x.seat === n);
        if (!s) seats.append(el("li", { class: "free", i18n: "free_seat" }));
        else
          seats.append(
            el(
              "li",
              { class: s.ready ? "ready" : "" },
              el("strong", { text: s.name + (s.seat === st.seat ? ` (${t("you")})` : "") }),
              " · ",
              el("span", { i18n: s.ready ? "seat_ready" : "seat_waiting" }),
              s.connected ? null : el("span", { class: "off" }, " · ", el("span", { i18n: "seat_offline" })),
            ),
          );
      }
      panel.append(
        el(
          "section",
          { class: "panel lobby", id: "lobby" },
          el("h2", { i18n: st.bot ? "lobby_bot_title" : "lobby_title" }),
          el("p", { i18n: st.bot ? "bot_text" : "share_text" }),
          st.bot ? null : linkRow("share-link", "copy", net.shareLink(`/m/${code}`), "share_text"),
          el("p", {}, el("span", { i18n: "code" }), ": ", el("strong", { class: "code big", text: code })),
          seats,
          el(
            "p",
            { class: "row" },
            me && me.ready
              ? el("span", { class: "note", id: "ready-wait", i18n: "you_are_ready" })
              : el("button", { class: "btn primary", type: "button", id: "ready", i18n: "ready", onclick: () => net.send({ type: "ready" }) }),
            el("button", {
              class: "btn ghost",
              type: "button",
              i18n: "leave",
              onclick: () => {
                net.send({ type: "leave" });
                forgetSeat(code);
                navigate("/");
              },
            }),
          ),
          // to copy for others: opening it here would give up the seat (and racers may not watch);
          // daily games are not watched while their day runs, so they have none
          lb.daily ? null : el("p", { class: "fine", i18n: "watch_link" }),
          lb.daily ? null : linkRow("watch-link", "copy-watch", net.shareLink(`/w/${code}`), "watch_link"),
        ),
      );
      return;
    }
    if (myEnded()) {
      panel.append(
        el("p", {
          class: "panel note",
          role: "status",
          i18n: { resign: "my_resigned", abandoned: "my_abandoned" }[st.finished[st.seat].reason] || "my_game_over",
          args: { n: st.finished[st.seat].score },
        }),
      );
    }
  }

  /** The lobby as the stranger asked for a name sees it: a race that is full, started or a solo
   * game is theirs to watch, not to join. */
  function peeked(lobby) {
    st.lobby = lobby;
    if (lobby.status === "lobby" && !lobby.solo && lobby.seats.length === 0) {
      // everyone left: nobody invites any more (the server refuses a join too)
      Object.assign(st, { askName: false, fatalCode: "not_found", fatal: errorText("not_found") });
    } else if (lobby.status !== "lobby" || lobby.solo || lobby.seats.length >= 2) {
      // theirs to watch; a finished race or a practice game shows as what it is, without a word
      if (lobby.status === "lobby" && !lobby.solo) toast(errorText("full"));
      else if (lobby.status === "countdown" || lobby.status === "playing") toast(t(lobby.solo ? "practice_watch" : "started_watch"));
      navigate(`/w/${code}`, true);
      return;
    }
    drawAll();
  }

  /** The name and a Join button, for a stranger by link; built once, so redraws keep what is typed. */
  function joinForm() {
    const host = st.lobby && st.lobby.seats[0];
    if (!st.joinForm) {
      st.joinForm = el(
        "form",
        { class: "panel lobby", id: "join-form" },
        el("h2", { i18n: "join_race_title" }),
        el("p", { class: "invite" }),
        el("p", {}, el("span", { i18n: "code" }), ": ", el("strong", { class: "code big", text: code })),
        nameField({ required: true }),
        el(
          "p",
          { class: "row" },
          el("button", { class: "btn primary", type: "submit", id: "join", i18n: "join" }),
          el("a", { class: "btn ghost", href: `/w/${code}`, "data-link": true, i18n: "watch" }),
        ),
      );
      st.joinForm.addEventListener("submit", (e) => {
        e.preventDefault();
        join();
        drawPanel();
      });
      requestAnimationFrame(() => st.joinForm.querySelector("#name").focus());
    }
    fill(st.joinForm.querySelector(".invite"), host ? el("span", { i18n: "invited_by", args: { name: host.name } }) : null);
    return st.joinForm;
  }

  /** A read-only link and its Copy button. */
  function linkRow(id, buttonId, link, labelKey) {
    const input = el("input", { id, type: "text", readonly: true, value: link, "aria-label": t(labelKey) });
    return el(
      "p",
      { class: "row share" },
      input,
      el("button", { class: "btn", type: "button", id: buttonId, i18n: "copy", onclick: () => copy(link, input) }),
    );
  }

  function drawSide() {
    const focused = side.contains(document.activeElement) ? document.activeElement.id : "";
    side.replaceChildren();
    const lb = st.lobby;
    if (!lb || (lb.status === "lobby" && !lb.solo)) return;
    const total = totalCards(lb.variant);
    for (const s of lb.seats) {
      if (s.seat === st.seat) continue;
      side.append(progressBox(st.progress[s.seat], s.name, total, { state: racerState(st, s.seat) }));
    }
    const actions = el("div", { class: "actions" });
    if (!st.result && !myEnded() && lb.status === "playing") {
      if (lb.solo && !lb.ranked) {
        actions.append(
          el("button", { class: "btn", type: "button", id: "hint", i18n: "hint", onclick: () => net.send({ type: "hint" }) }),
          el("button", {
            class: "btn",
            type: "button",
            id: "undo",
            i18n: "undo",
            disabled: !st.view || st.view.moves === 0,
            onclick: () => net.send({ type: "undo" }),
          }),
        );
      }
      actions.append(confirmButton("finish", "finish_confirm", () => net.send({ type: "finish" })));
      if (!lb.solo) actions.append(confirmButton("resign", "resign_confirm", () => net.send({ type: "resign" })));
    }
    side.append(actions, el("p", { class: "hint-text", id: "hint-text", role: "status" }));
    if (focused) document.getElementById(focused)?.focus();
  }

  /** Finish or Resign: the first click arms the button for ARMED_MS, a second one acts. The state
   * lives in `st.confirm`, so the redraws that every opponent move brings keep it. */
  function confirmButton(key, confirmKey, action) {
    const c = st.confirm && st.confirm.key === key ? st.confirm : null;
    const b = el("button", {
      class: `btn ghost ${c ? "armed" : ""}`,
      type: "button",
      id: key,
      i18n: c ? confirmKey : key,
      disabled: c && c.sent,
    });
    b.addEventListener("click", () => {
      clearTimeout(st.confirmTimer);
      if (c) {
        c.sent = true;
        action();
      } else {
        st.confirm = { key, sent: false };
        st.confirmTimer = setTimeout(() => {
          st.confirm = null;
          drawSide();
        }, ARMED_MS);
      }
      drawSide();
    });
    return b;
  }

  function drawBoard() {
    boardBox.hidden = !st.view;
    if (st.view) {
      board.name = t("you");
      board.setView(st.view);
      board.setBusy(Boolean(st.pending) || myEnded() || Boolean(st.result) || !net.online);
    }
  }

  function drawAll() {
    drawTop();
    drawPanel();
    drawSide();
    drawBoard();
  }
  drawAll();

  function copy(text, input) {
    const done = () => toast(t("copied"), "info");
    const fallback = () => {
      input.select();
      try {
        if (document.execCommand("copy")) return done();
      } catch {
        /* fall through */
      }
      toast(t("copy_failed"));
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, fallback);
    else fallback();
  }

  function seen(msg) {
    if (typeof msg.ev === "number" && msg.ev > st.lastEv) st.lastEv = msg.ev;
  }

  /** One match event; `replay` is true while catching up from a `resumed` snapshot. */
  function event(msg, replay) {
    seen(msg);
    switch (msg.type) {
      case "lobby": {
        st.lobby = msg;
        if (msg.solo && msg.status === "lobby" && !replay) autoReady(msg);
        break;
      }
      case "countdown":
        st.startsAt = msg.starts_at;
        if (!replay) {
          clock.sync(msg.starts_at - COUNTDOWN_MS);
          showCountdown();
          if (!solo()) beep(440);
        }
        break;
      case "start":
        if (!replay) clock.sync(msg.started_at);
        clock.endsAt = msg.ends_at;
        if (!replay && msg.view) st.view = msg.view;
        if (!replay) beep(880, 120);
        break;
      case "progress":
      case "finished":
        noteRacer(st, msg);
        break;
      case "result":
        st.result = msg;
        clock.endsAt = 0;
        break;
      case "rematched":
        if (!replay) {
          saveSeat(msg.match, st.token, st.seat, st.bot ? { bot: st.bot } : {});
          navigate(`/m/${msg.match}`);
          return "left";
        }
        break;
    }
    return null;
  }

  /** The 3-2-1 before a race (not for practice), live or after a reload in the middle of it. */
  function showCountdown() {
    if (!solo() && !document.querySelector(".countdown")) app.append(countdownOverlay(st.startsAt, clock));
  }

  return {
    rerender: drawAll,
    destroy() {
      clock.stop();
      clearTimeout(st.confirmTimer);
      for (const o of document.querySelectorAll(".countdown")) o.remove();
    },
    onStatus(s) {
      if (st.view) board.setBusy(s !== "online" || Boolean(st.pending) || myEnded() || Boolean(st.result));
    },
    onReconnect() {
      if (st.token) resume();
      else if (st.askName) net.send({ type: "watch", match: code });
    },
    onMessage(msg) {
      switch (msg.type) {
        case "watching":
          seen(msg);
          peeked(msg.lobby);
          return true;
        case "joined":
          st.token = msg.token;
          st.seat = msg.seat;
          saveSeat(code, msg.token, msg.seat);
          return true;
        case "resumed": {
          st.seat = msg.seat;
          st.resumeTries = 0;
          for (const m of msg.missed) event(m, true);
          st.lobby = msg.lobby;
          st.view = msg.view;
          for (const p of msg.opponents) st.progress[p.seat] = p;
          if (msg.result) st.result = msg.result;
          clock.sync(msg.now); // the events caught up above came late: their times say nothing of now
          clock.endsAt = st.result ? 0 : msg.ends_at || 0;
          if (msg.lobby.status === "countdown") showCountdown();
          st.lastEv = msg.ev; // even below ours: events the store lost are numbered anew
          st.seq = msg.last_seq;
          if (st.pending && st.pending.seq > st.seq) {
            net.send({ type: "move", seq: st.pending.seq, move: st.pending.move });
          } else {
            st.pending = null;
          }
          if (msg.lobby.solo && msg.lobby.status === "lobby") autoReady(msg.lobby);
          drawAll();
          return true;
        }
        case "ack":
          seen(msg);
          if (st.pending && msg.seq === st.pending.seq) {
            st.pending = null;
            st.seq = msg.seq;
            st.view = msg.view;
            beep(600, 30);
            drawBoard();
            drawSide();
          }
          return true;
        case "rejected":
          if (st.pending && msg.seq === st.pending.seq) st.pending = null;
          if (msg.view) st.view = msg.view;
          toast(errorText(msg.code));
          if (msg.code === "out_of_order") resume();
          drawBoard();
          return true;
        case "hint": {
          const box = document.getElementById("hint-text");
          if (box) box.textContent = msg.move ? t("hint_is", { move: moveLabel(msg.move) }) : t("no_hint");
          if (msg.move) board.setHint(msg.move);
          return true;
        }
        case "undone":
          st.view = msg.view;
          drawBoard();
          drawSide();
          return true;
        case "error":
          if (msg.code === "taken_over") {
            st.takenOver = true;
            st.fatal = errorText(msg.code);
            drawAll();
            return true;
          }
          if (msg.code === "not_found" && st.token && !st.lobby && st.resumeTries < 3) {
            // a rematch's new match may be a moment behind its announcement
            st.resumeTries += 1;
            setTimeout(resume, 400 * st.resumeTries);
            return true;
          }
          if (st.askName && msg.code === "not_allowed") {
            st.noWatch = true; // a daily race cannot be watched while its day runs: no peek, the form all the same
            drawAll();
            return true;
          }
          if (!st.token && !st.noWatch && ["full", "wrong_phase"].includes(msg.code)) {
            // a stranger's link to a race that is full, started or over: show it to them instead
            toast(errorText(msg.code));
            navigate(`/w/${code}`, true);
            return true;
          }
          if ((!st.lobby || !st.token) && ["not_found", "full", "wrong_phase", "bad_token", "not_allowed"].includes(msg.code)) {
            if (msg.code === "bad_token") forgetSeat(code);
            // not_allowed without a seat: a join of one's own match, or of a daily race too early
            st.askName = false;
            st.fatalCode = msg.code;
            const daily = st.noWatch && ["full", "wrong_phase"].includes(msg.code); // not to be watched today either
            st.fatal = errorText(msg.code === "not_allowed" ? "join_not_allowed" : daily ? "daily_taken" : msg.code);
            drawAll();
            return true;
          }
          toast(errorText(msg.code));
          st.confirm = null; // a refused finish or resign may be tried again
          drawSide();
          return true;
        default: {
          if (st.askName) {
            // still asking the name: only the lobby matters (who is there, whether a seat is free)
            if (msg.type === "lobby") peeked(msg);
            return true;
          }
          if (event(msg, false) === "left") return true;
          drawTop();
          drawPanel();
          drawSide();
          if (msg.type === "start" || msg.type === "result" || msg.type === "finished") drawBoard();
          return true;
        }
      }
    },
  };
}

// ------------------------------------------------------------------ spectator

function watchScreen(code) {
  const st = { lobby: null, boards: {}, progress: {}, moves: {}, result: null, finished: {}, lastEv: 0 };
  const clock = new Clock();
  const top = el("div", { class: "match-top" });
  const panel = el("div", { class: "match-panel" });
  const cols = el("div", { class: "spectate" });
  const lagNote = el("p", { class: "note spec-lag", i18n: "spectator_lag" });
  app.replaceChildren(top, panel, lagNote, cols);
  const boards = {};
  net.send({ type: "watch", match: code });

  function names() {
    const out = {};
    for (const s of st.lobby ? st.lobby.seats : []) out[s.seat] = s.name;
    return out;
  }

  function drawTop() {
    const lb = st.lobby;
    fill(
      top,
      el("span", { class: "tag" }, el("span", { i18n: "spectating" })),
      el("span", { class: "tag" }, el("span", { i18n: "code" }), ": ", el("strong", { class: "code", text: code })),
      lb ? el("span", { class: "tag", i18n: `v_${lb.variant.replace("-", "_")}` }) : null,
      clock.node,
    );
  }

  function drawPanel() {
    panel.replaceChildren();
    if (st.fatal) {
      panel.append(el("section", { class: "panel", role: "alert" }, el("p", { class: "big", text: st.fatal }), el("a", { class: "btn", href: "/", "data-link": true, i18n: "go_home" })));
      return;
    }
    if (st.result) panel.append(resultPanel(st.result, {}));
    else if (st.lobby && st.lobby.status === "lobby") panel.append(el("p", { class: "panel note", i18n: "spectator_wait" }));
  }

  function drawColumns() {
    const nm = names();
    const seats = st.lobby ? st.lobby.seats.map((s) => s.seat) : [];
    const total = st.lobby ? totalCards(st.lobby.variant) : 96;
    cols.replaceChildren();
    for (const n of seats) {
      const col = el("section", { class: "spec-col", "data-seat": String(n), "aria-label": nm[n] });
      col.append(progressBox(st.progress[n], nm[n], total, { opponent: false, state: racerState(st, n) }));
      const bx = el("div", { class: "board-wrap spec-board", "data-seat": String(n), role: "region" });
      if (!boards[n]) boards[n] = new Board(bx, { name: nm[n] });
      else {
        boards[n].root = bx;
        bx.classList.add("board");
      }
      boards[n].name = nm[n];
      if (st.boards[n]) boards[n].setView(st.boards[n]);
      col.append(bx);
      const list = el("ol", { class: "move-list", "aria-label": t("moves_label") });
      for (const m of st.moves[n] || []) list.append(el("li", { text: moveLabel(m) }));
      col.append(el("details", { class: "moves", open: true }, el("summary", { i18n: "moves_label" }), list));
      cols.append(col);
      list.scrollTop = list.scrollHeight;
    }
  }

  /** While a race with a hidden stock runs, a racer's board is shown only as far as the other racer has
   * drawn from the stock: both hold the same deal (docs/protocol.md, "What spectators see of a live race"). */
  function drawLagNote() {
    const lb = st.lobby;
    lagNote.hidden = !(lb && lb.boards_lag && lb.status === "playing" && !st.result);
  }

  function drawAll() {
    drawTop();
    drawPanel();
    drawColumns();
    drawLagNote();
  }
  drawAll();

  return {
    rerender: drawAll,
    destroy: () => clock.stop(),
    onReconnect() {
      net.send({ type: "watch", match: code });
    },
    onMessage(msg) {
      if (typeof msg.ev === "number" && msg.ev > st.lastEv) st.lastEv = msg.ev;
      switch (msg.type) {
        case "watching":
          st.lobby = msg.lobby;
          st.result = msg.result || null;
          clock.sync(msg.now);
          clock.endsAt = st.result ? 0 : msg.ends_at || 0;
          for (const b of msg.boards) {
            st.progress[b.seat] = b.progress;
            st.boards[b.seat] = b.view;
            st.moves[b.seat] = b.moves || [];
          }
          break;
        case "lobby":
          st.lobby = msg;
          break;
        case "countdown":
          clock.sync(msg.starts_at - COUNTDOWN_MS);
          app.append(countdownOverlay(msg.starts_at, clock));
          break;
        case "start":
          clock.sync(msg.started_at);
          clock.endsAt = msg.ends_at;
          (msg.boards || []).forEach((v, i) => {
            const seat = st.lobby ? st.lobby.seats[i].seat : i;
            st.boards[seat] = v;
            st.moves[seat] = [];
          });
          break;
        case "board": {
          st.boards[msg.seat] = msg.view;
          st.progress[msg.seat] = msg.progress;
          const list = (st.moves[msg.seat] = st.moves[msg.seat] || []);
          if (msg.move === "undo") list.pop();
          else list.push(msg.move, ...(msg.auto || []));
          break;
        }
        case "progress":
        case "finished":
          noteRacer(st, msg);
          break;
        case "result":
          st.result = msg;
          clock.endsAt = 0;
          break;
        case "rematched":
          navigate(`/w/${msg.match}`);
          return true;
        case "error":
          if (!st.lobby) {
            // not_allowed: a racer before the result, or a ranked daily game before its day is over
            st.fatal = errorText(msg.code === "not_allowed" ? "watch_not_allowed" : msg.code);
            drawAll();
            return true;
          }
          toast(errorText(msg.code));
          return true;
        default:
          return false;
      }
      drawAll();
      return true;
    },
  };
}

// ------------------------------------------------------------------ start

document.addEventListener("keydown", (e) => {
  if (e.target.matches("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === "t" || e.key === "T") {
    const stock = document.querySelector("#my-board button.stock:not([disabled])");
    if (stock) {
      e.preventDefault();
      stock.click();
    }
  } else if (e.key === "Escape") {
    const sel = document.querySelector("#my-board .selected");
    if (sel) sel.click();
  }
});

buildChrome();
net.connect();
route();
