// Watching a race (/w/CODE): every racer's board, numbers and moves, as the server shows them to
// spectators (during a race each board only as far as the other racer has drawn from the stock:
// docs/protocol.md, "What spectators see of a live race"). The race is a RaceState (race-state.js),
// which rebuilds each board from the snapshot and the moves the server sends (protocol v2).
import { el } from "./dom.js";
import { t, lang, errorText } from "./i18n.js";
import { Board } from "./board.js";
import { moveLabel } from "./notation.js";
import { RaceState } from "./race-state.js";
import { Clock, countdownOverlay, fatalPanel, fill, progressBox, resultPanel, showResult, variantTag } from "./race-parts.js";

export function watchScreen({ app, net, navigate, toast }, code) {
  const state = new RaceState({ code });
  let fatal = null;
  const clock = new Clock(state);
  const top = el("div", { class: "match-top" });
  const panel = el("div", { class: "match-panel" });
  const cols = el("div", { class: "spectate" });
  const lagNote = el("p", { class: "note spec-lag", id: "spec-lag", i18n: "spectator_lag" });
  app.replaceChildren(top, panel, lagNote, cols);
  const columns = { shape: null, seats: {} }; // what drawColumns drew: seat -> its parts
  net.send(state.watchFrame());

  function drawTop() {
    fill(
      top,
      el("span", { class: "tag" }, el("span", { i18n: "spectating" })),
      el("span", { class: "tag" }, el("span", { i18n: "code" }), ": ", el("strong", { class: "code", text: code })),
      variantTag(state.lobby),
      clock.node,
    );
  }

  function drawPanel() {
    panel.replaceChildren();
    if (fatal) panel.append(fatalPanel(fatal));
    else if (state.result) panel.append(resultPanel(state.result, {}));
    else if (state.lobby && state.lobby.status === "lobby") panel.append(el("p", { class: "panel note", i18n: "spectator_wait" }));
  }

  /** Each racer's column: built once per lobby (and language), then updated in place, so a move
   * redraws what it changed rather than every board (a race's end brings a burst of moves). */
  function drawColumns() {
    const lb = state.lobby;
    const seats = lb ? lb.seats : [];
    const shape = `${lang()}|${seats.map((s) => `${s.seat}:${s.name}`).join("|")}`;
    if (shape !== columns.shape) {
      cols.replaceChildren();
      columns.shape = shape;
      columns.seats = {};
      for (const s of seats) {
        const numbers = el("div");
        const bx = el("div", { class: "board-wrap spec-board", "data-seat": String(s.seat), role: "region" });
        const list = el("ol", { class: "move-list", "aria-label": t("moves_label") });
        const details = el("details", { class: "moves", open: true }, el("summary", { i18n: "moves_label" }), list);
        cols.append(el("section", { class: "spec-col", "data-seat": String(s.seat), "aria-label": s.name }, numbers, bx, details));
        columns.seats[s.seat] = { numbers, board: new Board(bx, { name: s.name }), list, listed: "" };
      }
    }
    for (const s of seats) {
      const n = s.seat;
      const c = columns.seats[n];
      // the numbers are live; while the board is held back, the box says how many moves it shows
      const shown = state.heldBack(n) ? state.shownMoves(n) : null;
      const numbers = progressBox(state.progress[n], s.name, lb.variant, { opponent: false, state: state.racerState(n), shown });
      c.numbers.replaceWith(numbers);
      c.numbers = numbers;
      const view = state.view(n);
      if (view && view !== c.board.view) c.board.setView(view);
      const moves = state.moves[n] || [];
      const listed = moves.join(" ");
      if (listed !== c.listed) {
        c.list.replaceChildren(...moves.map((m) => el("li", { text: moveLabel(m) })));
        c.listed = listed;
        c.list.scrollTop = c.list.scrollHeight;
      }
    }
  }

  /** While a race with a hidden stock runs, say why the boards may be behind the numbers. */
  function drawLagNote() {
    const lb = state.lobby;
    lagNote.hidden = !(lb && lb.boards_lag && lb.status === "playing" && !state.result);
  }

  function drawAll() {
    drawTop();
    drawPanel();
    drawColumns();
    drawLagNote();
  }
  drawAll();

  return {
    state,
    rerender: drawAll,
    destroy: () => clock.stop(),
    onReconnect() {
      net.send(state.watchFrame());
    },
    onMessage(msg) {
      switch (msg.type) {
        case "rematched":
          navigate(`/w/${msg.match}`);
          return true;
        case "error":
          if (!state.lobby) {
            // not_allowed: a racer before the result, or a ranked daily game before its day is over
            fatal = errorText(msg.code === "not_allowed" ? "watch_not_allowed" : msg.code);
            drawAll();
            return true;
          }
          toast(errorText(msg.code));
          return true;
        case "watching":
        case "lobby":
        case "countdown":
        case "start":
        case "board":
        case "progress":
        case "finished":
        case "result":
          for (const frame of state.receive(msg)) net.send(frame); // a new watch, if a board disagreed
          if (msg.type === "countdown") app.append(countdownOverlay(state));
          drawAll();
          if (msg.type === "result") showResult();
          return true;
        default:
          return false;
      }
    },
  };
}
