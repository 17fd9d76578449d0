// A seat in a match (/m/CODE): the lobby, the race on the player's own board with the opponent's
// numbers beside it, then the result and the rematch. Practice games (one seat) are the same
// screen with hint and undo. The race itself is a RaceState (race-state.js); this module draws it
// and turns clicks into frames.
import { el } from "./dom.js";
import { t, errorText } from "./i18n.js";
import { Board } from "./board.js";
import { moveSentence } from "./notation.js";
import { RaceState } from "./race-state.js";
import { Clock, countdownOverlay, fatalPanel, fill, progressBox, resultPanel, showResult, variantTag } from "./race-parts.js";
import { JoinForm, lobbyPanel } from "./lobby.js";
import { forgetSeat, loadSeat, saveSeat } from "./seats.js";

const ARMED_MS = 5000; // how long Finish/Resign wait for the confirming click
/** Where the keyboard focus goes when the panel's control it was on is gone: from the name a
 * friend gave (or its Join) to "I'm ready", from "I'm ready" to the line that says the page waits. */
const FOCUS_NEXT = { name: "ready", join: "ready", ready: "ready-wait" };

export function raceScreen({ app, net, navigate, toast, beep }, code) {
  const saved = loadSeat(code);
  const state = new RaceState({ code, seat: saved ? saved.seat : null, token: saved ? saved.token : null });
  const ui = {
    bot: saved ? saved.bot || null : null, // a bot this page asked for (the lobby does not say)
    rematchAsked: false,
    takenOver: false, // another tab took the seat: this one offers to take it back
    fatal: null, // why this page cannot show the race (a sentence)
    fatalCode: null,
    resumeTries: 0,
    retryTimer: 0, // the race state's next retry of what the server's store did not take
    confirm: null, // {key, sent}: Finish or Resign asks once more; kept across redraws
    confirmTimer: 0,
    hint: null, // the hint shown (a move, or "" for none), until the board changes
    readySent: false,
    noWatch: false, // a daily race: not to be watched while its day runs
    // Someone who came by a friend's link has had no name field yet: ask once, before the seat.
    // Meanwhile the page watches the lobby (who invites them; whether a seat is still free).
    askName: !state.token && !localStorage.getItem("grip:name"),
    // Someone who came by a link with a name kept: a look at the lobby first, then the seat at
    // once. A daily race cannot be looked at while its day runs, and joining it may use the day's
    // one ranked attempt: the form asks first (it joined at once, and the attempt was gone).
    peeking: !state.token && Boolean(localStorage.getItem("grip:name")),
    joinForm: null,
    focusNext: null, // the id of the panel's control the focus goes to once it is drawn (FOCUS_NEXT)
  };
  const clock = new Clock(state);
  const top = el("div", { class: "match-top" });
  const panel = el("div", { class: "match-panel" });
  const boardBox = el("section", { class: "board-wrap", id: "my-board", role: "region" });
  const side = el("aside", { class: "side" });
  const board = new Board(boardBox, { interactive: true, name: t("you"), onMove: play });
  board.showPlayable = localStorage.getItem("grip:playable") === "on";
  app.replaceChildren(top, panel, el("div", { class: "race" }, boardBox, side));

  function send(frames) {
    for (const f of frames) net.send(f);
    armRetry();
  }
  /** Keep the pause the race state asks before it sends again what the server's store did not take. */
  function armRetry() {
    const pause = state.retryTimer();
    if (pause === null || ui.retryTimer) return;
    ui.retryTimer = setTimeout(() => {
      ui.retryTimer = 0;
      if (net.online) send(state.retry());
      else state.due.clear(); // the reconnect's resume sends everything again
    }, pause);
  }
  function resume() {
    if (!ui.takenOver) net.send(state.resumeFrame());
  }
  /** Take the seat back from the tab that took it over (that one is then told so). */
  function playHere() {
    ui.takenOver = false;
    ui.fatal = null;
    drawAll();
    resume();
  }
  /** Take the free seat, under the name kept in this browser. */
  function join() {
    ui.askName = false;
    ui.peeking = false;
    const name = localStorage.getItem("grip:name");
    net.send({ type: "join", match: code, ...(name ? { name } : {}) });
  }
  if (state.token) resume();
  else net.send({ type: "watch", match: code }); // asking the name, or peeking

  /** The player's move: drawn at once (the page's engine plays it), then sent; its ack reveals
   * what it turned face up. */
  function play(move) {
    if (!net.online) return;
    const frame = state.play(move);
    if (!frame) return;
    ui.hint = null;
    drawBoard();
    drawSide();
    net.send(frame);
    setTimeout(() => beep(600, 30)); // after the frame that shows the move
  }

  /** A practice game needs no "ready" click: send it once for the player. */
  function autoReady() {
    const lb = state.lobby;
    const me = lb.seats.find((s) => s.seat === state.seat);
    // practice has nobody to wait for; a quick race's racer asked to race now
    if ((lb.solo || (lb.quick && !lb.called_off)) && lb.status === "lobby" && me && !me.ready && !ui.readySent) {
      ui.readySent = true;
      net.send(state.command("ready"));
    }
  }

  const solo = () => Boolean(state.lobby && state.lobby.solo);

  function drawTop() {
    const lb = state.lobby;
    fill(
      top,
      el("span", { class: "tag" }, el("span", { i18n: "code" }), ": ", el("strong", { class: "code", text: code })),
      variantTag(lb),
      lb && lb.daily ? el("span", { class: "tag daily-tag", i18n: lb.ranked ? "daily_ranked_tag" : "daily_practice_tag" }) : null,
      lb && lb.solo && !lb.ranked ? el("span", { class: "tag", i18n: "solo_game" }) : null,
      // the creator picked the deal: they may know it, and whoever races them should know that
      lb && lb.chosen_deal && !lb.solo ? el("span", { class: "tag chosen-deal", i18n: "chosen_deal_tag", title: t("chosen_deal_note") }) : null,
      clock.node,
    );
  }

  /** Whether the keyboard focus is nowhere a player put it: on the page itself, or on the main
   * area a navigation focuses, or gone with a control a redraw took away. */
  function focusLost() {
    const a = document.activeElement;
    return !a || a === document.body || a.id === "main" || !a.isConnected;
  }

  /** The panel, redrawn whole: the focus goes back to the control of the same id, or on to the
   * next one (FOCUS_NEXT); it fell to the page's body, and a keyboard user started again from the top. */
  function drawPanel() {
    const had = panel.contains(document.activeElement) ? document.activeElement.id : "";
    fillPanel();
    if (had && !panel.contains(document.activeElement)) {
      const again = document.getElementById(had);
      if (again && panel.contains(again)) again.focus({ preventScroll: true });
      else ui.focusNext = FOCUS_NEXT[had] || null; // it may come with a later redraw (the lobby after a join)
    }
    const next = ui.focusNext && focusLost() ? document.getElementById(ui.focusNext) : null;
    if (next && panel.contains(next)) {
      next.focus({ preventScroll: true });
      ui.focusNext = null;
    }
  }

  function fillPanel() {
    if (ui.askName && !ui.fatal && ui.joinForm && ui.joinForm.node.parentNode === panel) {
      ui.joinForm.update(state.lobby, ui.noWatch); // in place: taken out and put back, the name field would lose the focus
      return;
    }
    panel.replaceChildren();
    if (ui.fatal) {
      const takeBack = el("button", { class: "btn", type: "button", id: "play-here", i18n: "play_here", onclick: playHere });
      const watch = el("a", { class: "btn", href: `/w/${code}`, "data-link": true, i18n: "go_watch" });
      panel.append(fatalPanel(ui.fatal, ui.takenOver ? takeBack : ui.fatalCode === "not_found" ? null : watch));
      return;
    }
    if (ui.askName) {
      ui.joinForm =
        ui.joinForm ||
        new JoinForm(code, () => {
          join();
          drawPanel();
        });
      panel.append(ui.joinForm.update(state.lobby, ui.noWatch));
      return;
    }
    const lb = state.lobby;
    if (!lb) {
      panel.append(el("p", { class: "note", i18n: "loading" }));
      return;
    }
    if (state.result) {
      panel.append(
        resultPanel(state.result, {
          mySeat: state.seat,
          lobby: lb,
          rated: ui.rated,
          rematchAsked: ui.rematchAsked || Boolean(lb.seats.find((x) => x.seat === state.seat)?.rematch),
          onRematch: () => {
            ui.rematchAsked = true;
            net.send(state.command("rematch"));
            drawPanel();
          },
        }),
      );
      return;
    }
    if (lb.status === "lobby" && !lb.solo) {
      panel.append(
        lobbyPanel(state, {
          bot: ui.bot,
          toast,
          net,
          onReady: () => net.send(state.command("ready")),
          onLeave: () => {
            net.send({ type: "leave" });
            forgetSeat(code);
            navigate("/");
          },
        }),
      );
      return;
    }
    if (state.myEnded()) {
      const mine = state.finished[state.seat];
      panel.append(
        el("p", {
          class: "panel note",
          id: "my-over",
          tabindex: "-1",
          role: "status",
          i18n: { resign: "my_resigned", abandoned: "my_abandoned" }[mine.reason] || "my_game_over",
          args: { n: mine.score },
        }),
      );
      // Resigned: the race is lost whatever the scores, and the result waits for the opponent's
      // game, maybe the whole clock. Staying shows it; this goes on at once. `leave` after one's
      // own game ended changes nothing in the race: it only stops this connection's news of it
      // (the seat is kept: /m/CODE shows the result later).
      if (mine.reason === "resign") {
        const onward = () => {
          net.send({ type: "leave" });
          navigate("/");
        };
        panel.append(el("p", { class: "row" }, el("button", { class: "btn primary", type: "button", id: "leave-race", i18n: "new_race", onclick: onward })));
      }
    }
  }

  /** The lobby as the stranger asked for a name sees it: a race that is full, started or a solo
   * game is theirs to watch, not to join. */
  function peeked(lobby) {
    state.lobby = lobby;
    if (lobby.status === "lobby" && !lobby.solo && lobby.seats.length === 0) {
      // everyone left: nobody invites any more (the server refuses a join too)
      Object.assign(ui, { askName: false, fatalCode: "not_found", fatal: errorText("not_found") });
    } else if (lobby.status !== "lobby" || lobby.solo || lobby.seats.length >= 2) {
      // theirs to watch; a finished race or a practice game shows as what it is, without a word
      if (lobby.status === "lobby" && !lobby.solo) toast(errorText("full"));
      else if (lobby.status === "countdown" || lobby.status === "playing") toast(t(lobby.solo ? "practice_watch" : "started_watch"));
      navigate(`/w/${code}`, true);
      return;
    }
    if (ui.peeking) join(); // a seat is free, and the name is known
    drawAll();
  }

  function drawSide() {
    // a Finish or Resign sent is disabled until the game ends, and the focus falls from it: it is
    // still the player's place until the line that says the game is over takes it
    const sent = ui.confirm && ui.confirm.sent && focusLost() ? ui.confirm.key : "";
    const focused = side.contains(document.activeElement) ? document.activeElement.id : sent;
    side.replaceChildren();
    const lb = state.lobby;
    if (!lb || (lb.status === "lobby" && !lb.solo)) return;
    for (const s of lb.seats) {
      if (s.seat === state.seat) continue;
      side.append(progressBox(state.progress[s.seat], s.name, lb.variant, { state: state.racerState(s.seat) }));
    }
    const actions = el("div", { class: "actions" });
    const playing = !state.result && !state.myEnded() && lb.status === "playing";
    if (playing) {
      if (lb.solo && !lb.ranked) {
        const view = state.view();
        // no hints on a daily deal while its day runs (the server says not_yet: docs/daily.md), and
        // a daily practice game is of today's deal
        if (!lb.daily) actions.append(el("button", { class: "btn", type: "button", id: "hint", i18n: "hint", onclick: () => ask("hint") }));
        actions.append(
          el("button", {
            class: "btn",
            type: "button",
            id: "undo",
            i18n: "undo",
            disabled: !view || view.moves === 0 || state.undoSeq !== null,
            onclick: () => ask("undo"),
          }),
        );
      }
      actions.append(confirmButton("finish", "finish_confirm", () => net.send(state.command("finish"))));
      if (!lb.solo) actions.append(confirmButton("resign", "resign_confirm", () => net.send(state.command("resign"))));
    }
    side.append(actions);
    if (playing) side.append(playableToggle());
    side.append(el("p", { class: "hint-text", id: "hint-text", role: "status", text: hintText() }));
    if (focused) (document.getElementById(focused) || gameOverNote(focused))?.focus();
  }

  /** From Finish or Resign, gone once the game has ended, the focus goes to the line that says so. */
  function gameOverNote(from) {
    return ["finish", "resign"].includes(from) ? document.getElementById("my-over") : null;
  }

  function hintText() {
    if (ui.hint === null) return "";
    return ui.hint ? t("hint_is", { move: moveSentence(ui.hint, state.view()) }) : t("no_hint");
  }

  /** "Show playable cards": a mark on every card that has a legal move. It shows nothing a click on
   * each pile would not, so it is offered in every game, ranked daily ones too (docs/daily.md). */
  function playableToggle() {
    const box = el("input", { type: "checkbox", id: "show-playable", checked: board.showPlayable });
    box.addEventListener("change", () => {
      localStorage.setItem("grip:playable", box.checked ? "on" : "off");
      board.setShowPlayable(box.checked);
    });
    return el("label", { class: "toggle", for: "show-playable" }, box, " ", el("span", { i18n: "show_playable" }));
  }

  /** Finish or Resign: the first click arms the button for ARMED_MS, a second one acts. The state
   * lives in `ui.confirm`, so the redraws that every opponent move brings keep it. */
  function confirmButton(key, confirmKey, action) {
    const c = ui.confirm && ui.confirm.key === key ? ui.confirm : null;
    const b = el("button", {
      class: `btn ghost ${c ? "armed" : ""}`,
      type: "button",
      id: key,
      i18n: c ? confirmKey : key,
      disabled: c && c.sent,
    });
    b.addEventListener("click", () => {
      clearTimeout(ui.confirmTimer);
      if (c) {
        c.sent = true;
        action();
      } else {
        ui.confirm = { key, sent: false };
        ui.confirmTimer = setTimeout(() => {
          ui.confirm = null;
          drawSide();
        }, ARMED_MS);
      }
      drawSide();
    });
    return b;
  }

  function busy() {
    return state.resyncing || state.undoSeq !== null || state.myEnded() || Boolean(state.result) || !net.online;
  }

  /** A practice request (hint, undo): the race state follows it until it is answered. */
  function ask(type) {
    const frame = state.request(type);
    if (frame) net.send(frame);
    board.setBusy(busy());
    drawSide();
  }

  function drawBoard() {
    const view = state.view();
    boardBox.hidden = !view;
    boardBox.dataset.waiting = String(state.waiting); // moves drawn whose acks are still to come
    if (view) {
      board.name = t("you");
      board.setView(view);
      if (ui.hint) board.setHint(ui.hint);
      board.setBusy(busy());
    }
  }

  function drawAll() {
    drawTop();
    drawPanel();
    drawSide();
    drawBoard();
  }
  drawAll();

  /** The 3-2-1 before a race (not for practice), live or after a reload in the middle of it. */
  function showCountdown() {
    if (!solo() && !document.querySelector(".countdown")) app.append(countdownOverlay(state));
  }

  /** A live match event: what the page does beside taking it in. */
  function react(msg) {
    switch (msg.type) {
      case "lobby":
        autoReady();
        break;
      case "countdown":
        showCountdown();
        if (!solo()) beep(440);
        break;
      case "start":
        beep(880, 120);
        break;
      case "rematched":
        // `from`: the match to go back to, should the new one never be found
        saveSeat(msg.match, state.token, state.seat, { from: code, ...(ui.bot ? { bot: ui.bot } : {}) });
        navigate(`/m/${msg.match}`);
        return true;
    }
    return false;
  }

  function onError(msg) {
    if (msg.code === "taken_over") {
      ui.takenOver = true;
      ui.fatal = errorText(msg.code);
      drawAll();
      return;
    }
    if (state.refused(msg)) {
      armRetry(); // the store did not answer: it goes again after a pause, and is no news yet
      return;
    }
    if (msg.code === "not_found" && state.token && !state.lobby && ui.resumeTries < 3) {
      // a rematch's new match may be a moment behind its announcement
      ui.resumeTries += 1;
      setTimeout(resume, 400 * ui.resumeTries);
      return;
    }
    if (msg.code === "not_found" && state.token && !state.lobby && saved && saved.from) {
      // the rematch's new match was never opened: back to the old race's result, saying so
      forgetSeat(code);
      toast(errorText("rematch_lost"));
      navigate(`/m/${saved.from}`, true);
      return;
    }
    if ((ui.askName || ui.peeking) && msg.code === "not_allowed") {
      // a daily race cannot be watched while its day runs: no peek; the form, saying what a join may cost
      Object.assign(ui, { noWatch: true, askName: true, peeking: false });
      drawAll();
      return;
    }
    if (!state.token && !ui.noWatch && ["full", "wrong_phase"].includes(msg.code)) {
      // a stranger's link to a race that is full, started or over: show it to them instead
      toast(errorText(msg.code));
      navigate(`/w/${code}`, true);
      return;
    }
    if ((!state.lobby || !state.token) && ["not_found", "full", "wrong_phase", "bad_token", "not_allowed"].includes(msg.code)) {
      if (msg.code === "bad_token") forgetSeat(code);
      // not_allowed without a seat: a join of one's own match, or of a daily race too early
      Object.assign(ui, { askName: false, peeking: false });
      ui.fatalCode = msg.code;
      const daily = ui.noWatch && ["full", "wrong_phase"].includes(msg.code); // not to be watched today either
      ui.fatal = errorText(msg.code === "not_allowed" ? "join_not_allowed" : daily ? "daily_taken" : msg.code);
      drawAll();
      return;
    }
    toast(errorText(msg.code));
    ui.confirm = null; // a refused finish or resign may be tried again
    drawSide();
  }

  return {
    state,
    rerender: drawAll,
    destroy() {
      clock.stop();
      clearTimeout(ui.confirmTimer);
      clearTimeout(ui.retryTimer);
      for (const o of document.querySelectorAll(".countdown")) o.remove();
    },
    onStatus() {
      if (state.view()) board.setBusy(busy());
    },
    onReconnect() {
      if (state.token) resume();
      else if (ui.askName || ui.peeking) net.send({ type: "watch", match: code });
    },
    onMessage(msg) {
      if (msg.type === "error") {
        onError(msg);
        return true;
      }
      if (msg.type === "watching" || ui.askName || ui.peeking) {
        // still asking the name, or peeking: only the lobby matters (who is there, whether a seat
        // is free); a peek's answer after the join is past news
        if ((ui.askName || ui.peeking) && (msg.type === "watching" || msg.type === "lobby")) {
          state.receive(msg);
          peeked(state.lobby);
        }
        return true;
      }
      send(state.receive(msg));
      if (msg.type === "rated") ui.rated = msg; // what the race did to the ratings: the result shows it
      switch (msg.type) {
        case "joined":
          saveSeat(code, msg.token, msg.seat);
          return true;
        case "resumed":
          ui.resumeTries = 0;
          if (msg.lobby.status === "countdown") showCountdown();
          autoReady();
          drawAll();
          return true;
        case "ack":
          drawBoard(); // the cards it revealed, or the board of a resync
          return true;
        case "rejected":
          if (state.refusal === msg) {
            // the move (and those after it) taken back: the board is the server's again
            toast(state.resyncing ? errorText(msg.code) : `${errorText(msg.code)} ${t("board_restored")}`);
            ui.hint = null;
          }
          drawBoard();
          drawSide();
          return true;
        case "hint":
          ui.hint = msg.move || "";
          if (msg.move) board.setHint(msg.move);
          drawSide();
          return true;
        case "undone":
          ui.hint = null;
          drawBoard();
          drawSide();
          return true;
      }
      if (react(msg)) return true;
      drawTop();
      drawPanel();
      drawSide();
      if (["start", "result", "finished"].includes(msg.type)) drawBoard();
      // the race is on: a keyboard player whose focus went with the lobby starts on the board
      if (msg.type === "start" && state.view() && focusLost()) board.focusFirst();
      if (msg.type === "result") showResult();
      return true;
    },
  };
}
