// Seats live in localStorage, not the tab's: a player who closes the tab, or opens the link in
// another, gets the seat back (the newer tab takes it over, the older one is told so and offers
// to take it back). Seats older than SEAT_KEEP_MS are forgotten whenever one is saved.
const SEAT_KEEP_MS = 2 * 86_400_000;

/** `extra`: what the lobby does not say, e.g. {bot} for a race against a bot that this page created. */
export function saveSeat(code, token, seat, extra = {}) {
  const now = Date.now();
  for (let i = localStorage.length - 1; i >= 0; i -= 1) {
    const key = localStorage.key(i);
    if (!key || !key.startsWith("grip:seat:")) continue;
    try {
      if (!(now - JSON.parse(localStorage.getItem(key)).at < SEAT_KEEP_MS)) localStorage.removeItem(key);
    } catch {
      localStorage.removeItem(key);
    }
  }
  localStorage.setItem(`grip:seat:${code}`, JSON.stringify({ token, seat, at: now, ...extra }));
}

export function loadSeat(code) {
  try {
    return JSON.parse(localStorage.getItem(`grip:seat:${code}`) || "null");
  } catch {
    return null;
  }
}

export function forgetSeat(code) {
  localStorage.removeItem(`grip:seat:${code}`);
}
