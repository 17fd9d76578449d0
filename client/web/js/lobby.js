// Before a race starts: the lobby a racer waits in (who is there and ready, the link to send while
// a seat is free, the race's terms), and the form a friend who came by link gives their name in.
import { el, fmtTime } from "./dom.js";
import { t } from "./i18n.js";
import { nameField } from "./home.js";
import { variantName } from "./variants.js";

/** "Classic · time limit 10 min": what a race is played under. */
function termsLine(lobby) {
  const s = lobby.time_limit_s;
  const limit = s % 60 === 0 ? t("minutes", { n: s / 60 }) : fmtTime(s * 1000);
  const terms = t("race_terms", { variant: variantName(lobby.variant), limit });
  return el("p", { class: "terms", id: "race-terms", text: lobby.rated ? `${terms} · ${t("rated_tag")}` : terms });
}

/** A read-only link and its Copy button. */
function linkRow(id, buttonId, link, labelKey, toast) {
  const input = el("input", { id, type: "text", readonly: true, value: link, "aria-label": t(labelKey) });
  return el(
    "p",
    { class: "row share" },
    input,
    el("button", { class: "btn", type: "button", id: buttonId, i18n: "copy", onclick: () => copy(link, input, toast) }),
  );
}

function copy(text, input, toast) {
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

/**
 * The lobby of a race (not practice): `state` a RaceState; `bot` whether the other seat is this
 * page's bot; `onReady`, `onLeave` the buttons' actions; `net` makes the links to share.
 */
export function lobbyPanel(state, { bot, onReady, onLeave, toast, net }) {
  const lb = state.lobby;
  const code = state.code;
  const me = lb.seats.find((s) => s.seat === state.seat);
  const free = lb.seats.length < 2;
  const seats = el("ul", { class: "seats" });
  for (const n of [0, 1]) {
    const s = lb.seats.find((x) => x.seat === n);
    if (!s) seats.append(el("li", { class: "free", i18n: "free_seat" }));
    else
      seats.append(
        el(
          "li",
          { class: s.ready ? "ready" : "" },
          el("strong", { text: s.name + (s.seat === state.seat ? ` (${t("you")})` : "") }),
          s.rating == null ? null : el("span", { class: "seat-rating", text: ` (${s.rating})` }),
          " · ",
          el("span", { i18n: s.ready ? "seat_ready" : "seat_waiting" }),
          s.connected ? null : el("span", { class: "off" }, " · ", el("span", { i18n: "seat_offline" })),
        ),
      );
  }
  // The share link only while a seat is free: once both are taken, nobody else can join.
  let invite;
  // a quick race is called off when a racer is not ready in time; any other lobby, when its creator opens a new one
  if (lb.called_off) invite = [el("p", { class: "note", id: "called-off", i18n: lb.quick ? "called_off" : "called_off_replaced" })];
  else if (lb.quick) invite = [el("p", { id: "quick-lobby", i18n: "quick_lobby" })];
  else if (bot) invite = [el("p", { i18n: "bot_text" })];
  else if (free) invite = [el("p", { i18n: "share_text" }), linkRow("share-link", "copy", net.shareLink(`/m/${code}`), "share_text", toast)];
  else invite = [el("p", { id: "lobby-full", i18n: "lobby_full" })];
  return el(
    "section",
    { class: "panel lobby", id: "lobby" },
    el("h2", { i18n: bot ? "lobby_bot_title" : "lobby_title" }),
    termsLine(lb),
    ...invite,
    el("p", {}, el("span", { i18n: "code" }), ": ", el("strong", { class: "code big", text: code })),
    seats,
    el(
      "p",
      { class: "row" },
      lb.called_off
        ? null
        : me && me.ready
        ? el("span", { class: "note", id: "ready-wait", tabindex: "-1", i18n: "you_are_ready" })
        : el("button", { class: "btn primary", type: "button", id: "ready", i18n: "ready", onclick: onReady }),
      el("button", { class: "btn ghost", type: "button", id: "leave", i18n: "leave", onclick: onLeave }),
    ),
    // to copy for others: opening it here would give up the seat (and racers may not watch);
    // daily games are not watched while their day runs, so they have none
    lb.daily ? null : el("p", { class: "fine", i18n: "watch_link" }),
    lb.daily ? null : linkRow("watch-link", "copy-watch", net.shareLink(`/w/${code}`), "watch_link", toast),
  );
}

/** The name and a Join button, for a stranger by link. Built once and updated in place, so the
 * redraws that lobby changes bring keep what is typed and the focus. */
export class JoinForm {
  constructor(code, onJoin) {
    this.node = el(
      "form",
      { class: "panel lobby", id: "join-form" },
      el("h2", { i18n: "join_race_title" }),
      el("p", { class: "invite" }),
      el("p", { class: "note daily-note", id: "join-daily-note", i18n: "join_daily_note", hidden: true }),
      el("div", { class: "terms-box" }),
      el("p", {}, el("span", { i18n: "code" }), ": ", el("strong", { class: "code big", text: code })),
      nameField({ required: true }),
      el(
        "p",
        { class: "row" },
        el("button", { class: "btn primary", type: "submit", id: "join", i18n: "join" }),
        el("a", { class: "btn ghost", id: "join-watch", href: `/w/${code}`, "data-link": true, i18n: "watch" }),
      ),
    );
    this.node.addEventListener("submit", (e) => {
      e.preventDefault();
      onJoin();
    });
    requestAnimationFrame(() => this.node.querySelector("#name").focus());
  }

  /** Who invites, and the race's terms, as the lobby now says; `daily`: a race that cannot be
   * watched, a daily one (the server says no more): joining may use the day's ranked attempt. */
  update(lobby, daily = false) {
    this.node.querySelector("#join-daily-note").hidden = !daily;
    this.node.querySelector("#join-watch").hidden = daily;
    const host = lobby && lobby.seats[0];
    this.node.querySelector(".invite").replaceChildren(...(host ? [el("span", { i18n: "invited_by", args: { name: host.name } })] : []));
    this.node.querySelector(".terms-box").replaceChildren(...(lobby ? [termsLine(lobby)] : []));
    return this.node;
  }
}
