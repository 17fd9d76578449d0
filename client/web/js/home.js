// The start page (race a friend or a bot; join or watch by code) and the practice form: both
// create a match and go to it (race.js).
import { el } from "./dom.js";
import { errorText } from "./i18n.js";
import { saveSeat } from "./seats.js";
import { VARIANTS, variantKey } from "./variants.js";

const TIME_LIMITS = [120, 300, 600, 900, 1800];
const BOTS = ["greedy", "lookahead"];
export const CODE_RE = /^[34679ACDEFGHJKMNPQRTUVWXY]{8}$/;

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

export function homeScreen({ app, net, navigate, toast }) {
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
      const name = document.getElementById("name").value.trim();
      localStorage.setItem("grip:name", name);
      const msg = {
        type: "create",
        variant: document.getElementById("variant").value,
        seats: 2,
        time_limit_s: Number(timeSel.value),
      };
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
    const go = (prefix) => {
      const c = code.value.trim().toUpperCase();
      if (CODE_RE.test(c)) navigate(`/${prefix}/${c}`);
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
      el("section", { class: "hero" }, el("h1", { i18n: "home_title" }), el("p", { class: "lead", i18n: "home_lead" })),
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
    onMessage: onCreated(navigate, "create", () => {
      const bot = document.getElementById("opponent").value;
      return BOTS.includes(bot) ? { bot } : {};
    }),
  };
}

export function practiceScreen({ app, net, navigate }) {
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
  return { rerender: draw, onMessage: onCreated(navigate, "start-practice") };
}
