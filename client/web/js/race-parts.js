// What the race and watch screens both draw: the clock, the 3-2-1, a racer's numbers, the result.
import { el, fmtTime } from "./dom.js";
import { t } from "./i18n.js";
import { totalCards, variantKey } from "./variants.js";

/** node.replaceChildren, skipping the null/false of conditional parts. */
export function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
}

/** The race's clock, ticking down to `state.endsAt` by the server's time (race-state.js). */
export class Clock {
  constructor(state) {
    this.state = state;
    this.node = el("span", { class: "clock", role: "timer", "aria-label": t("time_left") });
    this.timer = setInterval(() => this.tick(), 250);
  }
  tick() {
    const left = this.state.endsAt ? this.state.endsAt - this.state.now() : null;
    this.node.textContent = left === null ? "" : fmtTime(left);
    this.node.classList.toggle("low", left !== null && left < 30_000);
  }
  stop() {
    clearInterval(this.timer);
  }
}

/** The 3-2-1 over the page until the race starts (by the server's time). */
export function countdownOverlay(state) {
  const box = el("div", { class: "countdown", role: "status", "aria-live": "assertive" });
  const num = el("span", { class: "num" });
  box.append(el("span", { class: "label", i18n: "countdown_label" }), num);
  const tick = () => {
    const left = Math.ceil((state.startsAt - state.now()) / 1000);
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

/** The variant's tag at the top of a race. */
export function variantTag(lobby) {
  return lobby ? el("span", { class: "tag", i18n: variantKey(lobby.variant) }) : null;
}

/**
 * A racer's numbers: cards on the grid, cards left, moves, and how their game stands (`state`, an
 * i18n key). `p`: their `progress` (live), or null before their first move. `shown`: for a
 * spectator whose board of this racer is held back, how many of the racer's moves that board
 * shows; the numbers stay live (as the racers, the terminal and the list of live races see them),
 * and the box says how far behind the board below them is.
 */
export function progressBox(p, name, variant, { opponent = true, state = "playing_flag", shown = null } = {}) {
  const total = totalCards(variant);
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
    shown !== null && shown < p.moves ? el("p", { class: "p-held", i18n: "board_shows", args: { k: shown, n: p.moves } }) : null,
  );
}

/** How many rated races of a variant a rating stays provisional for (PROVISIONAL_GAMES in server/ratings.py). */
export const PROVISIONAL_GAMES = 5;

/** The "provisional" tag beside a rating shown with "?" (the stats page, a rated result): the tag
 * says the word, its title what the "?" means. */
export function provisionalTag() {
  return el("span", { class: "tag mini provisional", i18n: "rating_provisional", title: t("rating_provisional_why", { n: PROVISIONAL_GAMES }) });
}

function ratingText(r) {
  return t(`rating_${r || "none"}`);
}

/** The result: who won, a table of every racer, the seed, rematch and the ways on. */
export function resultPanel(result, { mySeat = null, onRematch = null, rematchAsked = false, lobby = null, rated = null }) {
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
        ...["player", "score", "grade", "on_grid_short", "time", "reason"].map((k) => el("th", { scope: "col", i18n: k })),
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
    el("h2", { id: "result-h", tabindex: "-1", text: headline }),
    byTime
      ? el("p", { class: "note", id: "tie-by-time", ...(winner.seat === mySeat ? { i18n: "tie_by_time_you" } : { i18n: "tie_by_time", args: { name: winner.name } }) })
      : null,
    table,
    rated ? ratingChanges(rated, seats, mySeat) : null,
    result.seed ? el("p", { class: "seed" }, el("span", { i18n: "seed" }), ": ", el("code", { text: result.seed })) : null,
    actions,
  );
}

/** "Ann: rating 1500 → 1523 (+23)", a line a racer, from the server's `rated`. */
function ratingChanges(rated, seats, mySeat) {
  return el(
    "ul",
    { class: "rating-changes", id: "rating-changes" },
    ...rated.seats.map((c) => {
      const diff = c.after - c.before;
      const name = seats.find((s) => s.seat === c.seat)?.name || "?";
      const line = t("rating_change", { before: c.before, after: `${c.after}${c.provisional ? "?" : ""}`, diff: diff > 0 ? `+${diff}` : String(diff) });
      return el(
        "li",
        { class: c.seat === mySeat ? "mine" : "", "data-seat": String(c.seat) },
        el("strong", { text: name }),
        ": ",
        el("span", { text: line }),
        c.provisional ? " " : null,
        c.provisional ? provisionalTag() : null,
      );
    }),
  );
}

/** Bring a result that just came into view (on a phone it is above the board the player was
 * looking at), and give its headline the focus so a screen reader says who won. */
export function showResult() {
  const headline = document.getElementById("result-h");
  if (!headline) return;
  headline.focus({ preventScroll: true });
  document.getElementById("result").scrollIntoView({ block: "start" });
}

/** The panel for a page that cannot be shown, with the way home (and `extra` links). */
export function fatalPanel(text, ...extra) {
  return el(
    "section",
    { class: "panel", role: "alert" },
    el("p", { class: "big", text }),
    el("p", { class: "row" }, ...extra, el("a", { class: "btn ghost", href: "/", "data-link": true, i18n: "go_home" })),
  );
}
