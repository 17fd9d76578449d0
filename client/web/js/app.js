// The page: its settings and header, the one connection to the server, and the routes, each drawn
// by its screen's module. Routes (the server sends index.html for each): /  /practice  /rules
// /m/CODE (play or join)  /w/CODE (watch)  /r/CODE (replay)  /daily  /daily/YYYY-MM-DD (a day's
// leaderboard)  /stats  /stats/PLAYER (another player's figures)  /live (races being played);
// anything else: "nothing here".

import { LANGS, detectLang, errorText, setLang, t, translateTree } from "./i18n.js";
import { Net } from "./net.js";
import { el } from "./dom.js";
import { saveSeat } from "./seats.js";
import { CODE_RE, homeScreen, practiceScreen, quickMessage } from "./home.js";
import { liveScreen } from "./live.js";
import { raceScreen } from "./race.js";
import { watchScreen } from "./watch.js";
import { fatalPanel } from "./race-parts.js";
import { rulesScreen } from "./rules.js";
import { replayScreen } from "./replay.js";
import { dailyScreen } from "./daily.js";
import { statsScreen } from "./stats.js";

const SIZES = ["A", "A+", "A++", "A+++"];

const app = document.getElementById("app");
let screen = null; // {onMessage, onStatus, onReconnect, destroy, rerender}

// ------------------------------------------------------------------ settings, header

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
  window.__grip.toasts.push(text);
  if (kind === "error") window.__grip.errors.push(text);
  const box = document.getElementById("toast");
  box.textContent = text;
  box.className = `toast show ${kind}`;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.className = "toast"), 6000);
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
    window.__grip.statuses.push(s);
    setConnStatus(s);
    if (screen && screen.onStatus) screen.onStatus(s);
  },
  onReconnect: () => screen && screen.onReconnect && screen.onReconnect(),
  onNewIdentity: () => toast(t("new_identity"), "info"),
  onMessage: (msg) => {
    if (quickMessage(msg, context)) return;
    if (screen && screen.onMessage && screen.onMessage(msg)) return;
    if (msg.type === "error") toast(errorText(msg.code));
  },
});
// For tests: __grip.net.drop() simulates a dropped network; __grip.errors lists the error messages
// shown, __grip.toasts every message shown, __grip.statuses the connection's states in order;
// __grip.screen is the current screen (the race and watch screens' `state` is their RaceState).
window.__grip = { net, errors: [], toasts: [], statuses: [] };

// ------------------------------------------------------------------ routing

/** What every screen may use of the page. */
const context = { app, net, navigate, toast, beep, errorText, saveSeat };

function navigate(path, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  route();
}

/** A path the page has no screen for (the server sends it with status 404): say so, and the way home. */
function missingScreen(path) {
  const m = /^\/[mwr]\/([^/]*)$/.exec(path);
  let code = m ? m[1] : null;
  try {
    code = code && decodeURIComponent(code);
  } catch {
    /* shown as typed */
  }
  const draw = () => app.replaceChildren(fatalPanel(code ? t("code_missing", { code }) : t("page_missing")));
  draw();
  return { rerender: draw };
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
  const [, kind, code] = /^\/([mwr])\/([A-Z0-9]+)$/.exec(path) || [];
  const valid = code && CODE_RE.test(code);
  if (path === "/") screen = homeScreen(context);
  else if (path === "/practice") screen = practiceScreen(context);
  else if (path === "/rules") screen = rulesScreen(app);
  else if (valid && kind === "m") screen = raceScreen(context, code);
  else if (valid && kind === "w") screen = watchScreen(context, code);
  else if (valid && kind === "r") screen = replayScreen(app, code);
  else if (path === "/daily") screen = dailyScreen(app, context);
  else if ((m = /^\/daily\/(\d{4}-\d{2}-\d{2})$/.exec(path))) screen = dailyScreen(app, context, m[1]);
  else if (path === "/stats") screen = statsScreen(app, context);
  else if (path === "/live") screen = liveScreen(app, context);
  else if ((m = /^\/stats\/([A-Za-z0-9_-]{1,64})$/.exec(path))) screen = statsScreen(app, context, m[1]);
  else screen = missingScreen(path);
  window.__grip.screen = screen;
  document.getElementById("main").focus({ preventScroll: true });
  window.scrollTo(0, 0);
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
