// One race as this page knows it, kept up to date from the server's messages: the lobby, every
// racer's numbers and end, the result, the clock, the boards as shown, and for a racer their seat:
// the move numbering (seq), the move waiting for its ack, resending it after a drop, resuming from
// the last event seen. No DOM and no socket: the race and watch screens (race.js, watch.js) feed it
// what the server sent and send the frames it returns, and draw what it holds.
//
// Where a board comes from is one object, `serverBoards`: in protocol v1 every ack and spectator
// frame carries the whole board after the move, and the page shows it. Protocol v2 swaps in an
// object of the same shape backed by the rules engine (client/web/js/engine/): a snapshot builds a
// position, the racer's own move is played at once (`play` returns the board after it instead of
// null), an ack or spectator frame applies the move and the cards it revealed, and `view` gives
// the board component what it draws (grid, waste, stock_count, legal, ...). Nothing else changes.

const COUNTDOWN_MS = 3000; // from "countdown" to "start" (server/match.py)

/** Boards as the server sends them (protocol v1). */
export const serverBoards = {
  /** A whole board from the server: `start`, `resumed`, `watching`, `rejected`, `undone`. */
  snapshot: (view) => view,
  /** The racer's own move before the server answers: the board after it, or null to wait for the ack. */
  play: () => null,
  /** The server's `ack` of the racer's move: the board after it. */
  ack: (_board, ack) => ack.view,
  /** A spectator's `board` frame: that racer's board after their move. */
  frame: (_board, frame) => frame.view,
  /** What the board component draws. */
  view: (board) => board,
};

export class RaceState {
  /**
   * @param {{code: string, seat?: number|null, token?: string|null, boards?: typeof serverBoards,
   *          localNow?: () => number}} opts  `localNow`: this device's clock (ms)
   */
  constructor({ code, seat = null, token = null, boards = serverBoards, localNow = () => Date.now() }) {
    this.code = code;
    this.seat = seat; // null for a spectator
    this.token = token;
    this.source = boards;
    this.localNow = localNow;
    this.offset = 0; // the server's clock minus this device's (ms)
    this.lastEv = 0;
    this.lobby = null;
    this.result = null;
    this.progress = {}; // seat -> their latest `progress` (live numbers)
    this.finished = {}; // seat -> their `finished`
    this.shown = {}; // seat -> their board as shown here (a racer sees only their own)
    this.moves = {}; // seat -> the move texts shown so far (spectators)
    this.startsAt = 0;
    this.endsAt = 0;
    this.seq = 0; // the racer's last acknowledged move
    this.pending = null; // {seq, move}: sent, not yet acknowledged
  }

  // ------------------------------------------------------------ what the page shows

  /** The server's clock now, as well as this device can tell. */
  now() {
    return this.localNow() + this.offset;
  }

  /** A board ready to draw (view-shaped), or null before the start. */
  view(seat = this.seat) {
    const board = this.shown[seat];
    return board ? this.source.view(board) : null;
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
    const view = this.view(seat);
    const live = this.progress[seat];
    return view && live ? Math.max(0, live.moves - view.moves) : 0;
  }

  // ------------------------------------------------------------ what the page sends

  /** Take the seat back, asking for every event after the last one seen. */
  resumeFrame() {
    return { type: "resume", match: this.code, token: this.token, last_ev: this.lastEv };
  }

  /** The racer's move: the frame to send, or null while another one waits for its ack. */
  play(move) {
    if (this.pending || !this.shown[this.seat]) return null;
    this.pending = { seq: this.seq + 1, move };
    const after = this.source.play(this.shown[this.seat], move);
    if (after) this.shown[this.seat] = after;
    return { type: "move", seq: this.pending.seq, move };
  }

  // ------------------------------------------------------------ what the server sent

  /**
   * Take in one server message. `replay`: an event caught up from a `resumed` snapshot, whose
   * times say nothing of now. Returns the frames to send because of it (a resent move, a resume).
   */
  receive(msg, replay = false) {
    if (typeof msg.ev === "number" && msg.ev > this.lastEv) this.lastEv = msg.ev;
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
        if (!replay) this.sync(msg.started_at);
        this.endsAt = msg.ends_at;
        if (msg.view && !replay) this.shown[this.seat] = this.source.snapshot(msg.view);
        (msg.boards || []).forEach((view, i) => {
          const seat = this.lobby ? this.lobby.seats[i].seat : i;
          this.shown[seat] = this.source.snapshot(view);
          this.moves[seat] = [];
        });
        return [];
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
      case "board": {
        this.shown[msg.seat] = this.source.frame(this.shown[msg.seat], msg);
        this.progress[msg.seat] = msg.progress;
        const list = (this.moves[msg.seat] = this.moves[msg.seat] || []);
        if (msg.move === "undo") list.pop();
        else list.push(msg.move, ...(msg.auto || []));
        return [];
      }
      case "ack":
        if (this.pending && msg.seq === this.pending.seq) {
          this.shown[this.seat] = this.source.ack(this.shown[this.seat], msg);
          this.seq = msg.seq;
          this.pending = null;
        }
        return [];
      case "rejected":
        if (this.pending && msg.seq === this.pending.seq) this.pending = null;
        if (msg.view) this.shown[this.seat] = this.source.snapshot(msg.view);
        return msg.code === "out_of_order" ? [this.resumeFrame()] : [];
      case "undone":
        this.shown[this.seat] = this.source.snapshot(msg.view);
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

  resumed(msg) {
    this.seat = msg.seat;
    for (const m of msg.missed) this.receive(m, true);
    this.lobby = msg.lobby;
    this.shown[this.seat] = msg.view ? this.source.snapshot(msg.view) : null;
    for (const p of msg.opponents) this.progress[p.seat] = p;
    if (msg.result) this.result = msg.result;
    this.sync(msg.now); // the events caught up above came late: their times say nothing of now
    this.endsAt = this.result ? 0 : msg.ends_at || 0;
    this.lastEv = msg.ev; // even below ours: events the store lost are numbered anew
    this.seq = msg.last_seq;
    if (this.pending && this.pending.seq > this.seq) {
      return [{ type: "move", seq: this.pending.seq, move: this.pending.move }]; // lost in the drop
    }
    this.pending = null; // it arrived before the drop
    return [];
  }

  watching(msg) {
    this.lobby = msg.lobby;
    this.result = msg.result || null;
    this.sync(msg.now);
    this.endsAt = this.result ? 0 : msg.ends_at || 0;
    for (const b of msg.boards) {
      this.progress[b.seat] = b.progress;
      if (b.view) this.shown[b.seat] = this.source.snapshot(b.view);
      this.moves[b.seat] = b.moves || [];
    }
  }
}
