// One WebSocket to the server for the whole page, with automatic reconnect (exponential backoff).
// The page's current screen gets every server message and is told when the link comes back,
// so it can `resume` its seat or `watch` again.

// Protocol v2: acks and spectator frames carry moves and revealed cards, not boards (race-state.js).
const PROTOCOL = 2;
const BACKOFF_MS = [300, 700, 1500, 3000, 5000, 8000];

export class Net {
  constructor({ onMessage, onStatus, onReconnect, onNewIdentity, name }) {
    this.onMessage = onMessage;
    this.onStatus = onStatus; // "connecting" | "online" | "offline"
    this.onReconnect = onReconnect;
    this.onNewIdentity = onNewIdentity; // the saved identity was unknown: a new one was made
    this.name = name;
    this.ws = null;
    this.queue = [];
    this.welcomed = false;
    this.shareHost = null; // where others reach the server (welcome.share_host): for links to share
    this.attempt = 0;
    this.everOnline = false;
    this.stopped = false;
    this.timer = null;
    this.closing = false; // the server said it closes this connection (taken_over): no drop to show
    this.renewed = false; // the saved identity was refused: the next welcome is a new one
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/ws`;
  }

  /** `quiet`: after a close the server announced, which is no drop to show. */
  connect(quiet = false) {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.onStatus(this.everOnline && !quiet ? "offline" : "connecting");
    const ws = new WebSocket(this.url());
    this.ws = ws;
    this.welcomed = false;
    ws.addEventListener("open", () => {
      const hello = { type: "hello", v: PROTOCOL };
      const player = localStorage.getItem("grip:player");
      const key = localStorage.getItem("grip:key");
      if (player && key) Object.assign(hello, { player, key });
      const name = this.name();
      if (name) hello.name = name;
      ws.send(JSON.stringify(hello));
    });
    ws.addEventListener("message", (ev) => {
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg.type === "error" && msg.code === "bad_key" && !this.welcomed) {
        // The server does not know our saved identity (another server's, or a store restored from
        // an older copy): start a new one under the old one's name, and say so (a new identity
        // has none of the old one's results, and its own daily attempt).
        localStorage.removeItem("grip:player");
        localStorage.removeItem("grip:key");
        const hello = { type: "hello", v: PROTOCOL };
        const name = this.name() || localStorage.getItem("grip:welcomed-name");
        if (name) hello.name = name;
        ws.send(JSON.stringify(hello));
        this.renewed = true;
        return;
      }
      if (msg.type === "error" && msg.code === "taken_over") this.closing = true;
      if (msg.type === "welcome") {
        localStorage.setItem("grip:player", msg.player);
        localStorage.setItem("grip:key", msg.key);
        localStorage.setItem("grip:welcomed-name", msg.name); // the identity's name, should it be lost
        if (this.renewed) this.onNewIdentity();
        this.renewed = false;
        this.shareHost = msg.share_host || null;
        const again = this.everOnline;
        this.welcomed = true;
        this.everOnline = true;
        this.attempt = 0;
        this.onStatus("online");
        if (again) this.onReconnect();
        const queued = this.queue;
        this.queue = [];
        for (const m of queued) ws.send(JSON.stringify(m));
        return;
      }
      this.onMessage(msg);
    });
    ws.addEventListener("close", () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.welcomed = false;
      if (this.stopped) return;
      if (this.closing) {
        // Another tab took the seat and the server let this connection go: nothing dropped. A
        // fresh one at once, quietly, for whatever this tab does next ("Play here", another page).
        this.closing = false;
        this.connect(true);
        return;
      }
      this.onStatus("offline");
      const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
      this.attempt += 1;
      this.timer = setTimeout(() => this.connect(), base + Math.random() * base * 0.3);
    });
  }

  /** A link to `path` for someone else: the server's address on the network when this page was
   * opened on a loopback one (server/reach.py), else this page's own. */
  shareLink(path) {
    return `${location.protocol}//${this.shareHost || location.host}${path}`;
  }

  /** Send now if connected, else once the next connection is welcomed. */
  send(msg) {
    if (this.ws && this.welcomed && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
    } else {
      this.queue.push(msg);
    }
  }

  /** Drop queued messages (e.g. when the screen changes). */
  clearQueue() {
    this.queue = [];
  }

  get online() {
    return Boolean(this.ws && this.welcomed);
  }

  /** For tests and the "offline" simulation: drop the link; it reconnects by itself. */
  drop() {
    if (this.ws) this.ws.close();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close();
  }
}
