// One race as this page knows it, kept up to date from the server's messages (protocol v2): the
// lobby, every racer's numbers and end, the result, the clock, the boards as shown, and for a
// racer their seat: the move numbering (seq), the moves waiting for their acks, resending them
// after a drop, resuming from the last event seen. No DOM and no socket: the race and watch
// screens (race.js, watch.js) feed it what the server sent and send the frames it returns, and
// draw what it holds.
//
// Every board shown is the page's own rules engine (js/engine/, docs/client-engine.md), built
// from a snapshot (`start`, `resumed`, `watching`, `rejected`, `undone`). The racer's move is
// played on it at once, before the server answers, and may be followed by more; a card that has
// to come from the server shows as "??" (face down) until the ack reveals it. Each ack's and
// spectator frame's `check` is compared with the engine's: a disagreement resumes the seat (or
// watches again) for a new snapshot instead of drifting. This is client/session.py's bookkeeping
// for the one match a page shows (docs/protocol.md, "Staying in step").
import { ClientGame, IllegalMove, InvalidMove, InvalidView, RevealMismatch } from "./engine/index.js";

const COUNTDOWN_MS = 3000; // from "countdown" to "start" (server/match.py)
// What the server's store did not take (`unavailable`) is sent again after a pause that doubles
// (with jitter), RETRY_TRIES times at most: client/session.py's numbers.
export const RETRY_TRIES = 8;
const RETRY_FIRST_MS = 250;
const RETRY_LONGEST_MS = 4000;
/** Seat commands kept until the server is seen to apply them; a repeat of one is harmless. */
const KEPT = ["ready", "finish", "resign", "rematch"];
/** Practice requests an `unavailable` refusal does not end (client/session.py's RETRIED): each goes
 * again after a pause, and after a resume if its line dropped. An undo is numbered with the moves
 * (its `seq`): the server answers a repeat of an undo it applied as it did first, and undoes once. */
const RETRIED = ["hint", "undo"];
/** What a move or a reveal that does not fit throws: the engine and the server disagree. */
const DISAGREES = [IllegalMove, InvalidMove, InvalidView, RevealMismatch];

function disagreement(e) {
  if (DISAGREES.some((kind) => e instanceof kind)) return true;
  throw e;
}

function sameTexts(moves, texts = []) {
  return moves.length === texts.length && moves.every((m, i) => m.text === texts[i]);
}

/** Play `move` on `game`: the moves it recorded (it, then the automatic swaps after a win), or null if the rules refuse it. */
function tryPlay(game, move) {
  try {
    return game.play(move);
  } catch (e) {
    disagreement(e);
    return null;
  }
}

/** Play a v2 play as the server sent it (a spectator's `board` frame, a replay's play) on `game`:
 * whether the rules here agree with it: its move is legal, and its automatic swaps, the cards it
 * revealed and its check fit. */
export function playFrame(game, play) {
  const recorded = game ? tryPlay(game, play.move) : null;
  let agrees = Boolean(recorded) && sameTexts(recorded.slice(1), play.auto);
  try {
    if (agrees) game.reveal(play.reveal || {});
  } catch (e) {
    agrees = !disagreement(e);
  }
  return agrees && game.check() === play.check;
}

export class RaceState {
  /**
   * @param {{code: string, seat?: number|null, token?: string|null, localNow?: () => number}} opts
   *   `localNow`: this device's clock (ms)
   */
  constructor({ code, seat = null, token = null, localNow = () => Date.now() }) {
    this.code = code;
    this.seat = seat; // null for a spectator
    this.token = token;
    this.localNow = localNow;
    this.offset = 0; // the server's clock minus this device's (ms)
    this.lastEv = 0;
    this.lobby = null;
    this.result = null;
    this.progress = {}; // seat -> their latest `progress` (live numbers)
    this.finished = {}; // seat -> their `finished`
    this.shown = {}; // seat -> their board as shown here, a ClientGame (a racer sees only their own)
    this.moves = {}; // seat -> the move texts shown so far (spectators)
    this.startsAt = 0;
    this.endsAt = 0;
    this.confirmed = 0; // the racer's last move whose ack agreed: their board is the server's up to it
    this.trusted = []; // {seq, move, recorded}: played here and sent, not yet acknowledged, in order
    this.nextSeq = 1;
    this.stale = []; // seqs of voided moves still on the wire: their refusals are not news
    this.resyncing = false; // a snapshot (`resumed`, `watching`) is on its way: what comes before it is past
    this.divergences = 0; // times a check or reveal disagreed with the engine here
    this.refusal = null; // the last `rejected` that refused a move of this page's (not a stale one)
    this.kept = new Set(); // seat commands sent and not yet seen to take effect (KEPT)
    this.awaiting = []; // kept commands and RETRIED requests sent on this line and not answered, in order
    this.asking = new Set(); // RETRIED requests to send again (refused `unavailable`, or on a line that died)
    this.undoSeq = null; // the seq of the undo on its way (numbered with the moves), until answered
    this.undoAfter = false; // an undo asked while moves wait for their acks: sent once they are in
    this.tries = {}; // what the store did not take (a kept command, or "resume") -> tries so far
    this.due = new Set(); // what the next retry() sends again
    this.timer = null; // the pause before it (ms), handed over once by retryTimer()
    this.resumeSent = false; // a resume is on the wire, unanswered
    this.gaveUp = null; // what was given up, once tried RETRY_TRIES times (for the page to say)
    this.revision = 0; // counts what was played and received: a board's view is made once per revision
    this.views = new WeakMap(); // game -> {revision, view}
  }

  // ------------------------------------------------------------ what the page shows

  /** The server's clock now, as well as this device can tell. */
  now() {
    return this.localNow() + this.offset;
  }

  /** A board ready to draw (the v1 view's shape, "??" for a card still face down), or null before the start. */
  view(seat = this.seat) {
    const game = this.shown[seat];
    if (!game) return null;
    const cached = this.views.get(game);
    if (cached && cached.revision === this.revision) return cached.view;
    const view = game.view();
    this.views.set(game, { revision: this.revision, view });
    return view;
  }

  /** Whether the racer's moves are waiting for acks (what is shown is then ahead of the server). */
  get waiting() {
    return this.trusted.length > 0;
  }

  /** Whether a racer's game has ended: their progress says so, a `finished` came (also for a racer
   * who never moved, so has no progress), or the race has its result. */
  racerDone(seat) {
    return Boolean(this.result || this.finished[seat] || (this.progress[seat] && this.progress[seat].finished));
  }

  myEnded() {
    return this.seat !== null && Boolean(this.finished[this.seat]);
  }

  /** The word under a racer's progress (an i18n key): done, not started yet, away, or playing.
   * Away in a race: their game goes on, and they are abandoned if they do not come back in time. */
  racerState(seat) {
    const s = this.lobby && this.lobby.seats.find((x) => x.seat === seat);
    const reason = this.finished[seat] && this.finished[seat].reason;
    if (reason === "resign" || reason === "abandoned") return `${reason}_flag`;
    if (this.racerDone(seat)) return "finished_flag";
    if (!s) return "playing_flag";
    if (this.lobby.status === "lobby") return s.ready ? "seat_ready" : "seat_waiting";
    if (!s.connected) return "seat_offline";
    return this.lobby.status === "countdown" ? "seat_ready" : "playing_flag";
  }

  /** How many of a racer's moves a spectator's board does not show yet (the spectator lag). */
  heldBack(seat) {
    const game = this.shown[seat];
    const live = this.progress[seat];
    return game && live ? Math.max(0, live.moves - game.moveCount) : 0;
  }

  /** How many of a racer's moves the board shown has played (behind their live count while held back). */
  shownMoves(seat) {
    const game = this.shown[seat];
    return game ? game.moveCount : 0;
  }

  // ------------------------------------------------------------ what the page sends

  /** Take the seat back, asking for every event after the last one seen; until the answer, acks
   * and refusals are past news (the `resumed` snapshot says what was applied). */
  resumeFrame() {
    this.resyncing = true;
    this.resumeSent = true;
    for (const type of this.awaiting) if (RETRIED.includes(type)) this.asking.add(type);
    this.awaiting = []; // a new line, or a snapshot: what is unconfirmed goes again after it
    return { type: "resume", match: this.code, token: this.token, last_ev: this.lastEv };
  }

  /** Watch the race: a snapshot of every board, then every event. */
  watchFrame() {
    this.resyncing = true;
    return { type: "watch", match: this.code };
  }

  /** The racer's move, played here at once: the frame to send, or null if there is no board to
   * play it on (yet, or a snapshot is on its way) or the rules refuse it. */
  play(move) {
    this.revision += 1;
    const game = this.shown[this.seat];
    if (!game || this.resyncing || this.undoSeq !== null) return null;
    const recorded = tryPlay(game, move);
    if (!recorded) return null;
    return this.trust(recorded);
  }

  /** A move played here (`recorded`: it and its automatic swaps), numbered and kept until its ack. */
  trust(recorded) {
    const seq = this.nextSeq++;
    this.trusted.push({ seq, move: recorded[0].text, recorded });
    return { type: "move", seq, move: recorded[0].text };
  }

  /** A seat command (`ready`, `finish`, `resign`, `rematch`): its frame, kept until it takes effect. */
  command(type) {
    if (KEPT.includes(type)) {
      this.kept.add(type);
      this.awaiting.push(type);
    }
    return { type };
  }

  /** A practice request (`hint`, `undo`): its frame, followed until answered; null for an undo
   * asked while moves wait for their acks (it goes once they are in) or while one is on its way.
   * An undo takes the next seq; no move is played while it waits. */
  request(type) {
    if (type === "undo") {
      if (this.undoSeq !== null || this.waiting) {
        this.undoAfter = this.undoSeq === null;
        return null;
      }
      this.undoSeq = this.nextSeq++;
    }
    this.awaiting.push(type);
    return this.requestFrame(type);
  }

  requestFrame(type) {
    return type === "undo" ? { type, seq: this.undoSeq } : { type };
  }

  /** A RETRIED request answered (or refused for good): it is over. */
  answered(type) {
    this.awaiting = this.awaiting.filter((t) => t !== type);
    this.asking.delete(type);
    delete this.tries[type];
    if (type === "undo") this.undoSeq = null;
  }

  /** The RETRIED requests to send again now (an undo with its own seq). */
  askAgain() {
    const frames = [...this.asking].map((type) => {
      this.awaiting.push(type);
      return this.requestFrame(type);
    });
    this.asking.clear();
    return frames;
  }

  /** An `error` the page got: whether it is being tried again (then it is no news). A kept command
   * or a resume the store did not take goes again after a pause (retryTimer, retry); after
   * RETRY_TRIES, `gaveUp` names it and the error is news. A `wrong_phase` ends a kept command. */
  refused(msg) {
    if (msg.code === "unavailable" && this.resumeSent) {
      this.resumeSent = false;
      return this.again("resume");
    }
    if (RETRIED.includes(this.awaiting[0])) return this.requestRefused(this.awaiting[0], msg);
    if (!["unavailable", "wrong_phase"].includes(msg.code) || !this.awaiting.length) return false;
    const type = this.awaiting.shift();
    if (msg.code === "wrong_phase" || !this.again(type)) this.kept.delete(type);
    return this.kept.has(type);
  }

  /** The error answers the oldest request waiting (a connection's frames are answered in order). */
  requestRefused(type, msg) {
    this.awaiting.shift();
    if (msg.code !== "unavailable") {
      // a refused undo took nothing back: its seq numbers the next move
      if (type === "undo" && this.undoSeq === this.nextSeq - 1) this.nextSeq = this.undoSeq;
      this.answered(type);
      return false;
    }
    this.asking.add(type); // maybe applied, maybe not: a repeat counts once
    return this.again(type);
  }

  again(kind) {
    const tries = (this.tries[kind] || 0) + 1;
    if (tries > RETRY_TRIES) {
      delete this.tries[kind];
      this.gaveUp = kind;
      if (kind === "resume") this.resyncing = false;
      for (const type of RETRIED) if (kind === type || (kind === "resume" && this.asking.has(type))) this.answered(type);
      return false;
    }
    this.tries[kind] = tries;
    this.due.add(kind);
    const base = Math.min(RETRY_FIRST_MS * 2 ** (tries - 1), RETRY_LONGEST_MS);
    this.timer = base / 2 + (Math.random() * base) / 2;
    return true;
  }

  /** The pause (ms) before calling retry(), if one was asked since the last call; else null. */
  retryTimer() {
    const timer = this.timer;
    this.timer = null;
    return timer;
  }

  /** The pause is over: the frames to send again. */
  retry() {
    const due = this.due;
    this.due = new Set();
    if (due.has("resume") && this.seat !== null) return this.resumeSent ? [] : [this.resumeFrame()];
    if (this.resyncing) return []; // the resume's answer sends the kept commands again
    const frames = [...due].filter((type) => this.kept.has(type) && !this.awaiting.includes(type)).map((type) => this.command(type));
    return due.has("hint") || due.has("undo") ? [...frames, ...this.askAgain()] : frames;
  }

  /** What the server shows to have taken effect: those kept commands are done. */
  observe(msg) {
    const done = [];
    if (msg.type === "lobby") {
      const mine = msg.seats.find((s) => s.seat === this.seat);
      if (msg.status !== "lobby" || (mine && mine.ready)) done.push("ready");
      if (mine && mine.rematch) done.push("rematch");
      if (msg.status === "finished") done.push("finish", "resign");
    } else if (msg.type === "finished" && msg.seat === this.seat) done.push("finish", "resign");
    for (const type of done) {
      this.kept.delete(type);
      delete this.tries[type];
    }
    this.awaiting = this.awaiting.filter((type) => !done.includes(type));
  }

  // ------------------------------------------------------------ what the server sent

  /**
   * Take in one server message. `replay`: an event caught up from a `resumed` snapshot, whose
   * times say nothing of now. Returns the frames to send because of it (resent moves, a resume,
   * a new watch).
   */
  receive(msg, replay = false) {
    this.revision += 1;
    if (typeof msg.ev === "number" && msg.ev > this.lastEv) this.lastEv = msg.ev;
    if (msg.type === "lobby" || msg.type === "finished") this.observe(msg);
    switch (msg.type) {
      case "joined":
        this.seat = msg.seat;
        this.token = msg.token;
        return [];
      case "lobby":
        this.lobby = msg;
        return [];
      case "countdown":
        this.startsAt = msg.starts_at;
        if (!replay) this.sync(msg.starts_at - COUNTDOWN_MS);
        return [];
      case "start":
        return this.start(msg, replay);
      case "progress":
        this.progress[msg.seat] = msg;
        return [];
      case "finished":
        this.finished[msg.seat] = msg;
        return [];
      case "result":
        this.result = msg;
        this.endsAt = 0;
        return [];
      case "board":
        return this.frame(msg);
      case "ack":
        return this.ack(msg);
      case "rejected":
        return this.rejected(msg);
      case "undone": {
        const seq = this.undoSeq === null ? this.confirmed : this.undoSeq;
        this.answered("undo");
        this.rebuild(msg.view, seq, this.trusted); // the moves played since were sent already
        return [];
      }
      case "hint":
        this.answered("hint");
        return [];
      case "resumed":
        return this.resumed(msg);
      case "watching":
        this.watching(msg);
        return [];
      default:
        return [];
    }
  }

  /** A server time that is now (as it arrives live, give or take the network). */
  sync(serverNow) {
    this.offset = serverNow - this.localNow();
  }

  start(msg, replay) {
    if (!replay) this.sync(msg.started_at);
    this.endsAt = msg.ends_at;
    if (msg.view && !replay) this.rebuild(msg.view, 0, []);
    (msg.boards || []).forEach((view, i) => {
      const seat = this.lobby ? this.lobby.seats[i].seat : i;
      this.shown[seat] = ClientGame.fromView(view);
      this.moves[seat] = [];
    });
    return [];
  }

  /** Something here disagrees with the server: ask for a snapshot (once), and show nothing new until it comes. */
  resync() {
    this.divergences += 1;
    if (this.resyncing) return [];
    return [this.seat === null ? this.watchFrame() : this.resumeFrame()];
  }

  /**
   * The racer's board is the server's `view` as of move `seq`; the moves in `again` (played here
   * after it, not applied there) are played on it once more, renumbered from `seq + 1`. A move
   * the rules now refuse is void, with every later one. Returns those moves' frames.
   */
  rebuild(view, seq, again) {
    const game = view ? ClientGame.fromView(view) : null;
    this.shown[this.seat] = game;
    this.confirmed = seq;
    this.nextSeq = seq + 1;
    this.trusted = [];
    const frames = [];
    for (const { move } of game ? again : []) {
      const recorded = tryPlay(game, move);
      if (!recorded) break;
      frames.push(this.trust(recorded));
    }
    return frames;
  }

  /** The ack of the oldest move waiting: take back the later plays, put in what it revealed,
   * compare the check, play them again. */
  ack(msg) {
    const first = this.trusted[0];
    if (this.resyncing || !first || msg.seq < first.seq) return []; // settled already, or past news
    const game = this.shown[this.seat];
    if (msg.seq !== first.seq) return this.resync(); // an ack of a move not played here
    const later = this.trusted.slice(1).map(() => game.undo()[0]);
    let agrees = sameTexts(first.recorded.slice(1), msg.auto);
    try {
      game.reveal(msg.reveal || {});
    } catch (e) {
      agrees = !disagreement(e);
    }
    agrees = agrees && game.check() === msg.check;
    this.trusted.shift();
    this.confirmed = msg.seq;
    delete this.tries.resume; // the store takes moves again
    later.reverse().forEach((move, i) => {
      const recorded = tryPlay(game, move); // none depends on a hidden card: a refusal means divergence
      if (recorded) this.trusted[i].recorded = recorded;
      else agrees = false;
    });
    if (!agrees) return this.resync();
    const undo = this.undoAfter && !this.waiting ? this.request("undo") : null;
    if (undo) this.undoAfter = false;
    return undo ? [undo] : [];
  }

  /** A move refused: it and every later one are void, and the board is the server's again (its
   * `view` as of `last_seq`). Moves out of step (`out_of_order`), and a move the server could not
   * tell it applied (`unavailable`), resume the seat instead. */
  rejected(msg) {
    if (this.resyncing) return [];
    if (this.stale.length && msg.seq === this.stale[0]) {
      this.stale.shift(); // the refusal of a move voided already
      return [];
    }
    if (!this.trusted.some((m) => m.seq === msg.seq)) return [];
    this.refusal = msg;
    this.undoAfter = false; // asked after a move that did not count: it would take back another
    if (msg.code === "unavailable") {
      // maybe applied, maybe not: a resume says, after a pause (the store is away); until then the
      // board waits, and the refusals of the moves behind it are past news
      this.resyncing = this.again("resume");
      return [];
    }
    if (msg.code === "out_of_order" || !msg.view) return this.resync();
    this.stale = this.trusted.filter((m) => m.seq > msg.seq).map((m) => m.seq);
    return this.rebuild(msg.view, msg.last_seq, []);
  }

  resumed(msg) {
    this.seat = msg.seat;
    this.resumeSent = false;
    for (const m of msg.missed) this.receive(m, true);
    this.lobby = msg.lobby;
    for (const p of msg.opponents) this.progress[p.seat] = p;
    if (msg.result) this.result = msg.result;
    this.sync(msg.now); // the events caught up above came late: their times say nothing of now
    this.endsAt = this.result ? 0 : msg.ends_at || 0;
    this.lastEv = msg.ev; // even below ours: events the store lost are numbered anew
    this.resyncing = false;
    this.stale = [];
    // The moves after the server's last one go again (lost in a drop, or never answered); if the
    // server lost moves it had acknowledged, the later ones were chosen on a board that no longer is.
    const again = msg.last_seq < this.confirmed ? [] : this.trusted.filter((m) => m.seq > msg.last_seq);
    if (!again.length) delete this.tries.resume; // else the moves sent again may meet the same store
    this.observe(msg.lobby);
    const moves = this.rebuild(msg.view, msg.last_seq, again);
    // an undo on its way goes again with its seq (answered as first if it landed), unless the
    // server lost moves before it: then it was asked of a board that no longer is
    if (this.undoSeq !== null && this.undoSeq > msg.last_seq + 1) this.answered("undo");
    else if (this.undoSeq !== null) this.nextSeq = this.undoSeq + 1;
    // the seat commands not seen to take effect go again (a repeat is harmless)
    const commands = [...this.kept].filter((type) => !this.awaiting.includes(type)).map((type) => this.command(type));
    return [...moves, ...commands, ...this.askAgain()];
  }

  watching(msg) {
    this.lobby = msg.lobby;
    this.result = msg.result || null;
    this.sync(msg.now);
    this.endsAt = this.result ? 0 : msg.ends_at || 0;
    this.resyncing = false;
    for (const b of msg.boards) {
      this.progress[b.seat] = b.progress;
      this.shown[b.seat] = b.view ? ClientGame.fromView(b.view) : null;
      this.moves[b.seat] = b.moves || [];
    }
  }

  /** A spectator's `board`: a racer's move, played on that racer's board here, and its check. */
  frame(msg) {
    if (this.resyncing) return []; // a new snapshot is on its way
    const list = (this.moves[msg.seat] = this.moves[msg.seat] || []);
    if (msg.move === "undo") list.pop();
    else list.push(msg.move, ...(msg.auto || []));
    if (msg.view) {
      this.shown[msg.seat] = ClientGame.fromView(msg.view); // an undo (practice): the board whole
      return [];
    }
    return playFrame(this.shown[msg.seat], msg) ? [] : this.resync();
  }
}
