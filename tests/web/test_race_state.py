"""The page's race state (client/web/js/race-state.js) driven with plain messages, in a Web Worker.

A worker has no DOM: that the module runs there at all shows it needs none. Each scenario feeds
protocol v2 messages in and checks the frames that come out and the boards kept. The messages are
the server's own: its engine (``Game``) plays the same moves and says what each one revealed and
its check, as server/match/render.py sends them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from server.engine import Game

#: Runs `scenario` (the body of an async function given RaceState) in a module
#: worker and returns what it returns.
IN_A_WORKER = """async (scenario) => {
  const source = `
    import { RaceState } from "${location.origin}/js/race-state.js";
    const run = async (RaceState) => { ${scenario} };
    run(RaceState).then(
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


SEED = "race-state"


def server_game(*moves: str) -> tuple[Game, list[dict[str, Any]]]:
    """The server's game of SEED after ``moves``, and the v2 ack of each (seq 1, 2, ...; ev 10, 11, ...)."""
    game, acks = Game(SEED), []
    for seq, move in enumerate(moves, 1):
        recorded = game.play(move)
        ack = {"type": "ack", "seq": seq, "ev": 9 + seq, "reveal": game.revealed(), "check": game.check()}
        acks.append(ack | ({"auto": [m.text for m in recorded[1:]]} if len(recorded) > 1 else {}))
    return game, acks


def js(value: Any) -> str:
    return json.dumps(value)


def as_sent(game: Game) -> dict[str, Any]:
    """The game's view as a page gets it (JSON: lists, not tuples)."""
    return dict(json.loads(js(game.player_view())))


START = "(view) => ({ type: 'start', ev: 9, started_at: 1000, ends_at: 601000, view })"


def test_moves_are_drawn_at_once_and_their_acks_reveal_the_cards(run: Any) -> None:
    fresh, _ = server_game()
    after, acks = server_game("T", "T")
    out = run(
        f"""
        const s = new RaceState({{ code: "ACDEFGHJ", seat: 0, token: "tok" }});
        const before = s.play("T");  // no board yet: nothing to play on
        s.receive(({START})({js(fresh.player_view())}));
        const illegal = s.play("A1:0>A1");  // the rules refuse it here: nothing sent
        const first = s.play("T");
        const second = s.play("T");  // it need not wait for the first one's ack
        const drawn = s.view();
        const sent = [...s.receive({js(acks[0])}), ...s.receive({js(acks[1])}), ...s.receive({js(acks[0])})];
        return {{ before, illegal, first, second, drawn, sent, shown: s.view(), waiting: s.waiting,
                  divergences: s.divergences, lastEv: s.lastEv, next: s.play("T") }};
        """
    )
    assert out["before"] is None and out["illegal"] is None
    assert out["first"] == {"type": "move", "seq": 1, "move": "T"}
    assert out["second"] == {"type": "move", "seq": 2, "move": "T"}
    # drawn before any ack: two moves, two cards off the stock, the waste's top face down
    server = as_sent(after)
    assert (out["drawn"]["moves"], out["drawn"]["stock_count"]) == (2, server["stock_count"])
    assert out["drawn"]["waste"] == [{"top": "??", "count": server["waste"][0]["count"]}]
    assert out["sent"] == [] and out["divergences"] == 0 and not out["waiting"]
    assert {k: out["shown"][k] for k in server} == server  # the server's board exactly
    assert out["lastEv"] == 11 and out["next"]["seq"] == 3


def test_a_check_that_disagrees_resumes_the_seat_and_the_snapshot_replaces_the_board(run: Any) -> None:
    fresh, _ = server_game()
    after, acks = server_game("T")
    wrong = acks[0] | {"check": (acks[0]["check"] + 1) % 2**32}
    resumed = {
        "type": "resumed", "match": "ACDEFGHJ", "seat": 0, "ev": 10, "now": 5000, "ends_at": 9000, "last_seq": 1,
        "lobby": {"type": "lobby", "ev": 8, "seats": [], "status": "playing"}, "view": after.player_view(),
        "opponents": [], "missed": [],
    }  # fmt: skip
    out = run(
        f"""
        const s = new RaceState({{ code: "ACDEFGHJ", seat: 0, token: "tok" }});
        s.receive(({START})({js(fresh.player_view())}));
        s.play("T");
        const sent = s.receive({js(wrong)});
        const meanwhile = s.play("T");  // nothing is played on a board known to be wrong
        const again = s.receive({js(wrong)});  // one resume at a time
        const answer = s.receive({js(resumed)});
        return {{ sent, meanwhile, again, answer, shown: s.view(), divergences: s.divergences, next: s.play("T") }};
        """
    )
    assert out["sent"] == [{"type": "resume", "match": "ACDEFGHJ", "token": "tok", "last_ev": 10}]
    assert out["meanwhile"] is None and out["again"] == [] and out["answer"] == []
    assert out["divergences"] == 1
    assert out["shown"]["waste"] == after.player_view()["waste"]
    assert out["next"] == {"type": "move", "seq": 2, "move": "T"}


def test_a_move_lost_in_a_drop_is_resent_and_one_that_arrived_is_not(run: Any) -> None:
    fresh, _ = server_game()
    _, acks = server_game("T", "T")
    one = Game(SEED)
    one.play("T")
    lobby = {"type": "lobby", "ev": 8, "seats": [], "status": "playing"}
    resumed = {"type": "resumed", "match": "ACDEFGHJ", "seat": 0, "ev": 12, "now": 5000, "ends_at": 9000,
               "last_seq": 1, "lobby": lobby, "view": one.player_view(), "opponents": [], "missed": []}  # fmt: skip
    out = run(
        f"""
        const s = new RaceState({{ code: "ACDEFGHJ", seat: 0, token: "tok" }});
        s.receive(({START})({js(fresh.player_view())}));
        s.play("T");
        s.play("T");  // the line drops: the server got the first one only
        const frame = s.resumeFrame();
        const resent = s.receive({js(resumed)});
        const drawn = s.view();
        s.receive({js(acks[1])});
        return {{ frame, resent, drawn, waiting: s.waiting, divergences: s.divergences, next: s.play("T") }};
        """
    )
    assert out["frame"] == {"type": "resume", "match": "ACDEFGHJ", "token": "tok", "last_ev": 9}
    assert out["resent"] == [{"type": "move", "seq": 2, "move": "T"}]  # the second, once; not the first
    assert out["drawn"]["moves"] == 2 and out["drawn"]["waste"][0]["top"] == "??"
    assert not out["waiting"] and out["divergences"] == 0 and out["next"]["seq"] == 3


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


def test_a_refused_move_is_rolled_back_to_the_servers_board_and_out_of_order_resumes(run: Any) -> None:
    fresh, _ = server_game()
    view = fresh.player_view()
    refused = {
        "type": "rejected",
        "seq": 1,
        "code": "wrong_phase",
        "message": "over",
        "view": view,
        "last_seq": 0,
    }
    stale = {
        "type": "rejected",
        "seq": 2,
        "code": "out_of_order",
        "message": "no",
        "view": view,
        "last_seq": 0,
    }
    out = run(
        f"""
        const s = new RaceState({{ code: "ACDEFGHJ", seat: 0, token: "tok" }});
        s.receive(({START})({js(view)}));
        s.play("T");
        s.play("T");
        const rolledBack = s.receive({js(refused)});
        const shown = s.view();
        const told = s.refusal && s.refusal.code;
        const next = s.play("T");  // numbered after the server's last move: 1 again
        s.refusal = null;
        const staleSent = s.receive({js(stale)});  // the refusal of the voided second move: not news
        const staleTold = s.refusal;
        const live = s.receive({js(stale | {"seq": 1})});  // out of step for real: resume
        return {{ rolledBack, shown, told, next, staleSent, staleTold, live }};
        """
    )
    assert out["rolledBack"] == []
    assert out["shown"]["moves"] == 0 and out["shown"]["stock_count"] == view["stock_count"]
    assert out["told"] == "wrong_phase"
    assert out["next"] == {"type": "move", "seq": 1, "move": "T"}
    assert out["staleSent"] == [] and out["staleTold"] is None
    assert out["live"] == [{"type": "resume", "match": "ACDEFGHJ", "token": "tok", "last_ev": 9}]


def test_a_spectator_rebuilds_boards_from_moves_and_counts_the_moves_held_back(run: Any) -> None:
    a, b = Game(SEED), Game(SEED)
    a.play("T")
    snapshot = a.player_view()
    frames = []
    for ev, move in enumerate(["T", "T"], 21):
        a.play(move)
        frames.append(
            {"type": "board", "ev": ev, "seat": 0, "move": move, "reveal": a.revealed(), "check": a.check()}
        )
    progress = "(seat, moves) => ({ type: 'progress', ev: 20, seat, moves, leftover: 72, on_grid: 24, complete: 0, finished: false })"
    wrong = frames[1] | {"ev": 23, "check": 0}
    out = run(
        f"""
        const progress = {progress};
        const s = new RaceState({{ code: "ACDEFGHJ" }});
        const asked = s.watchFrame();
        s.receive({{ type: "watching", match: "ACDEFGHJ", ev: 12, now: 0, ends_at: 9000,
          lobby: {{ type: "lobby", ev: 3, seats: [{{ seat: 0 }}, {{ seat: 1 }}], status: "playing" }},
          boards: [{{ seat: 0, progress: progress(0, 3), view: {js(snapshot)}, moves: ["T"] }},
                   {{ seat: 1, progress: progress(1, 0), view: {js(b.player_view())}, moves: [] }}] }});
        const heldAtFirst = [s.heldBack(0), s.heldBack(1)];
        const sent = [...s.receive({js(frames[0])}), ...s.receive({js(frames[1])})];
        const shown = s.view(0);
        const list = [...s.moves[0]];
        const undo = s.receive({{ type: "board", ev: 22, seat: 0, move: "undo", check: 0, view: {js(snapshot)} }});
        const after = [...s.moves[0]];
        const held = s.heldBack(0);
        const wrong = s.receive({js(wrong)});  // a board that disagrees: watch again
        return {{ asked, heldAtFirst, sent, shown, list, undo, after, held, wrong,
                  divergences: s.divergences, lastEv: s.lastEv }};
        """
    )
    assert out["asked"] == {"type": "watch", "match": "ACDEFGHJ"}
    assert out["heldAtFirst"] == [2, 0]
    assert out["sent"] == []
    server = as_sent(a)
    assert {k: out["shown"][k] for k in server} == server
    assert out["list"] == ["T", "T", "T"]
    assert out["undo"] == [] and out["after"] == ["T", "T"] and out["held"] == 2
    assert out["wrong"] == [{"type": "watch", "match": "ACDEFGHJ"}] and out["divergences"] == 1
    assert out["lastEv"] == 23


@pytest.mark.parametrize("landed", [True, False])
def test_an_undo_is_numbered_and_sent_again_with_its_seq_after_a_drop_or_a_store_away(
    run: Any, landed: bool
) -> None:
    """Practice: the undo takes the next seq. Refused `unavailable`, it goes again after the pause (no
    resume); lost with a line, it goes again after the resume, whether it landed or not: the server
    answers a repeat of its seq as it did first, and undoes once."""
    fresh, _ = server_game()
    after, acks = server_game("T")
    lobby = {"type": "lobby", "ev": 8, "seats": [], "status": "playing"}
    undone = {"type": "undone", "ev": 11, "moves": ["T"], "view": fresh.player_view()}
    resumed = {"type": "resumed", "match": "ACDEFGHJ", "seat": 0, "ev": 11 if landed else 10, "now": 5000,
               "ends_at": 9000, "last_seq": 2 if landed else 1, "lobby": lobby,
               "view": (fresh if landed else after).player_view(), "opponents": [], "missed": []}  # fmt: skip
    out = run(
        f"""
        const s = new RaceState({{ code: "ACDEFGHJ", seat: 0, token: "tok" }});
        s.receive(({START})({js(fresh.player_view())}));
        s.play("T");
        s.receive({js(acks[0])});
        const asked = s.request("undo");
        const meanwhile = s.play("T");  // no move while an undo waits
        const retrying = s.refused({{ type: "error", code: "unavailable", message: "busy" }});
        const paused = s.retryTimer() !== null;
        const again = s.retry();
        const frame = s.resumeFrame();  // and then the line drops
        const resent = s.receive({js(resumed)});
        const answer = s.receive({js(undone)});
        return {{ asked, meanwhile, retrying, paused, again, frame, resent, answer, undoing: s.undoSeq,
                  moves: s.view().moves, next: s.play("T") }};
        """
    )
    assert out["asked"] == {"type": "undo", "seq": 2} and out["meanwhile"] is None
    assert out["retrying"] and out["paused"] and out["again"] == [{"type": "undo", "seq": 2}]
    assert out["frame"]["type"] == "resume"
    assert out["resent"] == [{"type": "undo", "seq": 2}]  # once more, with its seq, landed or not
    assert out["answer"] == [] and out["undoing"] is None and out["moves"] == 0
    assert out["next"] == {"type": "move", "seq": 3, "move": "T"}
