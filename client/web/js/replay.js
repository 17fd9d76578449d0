// Replay viewer: a finished match (GET /api/replay/CODE) comes as moves, not boards (issue 18):
// per seat the deal, then each play as a v2 board frame carries it (the move, the cards it
// revealed, the automatic swaps, the check). The page's own engine (js/engine/) plays them to
// draw every step, as a spectator's board follows a race (race-state.js).
import { el, fmtTime } from "./dom.js";
import { t } from "./i18n.js";
import { Board } from "./board.js";
import { ClientGame } from "./engine/index.js";
import { moveLabel } from "./notation.js";
import { fatalPanel } from "./race-parts.js";
import { playFrame } from "./race-state.js";

/**
 * One seat's game, shown at any step: a game on the page's engine stands at one step and goes
 * there by playing the plays (with the cards each revealed) or taking them back, and each
 * step's board is kept once drawn, so stepping back and forth is instant. Made once on load,
 * which plays every play and holds it to the server's check: a replay that does not agree with
 * the rules here throws (its record "could not be checked").
 */
class SeatSteps {
  constructor(seat) {
    this.plays = seat.plays;
    this.game = ClientGame.fromView(seat.deal);
    this.at = 0; // the step the game stands at
    this.views = [];
    this.seek(this.plays.length);
  }

  get last() {
    return this.plays.length;
  }

  seek(k) {
    for (; this.at > k; this.at--) this.game.undo();
    for (; this.at < k; this.at++) {
      const play = this.plays[this.at];
      if (!playFrame(this.game, play))
        throw new Error(`play ${this.at + 1} (${play.move}) leaves another board than the server's`);
    }
  }

  /** The board after `k` plays, as a Board draws it (no stock's cards: a replay never shows them). */
  view(k) {
    if (!this.views[k]) {
      this.seek(k);
      this.views[k] = { ...this.game.view(), stock: null };
    }
    return this.views[k];
  }

  /** What the `k`-th play did (its move, then its automatic swaps); null for the deal. */
  play(k) {
    return k ? this.plays[k - 1] : null;
  }
}

export function replayScreen(app, code) {
  let data = null;
  let seats = []; // a SeatSteps per seat of data.seats
  let step = 0;
  let playing = null;
  let failed = null;
  const boards = [];

  const maxStep = () => (data ? Math.max(...seats.map((s) => s.last)) : 0);

  function go(k) {
    step = Math.max(0, Math.min(maxStep(), k));
    drawBoards();
  }

  function drawBoards() {
    const counter = document.getElementById("step-counter");
    if (counter) {
      counter.dataset.i18nArgs = JSON.stringify({ k: step, n: maxStep() });
      counter.textContent = t("step_of", { k: step, n: maxStep() });
    }
    const range = document.getElementById("step-range");
    if (range) range.value = String(step);
    drawControls();
    data.seats.forEach((s, i) => {
      const k = Math.min(step, seats[i].last);
      boards[i].setView(seats[i].view(k));
      const last = document.querySelector(`.replay-move[data-seat="${s.seat}"]`);
      if (last) {
        const play = seats[i].play(k);
        last.textContent = play ? [moveLabel(play.move), ...(play.auto || [])].join(", ") : t("deal_shown");
      }
    });
  }

  /** Only what can do something is offered: nothing for a game of no moves, no way back from the
   * deal nor on from the last step (Play there starts over). A focused control that goes out of
   * use hands the focus to one still in use, so a keyboard player stepping on keeps their place. */
  function drawControls() {
    const n = maxStep();
    const idle = { first: step === 0, prev: step === 0, play: n === 0, next: step >= n, last: step >= n, "step-range": n === 0 };
    const lost = document.activeElement;
    for (const [id, off] of Object.entries(idle)) {
      const c = document.getElementById(id);
      if (c) c.disabled = off;
    }
    if (lost && lost.disabled) {
      const next = ["play", "prev", "next"].map((id) => document.getElementById(id)).find((c) => c && !c.disabled);
      if (next) next.focus();
    }
  }

  function toggle() {
    if (playing) {
      clearInterval(playing);
      playing = null;
    } else {
      if (step >= maxStep()) step = 0;
      playing = setInterval(() => {
        if (step >= maxStep()) toggle();
        else go(step + 1);
      }, 700);
    }
    const b = document.getElementById("play");
    if (b) {
      b.dataset.i18n = playing ? "pause" : "play";
      b.textContent = t(b.dataset.i18n);
    }
  }

  function draw() {
    boards.length = 0;
    if (failed) {
      // a race still being played can be watched instead
      const watch = failed === "err_replay_unfinished" ? el("a", { class: "btn", href: `/w/${code}`, "data-link": true, i18n: "go_watch" }) : null;
      app.replaceChildren(fatalPanel(t(failed), watch));
      return;
    }
    if (!data) {
      app.replaceChildren(el("p", { class: "note", i18n: "loading" }));
      return;
    }
    const btn = (id, key, fn) => el("button", { class: "btn", type: "button", id, i18n: key, onclick: fn });
    const range = el("input", { type: "range", id: "step-range", min: "0", max: String(maxStep()), value: String(step), "aria-label": t("replay_title") });
    range.addEventListener("input", () => go(Number(range.value)));
    const controls = el(
      "div",
      { class: "replay-controls row" },
      btn("first", "first", () => go(0)),
      btn("prev", "prev", () => go(step - 1)),
      btn("play", playing ? "pause" : "play", toggle),
      btn("next", "next", () => go(step + 1)),
      btn("last", "last", () => go(maxStep())),
      range,
      el("span", { id: "step-counter", "data-i18n": "step_of", role: "status", text: "" }),
    );
    const cols = el("div", { class: "spectate" });
    for (const s of data.seats) {
      const bx = el("div", { class: "board-wrap spec-board", role: "region" });
      boards.push(new Board(bx, { name: s.name }));
      cols.append(
        el(
          "section",
          { class: "spec-col", "data-seat": String(s.seat) },
          el(
            "h3",
            {},
            el("span", { text: s.name }),
            " · ",
            el("span", { i18n: "score" }),
            `: ${s.score} · `,
            el("span", { text: fmtTime(s.finished_at - data.started_at) }),
          ),
          el("p", { class: "replay-move", "data-seat": String(s.seat), "aria-live": "polite" }),
          bx,
        ),
      );
    }
    app.replaceChildren(
      el(
        "section",
        { class: "panel replay" },
        el("h1", {}, el("span", { i18n: "replay_title" }), ` ${code}`),
        el("p", { class: "seed" }, el("span", { i18n: "seed" }), ": ", el("code", { text: data.seed })),
        controls,
      ),
      cols,
    );
    drawBoards();
  }

  const onKey = (e) => {
    if (!data || e.target.matches("input, select, textarea")) return;
    if (e.key === "ArrowRight") go(step + 1);
    else if (e.key === "ArrowLeft") go(step - 1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(maxStep());
  };
  document.addEventListener("keydown", onKey);

  draw();
  fetch(`/api/replay/${code}`)
    .then(async (r) => {
      if (!r.ok) {
        const body = await r.json().catch(() => ({}));
        const why = body.error === "wrong_phase" ? "replay_unfinished" : body.error || "unavailable";
        throw new Error(`err_${why}`);
      }
      const body = await r.json();
      try {
        seats = body.seats.map((s) => new SeatSteps(s));
      } catch (e) {
        console.error(e); // what did not fit, for whoever looks
        throw new Error("err_corrupt");
      }
      data = body;
      draw();
    })
    .catch((err) => {
      failed = /^err_[a-z_]+$/.test(err.message) && t(err.message) !== err.message ? err.message : "err_unavailable";
      draw();
    });

  return {
    rerender: draw,
    destroy() {
      document.removeEventListener("keydown", onKey);
      if (playing) clearInterval(playing);
    },
  };
}
