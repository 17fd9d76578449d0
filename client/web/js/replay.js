// Replay viewer: the server replays a finished match with its engine (GET /api/replay/CODE) and
// sends the board after every play; this page only steps through those boards.
import { el, fmtTime } from "./dom.js";
import { t } from "./i18n.js";
import { Board } from "./board.js";
import { moveLabel } from "./notation.js";
import { fatalPanel } from "./race-parts.js";

export function replayScreen(app, code) {
  let data = null;
  let step = 0;
  let playing = null;
  let failed = null;
  const boards = [];

  const maxStep = () => (data ? Math.max(...data.seats.map((s) => s.steps.length - 1)) : 0);

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
    data.seats.forEach((s, i) => {
      const k = Math.min(step, s.steps.length - 1);
      boards[i].setView(s.steps[k].view);
      const last = document.querySelector(`.replay-move[data-seat="${s.seat}"]`);
      if (last) {
        const mv = s.steps[k].move;
        last.textContent = mv ? [moveLabel(mv), ...s.steps[k].auto].join(", ") : t("deal_shown");
      }
    });
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
      data = await r.json();
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
