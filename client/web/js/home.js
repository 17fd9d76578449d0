// The start page (race anyone, race a friend or a bot; join or watch by code) and the practice
// form: each ends in a match, and goes to it (race.js). Waiting in the quick-race queue goes on
// whichever page the player looks at meanwhile (`quickMessage`, called by app.js for every message).
import { el, fmtTime } from "./dom.js";
import { errorText, t } from "./i18n.js";
import { saveSeat } from "./seats.js";
import { VARIANTS, variantKey } from "./variants.js";

const TIME_LIMITS = [120, 300, 600, 900, 1800];
const BOTS = ["greedy", "lookahead"];
const QUICK_CLOCKS = [180, 300, 600]; // QuickClock in server/protocol.py

/** The place this page waits in, as the server last said (`queued`), or null. */
export const quick = { waiting: null };

/** The quick-race messages, whatever screen is up: paired → to the race; a place given back after a
 * no-show → to the start page, which shows the wait; a place lost to another tab → say so. True: handled. */
export function quickMessage(msg, { navigate, toast }) {
  if (msg.type === "queued") {
    quick.waiting = { ...msg, seen: Date.now() };
    if (msg.again) {
      toast(t("quick_again"), "info");
      if (location.pathname !== "/") navigate("/");
    }
  } else if (msg.type === "unqueued") {
    quick.waiting = null;
    if (msg.reason === "elsewhere") toast(t("quick_elsewhere"), "info");
  } else if (msg.type === "paired") {
    quick.waiting = null;
    saveSeat(msg.match, msg.token, msg.seat);
    navigate(`/m/${msg.match}`);
    return true;
  }
  return false;
}
export const CODE_RE = /^[34679ACDEFGHJKMNPQRTUVWXY]{8}$/;

/** The match code in what was typed or pasted, or null: the code itself in any case, with spaces
 * around or in it, or a link to the race, its watch page or its replay (…/m/CODE, /w/CODE, /r/CODE)
 * as the lobby's Copy buttons give them. */
export function codeIn(text) {
  const link = /\/[mwr]\/([^/?#\s]+)/i.exec(text);
  const code = (link ? link[1] : text).replace(/\s+/g, "").toUpperCase();
  return CODE_RE.test(code) ? code : null;
}

function variantSelect(id) {
  return el("select", { id, name: id }, ...VARIANTS.map((v) => el("option", { value: v.name, i18n: variantKey(v.name) })));
}

/** `required`: a name with something in it before the form goes (a joiner's, whom the race would
 * otherwise call "Player"). */
export function nameField({ required = false } = {}) {
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

/** A form's answer to "create": go to the new match, or let the form's button be pressed again.
 * `extra()`: what to keep with the seat that the lobby does not say (saveSeat). */
function onCreated(navigate, buttonId, extra = () => ({})) {
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

/** The largest deal number a `create` takes (MAX_DEAL in server/protocol.py): the form says so, not the server. */
const MAX_DEAL = "1000000000000";

export function homeScreen({ app, net, navigate, toast }) {
  const draw = () => {
    const timeSel = el(
      "select",
      { id: "time", name: "time" },
      ...TIME_LIMITS.map((s) => el("option", { value: String(s), i18n: "minutes", args: { n: s / 60 } })),
    );
    timeSel.value = "600";
    const deal = el("input", { id: "race-deal", type: "number", min: "0", max: MAX_DEAL, inputmode: "numeric" });
    const rated = el("input", { id: "rated", type: "checkbox" });
    const hidden = el("input", { id: "private", type: "checkbox" });
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
      el("p", { class: "field" }, el("label", { for: "opponent", i18n: "opponent" }), opponent),
      el("p", { class: "field" }, el("label", { for: "variant", i18n: "variant" }), variantSelect("variant")),
      el("p", { class: "field" }, el("label", { for: "time", i18n: "time_limit" }), timeSel),
      el("p", { class: "field" }, el("label", { for: "race-deal", i18n: "deal_optional" }), deal),
      el("p", { class: "check" }, rated, " ", el("label", { for: "rated", i18n: "opt_rated" })),
      el("p", { class: "check" }, hidden, " ", el("label", { for: "private", i18n: "opt_private" })),
      createBtn,
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const name = document.getElementById("name").value.trim();
      localStorage.setItem("grip:name", name);
      const msg = {
        type: "create",
        variant: document.getElementById("variant").value,
        seats: 2,
        time_limit_s: Number(timeSel.value),
      };
      if (name) msg.name = name;
      if (deal.value !== "" && !rated.checked) msg.deal = Number(deal.value);
      if (BOTS.includes(opponent.value)) msg.bot = opponent.value;
      else if (rated.checked) msg.rated = true;
      if (hidden.checked) msg.private = true;
      createBtn.disabled = true;
      net.send(msg);
    });
    // no maxlength: a cut before the code is taken out would spoil a pasted link or a code with a space
    const code = el("input", {
      id: "join-code",
      type: "text",
      autocapitalize: "characters",
      autocomplete: "off",
      spellcheck: "false",
    });
    const go = (prefix) => {
      const c = codeIn(code.value);
      if (c) navigate(`/${prefix}/${c}`);
      else toast(errorText("not_found"));
    };
    const joinForm = el(
      "form",
      { class: "panel", id: "join-form", "aria-labelledby": "join-h" },
      el("h2", { id: "join-h", i18n: "join_title" }),
      el("p", { class: "field" }, el("label", { for: "join-code", i18n: "code_label" }), code),
      el(
        "p",
        { class: "row" },
        el("button", { class: "btn primary", type: "submit", i18n: "join" }),
        el("button", { class: "btn", type: "button", i18n: "watch", onclick: () => go("w") }),
      ),
    );
    joinForm.addEventListener("submit", (e) => {
      e.preventDefault();
      go("m");
    });
    app.replaceChildren(
      // the name above every way to race: in the friend's form, "Race anyone" (above it) went as "Player"
      el("section", { class: "hero" }, el("h1", { i18n: "home_title" }), el("p", { class: "lead", i18n: "home_lead" }), nameField()),
      quickPanel(net),
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
  const created = onCreated(navigate, "create", () => {
    const bot = document.getElementById("opponent").value;
    return BOTS.includes(bot) ? { bot } : {};
  });
  // the time waited, each second, while waiting
  const ticker = setInterval(() => {
    const clock = document.getElementById("quick-time");
    if (clock && quick.waiting) clock.textContent = waitedText();
  }, 1000);
  return {
    rerender: draw,
    destroy: () => clearInterval(ticker),
    onMessage(msg) {
      if (["queued", "unqueued"].includes(msg.type)) {
        document.getElementById("quick").replaceWith(quickPanel(net));
        return true;
      }
      if (msg.type === "error" && document.getElementById("race-anyone")?.disabled) {
        document.getElementById("quick").replaceWith(quickPanel(net)); // refused: the button again
        return false; // and the toast
      }
      return created(msg);
    },
  };
}

function waitedText() {
  return fmtTime(Math.max(0, Date.now() - quick.waiting.seen));
}

/** "Race anyone": a variant and a clock, and the button; while waiting, how long and a Cancel. */
function quickPanel(net) {
  const w = quick.waiting;
  if (w) {
    return el(
      "section",
      { class: "panel quick waiting", id: "quick", "aria-live": "polite" },
      el("h2", { i18n: "quick_title" }),
      el("p", { class: "big", id: "quick-waiting" }, el("span", { class: "spinner", "aria-hidden": "true" }), " ",
        el("span", { i18n: "quick_waiting", args: { time: "" } }), el("span", { id: "quick-time", text: waitedText() })),
      el("p", { class: "note", id: "quick-rating", i18n: "quick_rating", args: { rating: w.rating } }),
      el("button", { class: "btn", type: "button", id: "quick-cancel", i18n: "quick_cancel", onclick: () => net.send({ type: "quick_cancel" }) }),
    );
  }
  const clock = el("select", { id: "quick-clock" }, ...QUICK_CLOCKS.map((s) => el("option", { value: String(s), i18n: "minutes", args: { n: s / 60 } })));
  clock.value = "300";
  const variant = variantSelect("quick-variant");
  const go = el("button", { class: "btn primary", type: "submit", id: "race-anyone", i18n: "race_anyone" });
  const form = el(
    "form",
    { class: "panel quick", id: "quick", "aria-labelledby": "quick-h" },
    el("h2", { id: "quick-h", i18n: "quick_title" }),
    el("p", { i18n: "quick_lead" }),
    el(
      "p",
      { class: "row" },
      el("label", { for: "quick-variant", class: "vh", i18n: "variant" }),
      variant,
      el("label", { for: "quick-clock", class: "vh", i18n: "quick_clock" }),
      clock,
      go,
    ),
    el("p", { class: "fine" }, el("a", { href: "/live", "data-link": true, id: "to-live", i18n: "live_title" })),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    go.disabled = true;
    const msg = { type: "quick", variant: variant.value, time_limit_s: Number(clock.value) };
    const name = (localStorage.getItem("grip:name") || "").trim();
    if (name) msg.name = name;
    net.send(msg);
  });
  return form;
}

export function practiceScreen({ app, net, navigate }) {
  const draw = () => {
    const deal = el("input", {
      id: "deal",
      type: "number",
      min: "0",
      max: MAX_DEAL,
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
  return { rerender: draw, onMessage: onCreated(navigate, "start-practice") };
}
