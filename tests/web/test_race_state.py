"""The page's race state (client/web/js/race-state.js) driven with plain messages, in a Web Worker.

A worker has no DOM: that the module runs there at all shows it needs none, as a module a
client-side rules engine can drive must. Each scenario feeds server messages in and checks the
frames that come out and the state kept.
"""

from __future__ import annotations

from typing import Any

import pytest

#: Runs `scenario` (the body of an async function given RaceState and serverBoards) in a module
#: worker and returns what it returns.
IN_A_WORKER = """async (scenario) => {
  const source = `
    import { RaceState, serverBoards } from "${location.origin}/js/race-state.js";
    const run = async (RaceState, serverBoards) => { ${scenario} };
    run(RaceState, serverBoards).then(
      (out) => postMessage({ out: JSON.parse(JSON.stringify(out ?? null)), dom: typeof document }),
      (e) => postMessage({ error: String(e && e.stack || e) }),
    );`;
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const worker = new Worker(url, { type: "module" });
  try {
    return await new Promise((resolve, reject) => {
      worker.onmessage = (e) => resolve(e.data);
      worker.onerror = (e) => reject(new Error(e.message || "worker failed"));
    });
  } finally {
    worker.terminate();
  }
}"""


@pytest.fixture
def run(server_url: str, pages: Any) -> Any:
    page = pages.new(bypass_csp=True)  # the harness's worker comes from a blob: URL the page's CSP forbids
    page.goto(server_url + "rules")

    def run(scenario: str) -> Any:
        answer = page.evaluate(IN_A_WORKER, scenario)
        assert "error" not in answer, answer.get("error")
        assert answer["dom"] == "undefined"  # no document in a worker: the module used none
        return answer["out"]

    return run


VIEW = "(moves, stock) => ({ grid: {}, waste: [{ top: null, count: 0 }], stock_count: stock, moves, legal: ['T'] })"


def test_moves_are_numbered_one_at_a_time(run: Any) -> None:
    out = run(
        f"""
        const view = {VIEW};
        const s = new RaceState({{ code: "ACDEFGHJ", seat: 0, token: "tok" }});
        const before = s.play("T");  // no board yet: nothing to play on
        s.receive({{ type: "start", ev: 9, started_at: 1000, ends_at: 601000, view: view(0, 72) }});
        const first = s.play("T");
        const meanwhile = s.play("T");  // one move waits for its ack at a time
        s.receive({{ type: "ack", seq: 1, ev: 10, move: "T", view: view(1, 69) }});
        s.receive({{ type: "ack", seq: 1, ev: 10, move: "T", view: view(9, 9) }});  // a repeated ack
        const second = s.play("A1:0>B2");
        return {{ before, first, meanwhile, second, seq: s.seq, shown: s.view().stock_count, lastEv: s.lastEv }};
        """
    )
    assert out["before"] is None and out["meanwhile"] is None
    assert out["first"] == {"type": "move", "seq": 1, "move": "T"}
    assert out["second"] == {"type": "move", "seq": 2, "move": "A1:0>B2"}
    assert (out["seq"], out["shown"], out["lastEv"]) == (1, 69, 10)


def test_a_move_lost_in_a_drop_is_resent_and_one_that_arrived_is_not(run: Any) -> None:
    out = run(
        f"""
        const view = {VIEW};
        const lobby = {{ type: "lobby", ev: 8, seats: [], status: "playing" }};
        const resumed = (lastSeq, moves) => ({{ type: "resumed", match: "ACDEFGHJ", seat: 0, ev: 12, now: 5000,
          ends_at: 9000, last_seq: lastSeq, lobby, view: view(moves, 69), opponents: [], missed: [] }});
        const s = new RaceState({{ code: "ACDEFGHJ", seat: 0, token: "tok" }});
        s.receive({{ type: "start", ev: 9, started_at: 1000, ends_at: 9000, view: view(0, 72) }});
        s.play("T");
        const frame = s.resumeFrame();
        const lost = s.receive(resumed(0, 0));  // the server never got it
        const pendingAfterLost = s.pending;
        const arrived = s.receive(resumed(1, 1));  // it got there before the drop
        return {{ frame, lost, pendingAfterLost, arrived, pending: s.pending, seq: s.seq, next: s.play("T") }};
        """
    )
    assert out["frame"] == {"type": "resume", "match": "ACDEFGHJ", "token": "tok", "last_ev": 9}
    assert out["lost"] == [{"type": "move", "seq": 1, "move": "T"}]
    assert out["pendingAfterLost"] == {"seq": 1, "move": "T"}
    assert out["arrived"] == [] and out["pending"] is None
    assert out["seq"] == 1 and out["next"]["seq"] == 2


def test_resume_catches_up_from_the_last_event_and_follows_the_servers_numbering(run: Any) -> None:
    out = run(
        """
        let now = 0;
        const s = new RaceState({ code: "ACDEFGHJ", seat: 1, token: "t", localNow: () => now });
        const seats = [{ seat: 0, name: "Ada", ready: true, connected: true }, { seat: 1, name: "Bea", ready: true, connected: true }];
        s.receive({ type: "lobby", ev: 4, seats, status: "playing", solo: false });
        s.receive({ type: "progress", ev: 7, seat: 0, moves: 3, leftover: 70, on_grid: 26, complete: 0, finished: false });
        const asked = s.resumeFrame().last_ev;
        now = 1000;  // the device's clock; the server's says 50000
        const sent = s.receive({ type: "resumed", match: "ACDEFGHJ", seat: 1, ev: 5, now: 50000, ends_at: 80000,
          last_seq: 0, lobby: { type: "lobby", ev: 5, seats, status: "playing" }, view: null,
          opponents: [{ type: "progress", ev: 5, seat: 0, moves: 4, leftover: 69, on_grid: 27, complete: 0, finished: false }],
          missed: [{ type: "finished", ev: 5, seat: 0, score: 69, reason: "finish", at: 49000 }] });
        now = 3000;
        return { asked, sent, lastEv: s.lastEv, left: s.endsAt - s.now(), opponent: s.racerState(0),
                 moves: s.progress[0].moves, mine: s.racerState(1) };
        """
    )
    assert out["asked"] == 7
    assert out["sent"] == []
    assert out["lastEv"] == 5  # the server's numbering wins, even below what was seen
    assert out["left"] == 28_000  # 80000 - (50000 + 2000 that passed on this device)
    assert (out["opponent"], out["moves"], out["mine"]) == ("finished_flag", 4, "playing_flag")


def test_a_move_out_of_step_is_rolled_back_and_the_seat_resumed(run: Any) -> None:
    out = run(
        f"""
        const view = {VIEW};
        const s = new RaceState({{ code: "ACDEFGHJ", seat: 0, token: "tok" }});
        s.receive({{ type: "start", ev: 9, started_at: 1000, ends_at: 9000, view: view(0, 72) }});
        s.play("T");
        const illegal = s.receive({{ type: "rejected", seq: 1, code: "illegal", message: "no", view: view(0, 72) }});
        s.play("T");
        const stepped = s.receive({{ type: "rejected", seq: 1, code: "out_of_order", message: "no", view: view(2, 66) }});
        return {{ illegal, stepped, pending: s.pending, shown: s.view().moves }};
        """
    )
    assert out["illegal"] == [] and out["pending"] is None
    assert out["stepped"] == [{"type": "resume", "match": "ACDEFGHJ", "token": "tok", "last_ev": 9}]
    assert out["shown"] == 2


def test_a_spectator_sees_boards_as_shown_and_counts_the_moves_held_back(run: Any) -> None:
    out = run(
        """
        const view = (moves, stock) => ({ grid: {}, waste: [], stock_count: stock, moves, on_grid: 24, leftover: 72 });
        const progress = (seat, moves) => ({ type: "progress", ev: 20, seat, moves, leftover: 72, on_grid: 24, complete: 0, finished: false });
        const s = new RaceState({ code: "ACDEFGHJ" });
        s.receive({ type: "watching", match: "ACDEFGHJ", ev: 12, now: 0, ends_at: 9000,
          lobby: { type: "lobby", ev: 3, seats: [{ seat: 0 }, { seat: 1 }], status: "playing" },
          boards: [{ seat: 0, progress: progress(0, 3), view: view(1, 69), moves: ["T"] },
                   { seat: 1, progress: progress(1, 0), view: view(0, 72), moves: [] }] });
        const heldAtFirst = [s.heldBack(0), s.heldBack(1)];
        s.receive({ type: "board", ev: 21, seat: 0, move: "A1:0>B2", auto: [], view: view(2, 68), progress: progress(0, 3) });
        s.receive({ type: "board", ev: 22, seat: 0, move: "T", auto: ["A1~B1"], view: view(3, 65), progress: progress(0, 3) });
        const list = [...s.moves[0]];
        s.receive({ type: "board", ev: 23, seat: 0, move: "undo", auto: [], view: view(2, 65), progress: progress(0, 2) });
        return { heldAtFirst, list, after: s.moves[0], held: s.heldBack(0), stock: s.view(0).stock_count, lastEv: s.lastEv };
        """
    )
    assert out["heldAtFirst"] == [2, 0]
    assert out["list"] == ["T", "A1:0>B2", "T", "A1~B1"]
    assert out["after"] == ["T", "A1:0>B2", "T"]
    assert (out["held"], out["stock"], out["lastEv"]) == (0, 65, 23)


def test_a_board_source_that_plays_moves_itself_shows_them_before_the_ack(run: Any) -> None:
    """The seam protocol v2 uses: a source whose `play` answers at once (a rules engine)."""
    out = run(
        """
        const played = (board, move) => ({ ...board, moves: board.moves + 1, last: move });
        const engine = { ...serverBoards, play: played, ack: (board) => ({ ...board, confirmed: true }) };
        const s = new RaceState({ code: "ACDEFGHJ", seat: 0, token: "t", boards: engine });
        s.receive({ type: "start", ev: 9, started_at: 0, ends_at: 9000, view: { moves: 0, stock_count: 72 } });
        s.play("T");
        const before = { ...s.view() };
        s.receive({ type: "ack", seq: 1, ev: 10, move: "T" });
        return { before, after: s.view() };
        """
    )
    assert out["before"] == {"moves": 1, "stock_count": 72, "last": "T"}
    assert out["after"] == {"moves": 1, "stock_count": 72, "last": "T", "confirmed": True}
