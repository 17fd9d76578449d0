"""The embedded store: one SQLite file in WAL mode, and a journal of events beside it.

Calls run on the event loop's thread: a WAL commit with synchronous=NORMAL
is tens of microseconds, cheaper than a thread hop, and it survives a killed
process (the WAL is in the OS's hands once the commit returns); an OS crash
or a power cut can take the commits since the last checkpoint (about a
second: the checkpointer fsyncs the WAL first). FULL would fsync at every
commit, on the event loop: 0.4-3 ms a commit on this machine's disk, 7-12
times a quiet server's cost per move (``bench/sqlite_sync.py``); the promise
is written out in docs/protocol.md instead.

A batch that changes none of the tables kept beside the logs (nearly every
append: moves, seats taken, drops; not a match's opening, countdown or
decision, ``INDEXED``) is not committed: it is written to the journal
(``server/store/journal.py``), one ``write`` as safe as that commit, and
returns at once. Every ``FLUSH_EVERY_S`` the journal's events go into the
table, each match's as one row of ``event_runs`` (one index entry and a
page or so for a match's half second of moves, where a row a move was five
times dearer), ``RUNS_PER_FLUSH`` to a transaction with the event loop free
between two (``_flush``); a read of a log takes the events not there yet
from the journal. Every other append is group-committed: every append made
in one turn of the event loop goes into one transaction, committed on the
next turn, in one statement; a conflict fails only its own append (then the
batch is written again one append at a time, each under a savepoint).
``append`` returns only once its events are durable, so an ack still waits
for its move to be; measured in docs/benchmarks.md.

Checkpoints (copying the WAL into the database file, with fsyncs) run on a
thread of their own, which also syncs the journal's files and removes those
whose rows are in the table: SQLite's automatic checkpoints ran inside a
commit, on the event loop, and stalled every move in flight by 15-20 ms
about once a second under load.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
import sys
import threading
from collections.abc import Collection, Sequence
from itertools import pairwise
from pathlib import Path

from .. import ratings
from ..errors import Conflict, StoreUnavailable
from ..match.events import CountdownStarted, Decided, Event, Opened, decode_events, event_json
from ..protocol import LiveRace, Rated, Result, ResultSummary
from ..ratings import PlayerRating, RatingPoint
from ..stats import Totals
from . import (
    BoardKey,
    BoardPage,
    BoardPlace,
    BoardRow,
    DailyBoard,
    LiveTop,
    PlayerRecord,
    QueueEntry,
    board_rows,
    journal,
    live_gap,
    rank_tree,
)
from .journal import Journal
from .waiting import MemoryQueue

log = logging.getLogger(__name__)
CHECKPOINT_EVERY_S = 1.0
#: The WAL's size past which the checkpointer has SQLite start it over: rarely, as that holds a commit up.
WAL_RESET_BYTES = 1024 * 1024 * 1024
#: What the WAL is cut back to when it starts over (after a lull, or a reset).
WAL_KEPT_BYTES = 64 * 1024 * 1024
#: How often the journal's events go into the table: the longer, the more of them a row holds.
FLUSH_EVERY_S = 0.5
#: Matches whose events go into the table in one transaction (one turn of the event loop): about a
#: millisecond, so that a flush never holds up the moves in flight for long.
RUNS_PER_FLUSH = 64
#: Events the journal may hold that the table could not take (a full disk): past them, they are refused.
JOURNAL_MAX_ROWS = 200_000
#: The events that change a table kept beside the logs (``_write_indexes``): they are committed, not journaled.
INDEXED = (Opened, CountdownStarted, Decided)
INSERT_RUN = "INSERT INTO event_runs (match, ev, last, body) VALUES (?, ?, ?, ?)"
EVENTS_AFTER = "SELECT body FROM events WHERE match = ? AND ev > ? ORDER BY ev"
RUNS_AFTER = "SELECT body FROM event_runs WHERE match = ? AND last > ?"
LAST_EV = (
    "SELECT max(coalesce((SELECT max(ev) FROM events WHERE match = ?), 0),"
    " coalesce((SELECT max(last) FROM event_runs WHERE match = ?), 0))"
)

EVENTS_TABLE = """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, match TEXT NOT NULL, ev INTEGER NOT NULL, body TEXT NOT NULL,
    UNIQUE (match, ev)
)"""
#: The list of live races: each listing with the keys of its orders (``Store.live_top``), each
#: order and the ends indexed, so that a refresh reads the top of each and the stale ones only.
LIVE_TABLE = """
CREATE TABLE IF NOT EXISTS live_races (
    match TEXT PRIMARY KEY, body TEXT NOT NULL, started_at INTEGER NOT NULL, gap INTEGER NOT NULL,
    ends_at INTEGER NOT NULL
) WITHOUT ROWID"""
LIST_RACE = (
    "INSERT OR REPLACE INTO live_races (match, body, started_at, gap, ends_at) SELECT ?, ?, ?, ?, ?"
    " WHERE NOT EXISTS (SELECT 1 FROM results WHERE match = ?)"
)
SCHEMA = (
    EVENTS_TABLE
    + ";"
    + LIVE_TABLE
    + """;
-- a match's events as the journal held them between two flushes: ev..last, their JSON joined by commas
CREATE TABLE IF NOT EXISTS event_runs (
    id INTEGER PRIMARY KEY, match TEXT NOT NULL, ev INTEGER NOT NULL, last INTEGER NOT NULL,
    body TEXT NOT NULL, UNIQUE (match, ev)
);
CREATE TABLE IF NOT EXISTS results (
    match TEXT PRIMARY KEY, decided_at INTEGER NOT NULL, body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS players (
    id TEXT PRIMARY KEY, key_hash TEXT NOT NULL, name TEXT NOT NULL, created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS daily_attempts (
    day TEXT NOT NULL, player TEXT NOT NULL, match TEXT NOT NULL, PRIMARY KEY (day, player)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS daily_scores (
    day TEXT NOT NULL, player TEXT NOT NULL, name TEXT NOT NULL, score INTEGER NOT NULL,
    time_ms INTEGER NOT NULL, match TEXT NOT NULL, PRIMARY KEY (day, player)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS daily_rank ON daily_scores (day, score, time_ms);
CREATE TABLE IF NOT EXISTS running (match TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS lobbies (match TEXT PRIMARY KEY, opened_at INTEGER NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS lobbies_by_age ON lobbies (opened_at);
CREATE TABLE IF NOT EXISTS player_results (
    player TEXT NOT NULL, decided_at INTEGER NOT NULL, match TEXT NOT NULL,
    PRIMARY KEY (player, decided_at, match)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS player_totals (player TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ratings (
    variant TEXT NOT NULL, player TEXT NOT NULL, body TEXT NOT NULL, mu REAL NOT NULL,
    on_board INTEGER NOT NULL, PRIMARY KEY (variant, player)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ratings_board ON ratings (variant, on_board, mu, player);
CREATE TABLE IF NOT EXISTS rating_log (
    variant TEXT NOT NULL, seq INTEGER NOT NULL, match TEXT NOT NULL UNIQUE, change TEXT NOT NULL,
    PRIMARY KEY (variant, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rating_history (
    player TEXT NOT NULL, variant TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (player, variant, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS replays (match TEXT PRIMARY KEY, daily TEXT, body BLOB NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS live_newest ON live_races (started_at DESC, match DESC);
CREATE INDEX IF NOT EXISTS live_closest ON live_races (gap, started_at DESC, match DESC);
CREATE INDEX IF NOT EXISTS live_ends ON live_races (ends_at);
CREATE TABLE IF NOT EXISTS daily_counts (
    day TEXT NOT NULL, score INTEGER NOT NULL, players INTEGER NOT NULL, PRIMARY KEY (day, score)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS board_sizes (variant TEXT PRIMARY KEY, players INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rank_trees (
    tree TEXT NOT NULL, node INTEGER NOT NULL, players INTEGER NOT NULL, PRIMARY KEY (tree, node)
) WITHOUT ROWID;
"""
)


class _Checkpointer(threading.Thread):
    """Runs a PASSIVE checkpoint every ``every_s``, then syncs the journal: it never blocks the writer.

    It runs at the lowest CPU priority: at 2,600 moves/s a checkpoint copies
    8,000-15,000 WAL frames, 10-20 ms of CPU each second, and on a server
    given one core the scheduler split that core between it and the event
    loop, holding up every move in flight (docs/benchmarks.md). At nice 19 it
    mostly takes the loop's idle time, and still gets its share when there
    is none.

    A PASSIVE checkpoint copies the WAL's frames but never rewinds it: SQLite
    starts the WAL over only when a writer finds every frame copied, which
    happens at a lull, and under a steady stream of moves new frames always
    arrived while the copy ran: the WAL grew by 6-36 MB a second of load, for
    good. So once it is past ``reset_bytes``, a RESTART checkpoint follows
    the PASSIVE one: it copies the frames that came meanwhile and syncs the
    database file with writers held back, and the next commit starts the WAL
    over, cut back to ``WAL_KEPT_BYTES`` (``journal_size_limit``). That holds
    the event loop's next commit up for 12-27 ms here (the fsync), so it is
    kept rare: at 64 MiB it came every 2-4 s of the socket bench, and those
    stalls were its half-load p99 (docs/benchmarks.md).
    """

    def __init__(self, path: str, every_s: float, reset_bytes: int, moves: Journal) -> None:
        super().__init__(name="sqlite-checkpoint", daemon=True)
        self.path = path
        self.every_s = every_s
        self.reset_bytes = reset_bytes
        self.moves = moves
        self.stopping = threading.Event()

    def run(self) -> None:
        if sys.platform == "linux":  # there, a thread has a priority of its own
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        # a RESTART holds writers back while it waits for the readers: it gives up (until the next time)
        # after 100 ms rather than hold the event loop's next commit for the default 5 s
        db = sqlite3.connect(self.path, timeout=0.1, isolation_level=None, check_same_thread=False)
        wal = f"{self.path}-wal"
        try:
            while not self.stopping.wait(self.every_s):
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    if os.path.getsize(wal) > self.reset_bytes:
                        db.execute("PRAGMA wal_checkpoint(RESTART)")
                    self.moves.sync(wal)
                except (sqlite3.Error, OSError) as exc:
                    log.warning("checkpoint failed (will retry): %s", exc)
        finally:
            db.close()


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a data file of an earlier layout up to SCHEMA's, in one transaction.

    The events table was keyed by (match, ev) WITHOUT ROWID, so the moves of
    hundreds of live matches landed on as many B-tree pages, and a group
    commit wrote each of them to the WAL. Rows are now stored in append
    order, with (match, ev) kept unique by an index of small entries: a busy
    server's move costs 9-15% less CPU in process (docs/benchmarks.md).
    """
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'").fetchone()
    if row is None or "WITHOUT ROWID" not in row[0].upper():
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("ALTER TABLE events RENAME TO events_v1")
        db.execute(EVENTS_TABLE)
        db.execute(
            "INSERT INTO events (match, ev, body) SELECT match, ev, body FROM events_v1 ORDER BY match, ev"
        )
        db.execute("DROP TABLE events_v1")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _migrate_live(db: sqlite3.Connection) -> None:
    """Give the listings of a data file from before the list's orders were kept their keys (``LIVE_TABLE``).

    Kept as JSON alone, the whole list was read and ranked at every refresh.
    """
    columns = {row[1] for row in db.execute("PRAGMA table_info(live_races)")}
    if not columns or "gap" in columns:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        races = [LiveRace.model_validate_json(body) for (body,) in db.execute("SELECT body FROM live_races")]
        db.execute("DROP TABLE live_races")
        db.execute(LIVE_TABLE)
        db.executemany(LIST_RACE, _live_rows(races))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _live_rows(races: Sequence[LiveRace]) -> list[tuple[str, str, int, int, int, str]]:
    """``LIST_RACE``'s parameters for each listing: its JSON and its orders' keys."""
    return [
        (
            r.match,
            r.model_dump_json(),
            r.started_at,
            live_gap(x.leftover for x in r.racers),
            r.ends_at,
            r.match,
        )
        for r in races
    ]


class DataInUse(RuntimeError):
    """Another server process has this data file open."""


def _lock(path: str) -> int:
    """Hold ``path``.lock for the life of the process: one server per data file.

    Two embedded servers on one file would each take the other's players for
    gone (their connections are in the log, their process is not this one)
    and abandon them, and neither would hear the other's moves.
    """
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DataInUse(
            f"another server is using {path}: stop it, or give this one a --data of its own"
        ) from None
    return fd


#: Index tables every append keeps, each with the query that fills it from the logs of a
#: data file made before it: run once, when the table is made. (A restart onto the new
#: version is just when the races its previous run left behind must be found.)
INDEXES = {
    "running": "INSERT OR IGNORE INTO running (match) SELECT DISTINCT match FROM events"
    " WHERE json_extract(body, '$.kind') = 'countdown' AND match NOT IN (SELECT match FROM results)",
    "lobbies": "INSERT OR IGNORE INTO lobbies (match, opened_at) SELECT match, json_extract(body, '$.at')"
    " FROM events WHERE json_extract(body, '$.kind') = 'opened' AND match NOT IN"
    " (SELECT match FROM events WHERE json_extract(body, '$.kind') = 'countdown')",
    "daily_counts": "INSERT INTO daily_counts (day, score, players)"
    " SELECT day, score, count(*) FROM daily_scores GROUP BY day, score",
    "board_sizes": "INSERT INTO board_sizes (variant, players)"
    " SELECT variant, count(*) FROM ratings WHERE on_board = 1 GROUP BY variant",
}


def _own_only(path: str) -> None:
    """Make the data file (and its WAL) readable by this user alone: it holds the daily secret.

    SQLite gives the WAL and shared-memory files the database file's mode,
    so creating that file 0600 before SQLite opens it covers them all; a
    file made by an earlier version (0644 by the umask) is narrowed.
    """
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for name in (path, f"{path}-wal", f"{path}-shm"):
        if os.path.exists(name):
            os.chmod(name, 0o600)


def _rating_tree(variant: str) -> str:
    """The ``rank_trees`` key of a variant's board of the best (``rank_tree.RATINGS``)."""
    return f"rating {variant}"


def _finish_tree(day: str, score: int) -> str:
    """The ``rank_trees`` key of the times to finish of a day's score (``rank_tree.FINISH``)."""
    return f"daily {day} {score}"


def _fill_rank_trees(db: sqlite3.Connection) -> None:
    """Every board's order statistic from its rows: a data file from before they were kept."""
    trees: dict[tuple[str, rank_tree.Tree], list[int]] = {}
    for variant, mu in db.execute("SELECT variant, mu FROM ratings WHERE on_board = 1"):
        trees.setdefault((_rating_tree(variant), rank_tree.RATINGS), []).append(rank_tree.rating_position(mu))
    for day, score, time_ms in db.execute("SELECT day, score, time_ms FROM daily_scores"):
        trees.setdefault((_finish_tree(day, score), rank_tree.FINISH), []).append(
            rank_tree.finish_position(time_ms)
        )
    for (tree, shape), positions in trees.items():
        db.executemany(
            "INSERT INTO rank_trees (tree, node, players) VALUES (?, ?, ?)",
            [(tree, node, n) for node, n in shape.build(positions).items()],
        )


def _fill_totals(db: sqlite3.Connection) -> None:
    """Every player's totals from their results: a data file from before the totals were kept."""
    rows = db.execute(
        "SELECT p.player, r.body FROM player_results p JOIN results r ON r.match = p.match ORDER BY p.player"
    )
    totals: dict[str, Totals] = {}
    for player, body in rows:
        totals.setdefault(player, Totals()).add(Result.model_validate_json(body), player)
    db.executemany(
        "INSERT INTO player_totals (player, body) VALUES (?, ?)",
        [(player, t.model_dump_json()) for player, t in totals.items()],
    )


#: Lobbies deleted in one transaction by ``forget_lobbies``, which lets the event loop
#: run between two: a backlog of thousands must not hold up the moves for its whole length.
FORGET_BATCH = 500


class SqliteStore:
    def __init__(
        self,
        path: str,
        *,
        checkpoint_every_s: float = CHECKPOINT_EVERY_S,
        wal_reset_bytes: int = WAL_RESET_BYTES,
    ) -> None:
        on_disk = path not in ("", ":memory:")
        self._lock_fd: int | None = None
        if on_disk:
            Path(path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._lock_fd = _lock(path)
            _own_only(path)
        self._db = sqlite3.connect(path or ":memory:", isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        _migrate(self._db)
        _migrate_live(self._db)
        tables = {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self._db.executescript(SCHEMA)
        for table, fill in INDEXES.items():
            if table not in tables:
                self._db.execute(fill)
        if "player_totals" not in tables:
            _fill_totals(self._db)
        if "rank_trees" not in tables:
            _fill_rank_trees(self._db)
        self._wal = f"{path}-wal"
        if on_disk:
            self._recover_moves(path)
        self._pending: list[tuple[str, Sequence[Event], asyncio.Future[None]]] = []
        self._journaled = Journal(path if on_disk else None)
        #: Each match's last ``ev`` in the log, as far as known here: from its first append on, until
        #: its decision (``_last_ev``).
        self._last: dict[str, int] = {}
        self._flush_timer: asyncio.TimerHandle | None = None
        self._replays: dict[str, tuple[str | None, bytes]] = {}  # kept, to go in with the next flush
        self._queue = MemoryQueue()
        self._checkpointer: _Checkpointer | None = None
        if on_disk:
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.execute(f"PRAGMA journal_size_limit={min(WAL_KEPT_BYTES, wal_reset_bytes)}")
            self._checkpointer = _Checkpointer(path, checkpoint_every_s, wal_reset_bytes, self._journaled)
            self._checkpointer.start()

    def _recover_moves(self, path: str) -> None:
        """The events an earlier run journaled and did not write into the table (it was killed): in now.

        An event the table holds already (written, its file not removed yet) is left out, and so are
        the events of a match whose log is gone (a lobby forgotten).
        """
        rows, files = journal.recover(path)
        by_match: dict[str, list[tuple[int, str]]] = {}
        for match_id, ev, body in rows:
            by_match.setdefault(match_id, []).append((ev, body))
        runs, moved = [], 0
        for match_id, moves in by_match.items():
            held = self._held_evs(match_id)
            if not held:
                continue
            fresh = sorted({ev: body for ev, body in moves if ev not in held}.items())
            if fresh:
                runs.append(_run(match_id, fresh))
                moved += len(fresh)
        if runs:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(INSERT_RUN, runs)
            self._db.execute("COMMIT")
            log.info("%d journaled events of %d matches taken in", moved, len(runs))
        journal.sync_file(self._wal)
        journal.remove(files)

    def _held_evs(self, match_id: str) -> set[int]:
        """The ``ev`` of every event of the match the table holds."""
        held = {ev for (ev,) in self._db.execute("SELECT ev FROM events WHERE match = ?", (match_id,))}
        for (body,) in self._db.execute("SELECT body FROM event_runs WHERE match = ?", (match_id,)):
            held.update(e.ev for e in decode_events(f"[{body}]"))
        return held

    async def ping(self) -> bool:
        """Whether a commit goes through: a read would pass on a full disk that refuses every move."""
        try:
            self._db.execute("INSERT OR REPLACE INTO settings (key, value) VALUES ('healthz', '')")
        except sqlite3.Error:
            return False
        return True

    async def append(
        self, match_id: str, expected_ev: int, events: Sequence[Event], *, rebase: bool = False
    ) -> int:
        """One process appends here, so there is nothing to rebase past: ``rebase`` is moot.

        A batch that changes no table beside the log (``INDEXED``) goes to the
        journal, durable when this returns, with no loop turn to wait for;
        anything else waits for this turn's group commit.
        """
        if not any(isinstance(e, INDEXED) for e in events):
            self._journal(match_id, events)
            return 0
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._pending.append((match_id, events, done))
        if len(self._pending) == 1:
            loop.call_soon(self._commit)
        await done
        return 0

    def _journal(self, match_id: str, events: Sequence[Event]) -> None:
        """Write events to the journal; Conflict if one of them has an ``ev`` the log has."""
        if len(self._journaled) >= JOURNAL_MAX_ROWS:
            raise StoreUnavailable("the journal is full: the table takes no writes")
        evs = [e.ev for e in events]
        if evs[0] <= self._last_ev(match_id) or any(b <= a for a, b in pairwise(evs)):
            raise Conflict(match_id)
        self._journaled.write(match_id, [(e.ev, event_json(e)) for e in events])
        self._last[match_id] = evs[-1]
        self._flush_soon()

    def _flush_soon(self) -> None:
        if self._flush_timer is None:
            self._flush_timer = asyncio.get_running_loop().call_later(FLUSH_EVERY_S, self._flush)

    def _last_ev(self, match_id: str) -> int:
        """The ``ev`` of the match's last event, journaled or in the table (0: none).

        Kept from one append to the next (``_last``): read from the table at a
        match's first append here only, not at every move.
        """
        last = self._last.get(match_id)
        if last is None:
            (last,) = self._db.execute(LAST_EV, (match_id, match_id)).fetchone()
            self._last[match_id] = last
        return last

    def _flush(self) -> None:
        """Write the events journaled so far into the table, ``RUNS_PER_FLUSH`` matches a turn of the loop.

        A write the table refuses (a full disk) leaves them in the journal, tried again later.
        """
        self._flush_timer = None
        try:
            due = self._journaled.freeze()
        except StoreUnavailable as exc:
            log.warning("the journal could not start a new file (will retry): %s", exc.detail)
            due = self._journaled.matches()
        self._flush_some(due)

    def _flush_some(self, due: list[str]) -> None:
        part, rest = due[:RUNS_PER_FLUSH], due[RUNS_PER_FLUSH:]
        loop = asyncio.get_running_loop()
        if self._write_runs(part) and rest:
            loop.call_soon(self._flush_some, rest)
        elif len(self._journaled) or self._replays:
            self._flush_soon()

    def _write_runs(self, matches: Sequence[str]) -> bool:
        """The journaled events of ``matches`` into the table, a row each, and the replays waiting, in one
        transaction; False if refused."""
        taken = [(m, moves) for m in matches if (moves := self._journaled.rows_of(m))]
        if not (taken or self._replays):
            return True
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(INSERT_RUN, [_run(m, moves) for m, moves in taken])
            self._write_replays()
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            log.warning("journaled events not written into the table (will retry): %s", exc)
            return False
        for match_id, moves in taken:
            self._journaled.written(match_id, len(moves))
        self._replays.clear()
        return True

    def _commit(self) -> None:
        """Write every pending append in one transaction; settle each one's future."""
        batch, self._pending = self._pending, []
        if not batch:
            return
        db = self._db
        outcomes: Sequence[BaseException | None]
        try:
            db.execute("BEGIN IMMEDIATE")
            outcomes = self._write_all([(match_id, events) for match_id, events, _ in batch])
            db.execute("COMMIT")
        except Exception as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            # a full disk, an I/O error: the store's trouble, to be told apart from a bug
            failure = StoreUnavailable(str(exc)) if isinstance(exc, sqlite3.OperationalError) else exc
            outcomes = [failure] * len(batch)
        for (match_id, events, done), outcome in zip(batch, outcomes, strict=True):
            if outcome is None:
                self._committed(match_id, events)
            if done.done():
                continue  # its caller was cancelled; the write stands (or not) all the same
            if outcome is None:
                done.set_result(None)
            else:
                done.set_exception(outcome)

    def _committed(self, match_id: str, events: Sequence[Event]) -> None:
        """Keep the match's last ``ev`` for its next append; a decided match's is forgotten (its
        log grows by a few events more at most: each reads it again)."""
        if any(isinstance(e, Decided) for e in events):
            self._last.pop(match_id, None)
        else:
            self._last[match_id] = events[-1].ev

    def _write_all(self, appends: Sequence[tuple[str, Sequence[Event]]]) -> Sequence[Conflict | None]:
        """The appends inside the open transaction, each whole or not at all.

        All in one statement first (a busy server's batch holds hundreds of
        moves), without a savepoint: in one process a conflict is next to
        impossible (the hub decides each match's events in turn), and a
        commit of one move, as at a light load, costs a sixth more with one.
        Only if one of them conflicts, the transaction starts again and each
        is written under a savepoint of its own, so that only the conflicting
        ones fail. An append whose first ``ev`` is not past the log's last
        (journaled, or in ``event_runs``, which the unique index of ``events``
        does not see) conflicts before anything is written.
        """
        stale = [a[1][0].ev <= self._last_ev(a[0]) for a in appends]
        if any(stale):
            kept = iter(self._write_all([a for a, behind in zip(appends, stale, strict=True) if not behind]))
            return [
                Conflict(a[0]) if behind else next(kept) for a, behind in zip(appends, stale, strict=True)
            ]
        try:
            self._write(appends)
            return [None] * len(appends)
        except sqlite3.IntegrityError:
            self._db.execute("ROLLBACK")
            self._db.execute("BEGIN IMMEDIATE")
        return [None if self._write_or_undo([a]) else Conflict(a[0]) for a in appends]

    def _write_or_undo(self, appends: Sequence[tuple[str, Sequence[Event]]]) -> bool:
        """Write the appends under a savepoint; on a conflict leave no trace of any and say False."""
        db = self._db
        db.execute("SAVEPOINT appends")
        try:
            self._write(appends)
        except sqlite3.IntegrityError:
            db.execute("ROLLBACK TO appends")
            return False
        finally:
            db.execute("RELEASE appends")
        return True

    def _write(self, appends: Sequence[tuple[str, Sequence[Event]]]) -> None:
        db = self._db
        db.executemany(
            "INSERT INTO events (match, ev, body) VALUES (?, ?, ?)",
            [(match_id, e.ev, event_json(e)) for match_id, events in appends for e in events],
        )
        for match_id, events in appends:
            self._write_indexes(match_id, events)

    def _write_indexes(self, match_id: str, events: Sequence[Event]) -> None:
        """A new match in the lobbies, a started one in the running ones; a decided one's result, and its indexes."""
        db = self._db
        for e in events:
            if isinstance(e, Opened):
                db.execute("INSERT INTO lobbies (match, opened_at) VALUES (?, ?)", (match_id, e.at))
            elif isinstance(e, CountdownStarted):
                db.execute("DELETE FROM lobbies WHERE match = ?", (match_id,))
                db.execute("INSERT OR IGNORE INTO running (match) VALUES (?)", (match_id,))
            elif isinstance(e, Decided):
                db.execute("DELETE FROM running WHERE match = ?", (match_id,))
                db.execute("DELETE FROM live_races WHERE match = ?", (match_id,))
                if ratings.is_rated(e.result):
                    self._rate(e.result)
                db.execute(
                    "INSERT INTO results (match, decided_at, body) VALUES (?, ?, ?)",
                    (match_id, e.at, e.result.model_dump_json()),
                )
                db.executemany(
                    "INSERT INTO player_results (player, decided_at, match) VALUES (?, ?, ?)",
                    [(s.player, e.result.decided_at, match_id) for s in e.result.seats if s.player],
                )
                for seat in e.result.seats:
                    if seat.player:
                        self._fold_in(seat.player, e.result)
                self._score_daily(e.result)

    def _score_daily(self, result: Result) -> None:
        """A ranked daily game's line on its day's board: its row, its score's count, and its time to
        finish in its score's tree (none for other results)."""
        db = self._db
        for r in board_rows(result):
            assert result.daily is not None  # a board row is a ranked daily game's
            db.execute(
                "INSERT INTO daily_scores (day, player, name, score, time_ms, match) VALUES (?, ?, ?, ?, ?, ?)",
                (result.daily, r.player, r.name, r.score, r.time_ms, r.match),
            )
            db.execute(
                "INSERT INTO daily_counts (day, score, players) VALUES (?, ?, 1)"
                " ON CONFLICT (day, score) DO UPDATE SET players = players + 1",
                (result.daily, r.score),
            )
            position = rank_tree.finish_position(r.time_ms)
            self._move_in_tree(_finish_tree(result.daily, r.score), rank_tree.FINISH, [(position, 1)])

    def _move_in_tree(self, tree: str, shape: rank_tree.Tree, moves: list[tuple[int, int]]) -> None:
        """Players coming (+1) or going (-1) at positions of a ``rank_trees`` tree, in the open transaction."""
        self._db.executemany(
            "INSERT INTO rank_trees (tree, node, players) VALUES (?, ?, ?)"
            " ON CONFLICT (tree, node) DO UPDATE SET players = players + excluded.players",
            [(tree, node, d) for node, d in shape.changes(moves).items()],
        )

    def _tree_node(self, tree: str, node: int) -> int:
        row = self._db.execute(
            "SELECT players FROM rank_trees WHERE tree = ? AND node = ?", (tree, node)
        ).fetchone()
        return 0 if row is None else int(row[0])

    def _before_in_tree(self, tree: str, shape: rank_tree.Tree, position: int) -> int:
        """The players of a ``rank_trees`` tree at positions before ``position``: at most ``bits`` nodes."""
        nodes = shape.before_nodes(position)
        (n,) = self._db.execute(
            f"SELECT coalesce(sum(players), 0) FROM rank_trees WHERE tree = ? AND node IN ({','.join('?' * len(nodes))})",
            (tree, *nodes),
        ).fetchone()
        return int(n)

    def _fold_in(self, player: str, result: Result) -> None:
        """Advance the player's totals by a result, in the transaction that stores it: once."""
        totals = self._totals(player)
        totals.add(result, player)
        self._db.execute(
            "INSERT OR REPLACE INTO player_totals (player, body) VALUES (?, ?)",
            (player, totals.model_dump_json()),
        )

    def _rate(self, result: Result) -> None:
        """Apply a rated result to both racers' ratings, in the transaction that stores it: once."""
        db, variant = self._db, result.variant
        before = {
            player: PlayerRating.model_validate_json(body)
            for player, body in db.execute(
                "SELECT player, body FROM ratings WHERE variant = ? AND player IN (?, ?)",
                (variant, *ratings.rated_players(result)),
            )
        }
        after = ratings.update(result, before)
        change = ratings.change(result, before, after)
        (seq,) = db.execute(
            "SELECT coalesce(max(seq), 0) + 1 FROM rating_log WHERE variant = ?", (variant,)
        ).fetchone()
        db.execute(
            "INSERT INTO rating_log (variant, seq, match, change) VALUES (?, ?, ?, ?)",
            (variant, seq, result.match, change.model_dump_json()),
        )
        joined = sum(
            (not rating.provisional) - (p in before and not before[p].provisional)
            for p, rating in after.items()
        )
        if joined:
            db.execute(
                "INSERT INTO board_sizes (variant, players) VALUES (?, ?)"
                " ON CONFLICT (variant) DO UPDATE SET players = players + excluded.players",
                (variant, joined),
            )
        moves = [(before[p].mu, -1) for p in after if p in before and not before[p].provisional]
        moves += [(rating.mu, 1) for rating in after.values() if not rating.provisional]
        self._move_in_tree(
            _rating_tree(variant), rank_tree.RATINGS, [(rank_tree.rating_position(mu), d) for mu, d in moves]
        )
        for player, rating in after.items():
            db.execute(
                "INSERT OR REPLACE INTO ratings (variant, player, body, mu, on_board) VALUES (?, ?, ?, ?, ?)",
                (variant, player, rating.model_dump_json(), rating.mu, not rating.provisional),
            )
            db.execute(
                "INSERT INTO rating_history (player, variant, seq, body) VALUES (?, ?, ?, ?)",
                (player, variant, seq, ratings.point(result, rating).model_dump_json()),
            )

    def _totals(self, player: str) -> Totals:
        row = self._db.execute("SELECT body FROM player_totals WHERE player = ?", (player,)).fetchone()
        return Totals() if row is None else Totals.model_validate_json(row[0])

    async def totals(self, player: str) -> Totals:
        return self._totals(player)

    async def confirm(self, match_id: str) -> None:
        """Nothing to wait for: an event is read back only after its commit."""

    async def events(self, match_id: str, after: int = 0) -> list[Event]:
        """The match's events past ``after``, in ``ev`` order: rows of ``events``, runs of moves of
        ``event_runs``, and events the journal holds (the table may hold later events already: a move's
        in the journal, then a decision's)."""
        db = self._db
        bodies = [b for (b,) in db.execute(EVENTS_AFTER, (match_id, after))]
        runs = [b for (b,) in db.execute(RUNS_AFTER, (match_id, after))]
        journaled = self._journaled.rows_of(match_id, after)
        events = decode_events("[" + ",".join([*bodies, *runs, *(body for _, body in journaled)]) + "]")
        if runs or journaled:
            events = sorted((e for e in events if e.ev > after), key=lambda e: e.ev)
        return events

    async def has_log(self, match_id: str) -> bool:
        return (
            self._db.execute("SELECT 1 FROM events WHERE match = ? LIMIT 1", (match_id,)).fetchone()
            is not None
        )  # a match's first event is never a move: it is in the table

    async def result(self, match_id: str) -> Result | None:
        row = self._db.execute("SELECT body FROM results WHERE match = ?", (match_id,)).fetchone()
        return None if row is None else Result.model_validate_json(row[0])

    async def save_replay(self, match_id: str, day: str | None, body: bytes) -> None:
        """Kept with the next flush's transaction, not in a commit of its own (one a race, at every
        decision): a replay is built from its match's log again if a killed process loses it."""
        self._replays[match_id] = (day, body)
        self._flush_soon()

    def _write_replays(self) -> None:
        """The replays waiting (``save_replay``) into the table, inside the open transaction."""
        if self._replays:
            self._db.executemany(
                "INSERT OR REPLACE INTO replays (match, daily, body) VALUES (?, ?, ?)",
                [(m, day, body) for m, (day, body) in self._replays.items()],
            )

    async def replay(self, match_id: str) -> tuple[str | None, bytes] | None:
        if match_id in self._replays:
            return self._replays[match_id]
        row = self._db.execute("SELECT daily, body FROM replays WHERE match = ?", (match_id,)).fetchone()
        return None if row is None else (row[0], bytes(row[1]))

    async def player(self, player_id: str) -> PlayerRecord | None:
        row = self._db.execute(
            "SELECT id, key_hash, name, created_at FROM players WHERE id = ?", (player_id,)
        ).fetchone()
        return None if row is None else PlayerRecord(*row)

    async def save_player(self, player: PlayerRecord) -> None:
        self._db.execute(
            "INSERT INTO players (id, key_hash, name, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET name = excluded.name",
            (player.id, player.key_hash, player.name, player.created_at),
        )

    async def setting(self, key: str, fresh: str | None = None) -> str | None:
        if fresh is not None:
            self._db.execute("INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)", (key, fresh))
        row = self._db.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    async def claim_daily(self, day: str, player: str, match: str) -> tuple[str, bool]:
        taken = self._db.execute(
            "INSERT OR IGNORE INTO daily_attempts (day, player, match) VALUES (?, ?, ?)", (day, player, match)
        ).rowcount
        return await self.daily_attempt(day, player) or match, taken == 1

    async def release_daily(self, day: str, player: str, match: str) -> None:
        self._db.execute(
            "DELETE FROM daily_attempts WHERE day = ? AND player = ? AND match = ?", (day, player, match)
        )

    async def daily_attempt(self, day: str, player: str) -> str | None:
        row = self._db.execute(
            "SELECT match FROM daily_attempts WHERE day = ? AND player = ?", (day, player)
        ).fetchone()
        return None if row is None else str(row[0])

    async def leaderboard(self, day: str, player: str | None, limit: int = 100) -> DailyBoard:
        """The top by the day's index, the counts from ``daily_counts``; the asker's rank is the lower
        scores' counts, their own score's tree for those who finished in an earlier slot, and a count
        of their own slot's faster finishers: no read grows with the day's players."""
        columns = "player, name, score, time_ms, match"
        top = [
            BoardRow(*row)
            for row in self._db.execute(
                f"SELECT {columns} FROM daily_scores WHERE day = ? ORDER BY score, time_ms LIMIT ?",
                (day, limit),
            )
        ]
        distribution = {
            int(score): int(n)
            for score, n in self._db.execute(
                "SELECT score, players FROM daily_counts WHERE day = ? ORDER BY score", (day,)
            )
        }
        you = None
        mine = self._db.execute(
            f"SELECT {columns} FROM daily_scores WHERE day = ? AND player = ?", (day, player)
        ).fetchone()
        if mine is not None:
            row = BoardRow(*mine)
            position = rank_tree.finish_position(row.time_ms)
            sooner = self._before_in_tree(_finish_tree(day, row.score), rank_tree.FINISH, position)
            (faster,) = self._db.execute(
                "SELECT count(*) FROM daily_scores WHERE day = ? AND score = ? AND time_ms < ?"
                " AND time_ms >= coalesce(?, -1)",
                (day, row.score, row.time_ms, rank_tree.finish_from(position)),
            ).fetchone()
            better = sum(n for score, n in distribution.items() if score < row.score)
            you = (better + sooner + faster + 1, row)
        return DailyBoard(top, you, distribution)

    async def daily_days(self, before: str, limit: int) -> list[tuple[str, int]]:
        rows = self._db.execute(
            "SELECT day, sum(players) FROM daily_counts WHERE day < ? GROUP BY day ORDER BY day DESC LIMIT ?",
            (before, limit),
        ).fetchall()
        return [(str(d), int(n)) for d, n in rows]

    async def player_results(
        self, player: str, before: tuple[int, str] | None = None, limit: int | None = None
    ) -> list[Result]:
        return [Result.model_validate_json(body) for body in self._player_bodies(player, before, limit)]

    async def player_games(
        self, player: str, before: tuple[int, str] | None = None, limit: int | None = None
    ) -> list[ResultSummary]:
        return [
            ResultSummary.model_validate_json(body) for body in self._player_bodies(player, before, limit)
        ]

    def _player_bodies(self, player: str, before: tuple[int, str] | None, limit: int | None) -> list[str]:
        at, match = before or (2**62, "")
        rows = self._db.execute(
            "SELECT r.body FROM player_results p JOIN results r ON r.match = p.match"
            " WHERE p.player = ? AND (p.decided_at < ? OR (p.decided_at = ? AND p.match < ?))"
            " ORDER BY p.decided_at DESC, p.match DESC LIMIT ?",
            (player, at, at, match if before else "~", -1 if limit is None else limit),
        ).fetchall()
        return [str(body) for (body,) in rows]

    async def heartbeat(self, instance: str, ttl_ms: int) -> None:
        """Nothing to say: one process at a time uses the file (see ``alive``)."""

    async def alive(self, instances: Collection[str]) -> set[str]:
        """None: a process other than the one asking can only be an earlier run, gone (a restart)."""
        return set()

    async def running(self) -> dict[str, tuple[str, ...]]:
        """No connections: every one not of the asking process is an earlier run's (see ``alive``)."""
        return {str(m): () for (m,) in self._db.execute("SELECT match FROM running")}

    async def forget_lobbies(self, opened_before: int) -> int:
        """Delete the logs of matches opened before then and never started; how many there were.

        The lobbies are found by their age's index, ``FORGET_BATCH`` at a time,
        with the event loop free between two batches.
        """
        count = 0
        while True:
            self._commit()  # appends waiting for their turn: a countdown among them keeps its match
            forgotten = self._forget_some(opened_before)
            count += forgotten
            if forgotten < FORGET_BATCH:
                return count
            await asyncio.sleep(0)

    def _forget_some(self, opened_before: int) -> int:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            gone = db.execute(
                "SELECT match FROM lobbies WHERE opened_at < ? ORDER BY opened_at LIMIT ?",
                (opened_before, FORGET_BATCH),
            ).fetchall()
            db.executemany("DELETE FROM events WHERE match = ?", gone)
            db.executemany("DELETE FROM event_runs WHERE match = ?", gone)
            db.executemany("DELETE FROM lobbies WHERE match = ?", gone)
            db.execute("COMMIT")
        except Exception as exc:
            db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.OperationalError):  # a full disk: the store's trouble
                raise StoreUnavailable(str(exc)) from exc
            raise
        for (match_id,) in gone:
            self._journaled.forget(match_id)
            self._last.pop(match_id, None)
        return len(gone)

    async def ratings(self, player: str) -> dict[str, PlayerRating]:
        rows = self._db.execute("SELECT variant, body FROM ratings WHERE player = ?", (player,))
        return {str(v): PlayerRating.model_validate_json(body) for v, body in rows}

    async def rating_history(self, player: str, variant: str, limit: int) -> list[RatingPoint]:
        rows = self._db.execute(
            "SELECT body FROM rating_history WHERE player = ? AND variant = ? ORDER BY seq DESC LIMIT ?",
            (player, variant, limit),
        ).fetchall()
        return [RatingPoint.model_validate_json(body) for (body,) in reversed(rows)]

    async def rating_change(self, variant: str, match: str) -> Rated | None:
        row = self._db.execute(
            "SELECT change FROM rating_log WHERE variant = ? AND match = ?", (variant, match)
        ).fetchone()
        return None if row is None else Rated.model_validate_json(row[0])

    async def rating_board(
        self, variant: str, start: int, limit: int, after: BoardKey | None = None
    ) -> BoardPage:
        """No read walks the board to the page (``rank_tree``): a page ``after`` a place starts from it in
        the board's index (``on_board = 1``, in its order); a page at an offset finds its slot in the
        tree and walks only that slot's players before its first row; the first row's rank is the tree's.
        The size is kept in ``board_sizes``. Asking ``on_board`` as a truth value rather than ``= 1``
        had SQLite read and sort the variant's every rating for each page."""
        size = self._db.execute("SELECT players FROM board_sizes WHERE variant = ?", (variant,)).fetchone()
        total = 0 if size is None else int(size[0])
        page = "SELECT player, mu FROM ratings WHERE variant = ?1 AND on_board = 1"
        if after is not None:
            args: tuple[object, ...] = (variant, limit + 1, *after)
            page += " AND (mu, player) < (?3, ?4) ORDER BY mu DESC, player DESC LIMIT ?2"
        elif start >= total:
            return BoardPage([], total, None)
        else:
            tree = _rating_tree(variant)
            position, before = rank_tree.RATINGS.descend(start, lambda node: self._tree_node(tree, node))
            _, hi = rank_tree.rating_bounds(position)
            args = (variant, limit + 1, start - before, hi)
            page += " AND mu < coalesce(?4, 9e999) ORDER BY mu DESC, player DESC LIMIT ?2 OFFSET ?3"
        rows = self._db.execute(
            "SELECT r.player, coalesce(p.name, 'Player'), r.body, b.mu FROM"
            f" ({page}) AS b JOIN ratings r ON r.variant = ?1 AND r.player = b.player"
            " LEFT JOIN players p ON p.id = r.player ORDER BY b.mu DESC, b.player DESC",
            args,
        ).fetchall()
        if not rows:
            return BoardPage([], total, None)
        first = start + 1 if after is None else self._ahead(variant, rows[0][3], rows[0][0]) + 1
        places = [
            BoardPlace(first + i, player, name, PlayerRating.model_validate_json(body))
            for i, (player, name, body, _) in enumerate(rows[:limit])
        ]
        last = rows[limit - 1] if len(rows) > limit else None
        return BoardPage(places, total, None if last is None else (last[3], last[0]))

    def _ahead(self, variant: str, mu: float, player: str) -> int:
        """The players ahead of (mu, player) on the board: the tree's count of those in better slots,
        and a count of those of its own slot ahead of it (a quarter of a rating point's players)."""
        position = rank_tree.rating_position(mu)
        better = self._before_in_tree(_rating_tree(variant), rank_tree.RATINGS, position)
        _, hi = rank_tree.rating_bounds(position)
        (near,) = self._db.execute(
            "SELECT count(*) FROM ratings WHERE variant = ? AND on_board = 1 AND (mu, player) > (?, ?)"
            " AND mu < coalesce(?, 9e999)",
            (variant, mu, player, hi),
        ).fetchone()
        return better + int(near)

    async def rating_rank(self, variant: str, player: str) -> int | None:
        row = self._db.execute(
            "SELECT mu FROM ratings WHERE variant = ? AND player = ? AND on_board = 1", (variant, player)
        ).fetchone()
        return None if row is None else self._ahead(variant, row[0], player) + 1

    async def rating_log(self, variant: str) -> list[str]:
        rows = self._db.execute("SELECT match FROM rating_log WHERE variant = ? ORDER BY seq", (variant,))
        return [str(m) for (m,) in rows]

    async def queue_join(self, entry: QueueEntry) -> tuple[QueueEntry, QueueEntry | None]:
        return self._queue.join(entry)

    async def queue_leave(self, player: str, conn: str) -> bool:
        return self._queue.leave(player, conn)

    async def queue_entries(self, limit: int) -> list[QueueEntry]:
        return self._queue.entries(limit)

    async def queue_places(self, players: Sequence[str]) -> dict[str, QueueEntry]:
        return self._queue.places(players)

    async def queue_claim(self, pair: tuple[QueueEntry, QueueEntry], match: str) -> bool:
        return self._queue.claim(pair, match)

    async def queue_paired(self, player: str) -> str | None:
        return self._queue.paired(player)

    async def queue_lease(self, instance: str, ttl_ms: int) -> bool:
        """Always: one process uses the store."""
        return True

    async def list_races(self, races: Sequence[LiveRace], stale: Sequence[str] = ()) -> None:
        self._commit()  # a decision waiting for its turn goes first: its race stays off the list
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(LIST_RACE, _live_rows(races))
            db.executemany("DELETE FROM live_races WHERE match = ?", [(m,) for m in stale])
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            db.execute("ROLLBACK")
            raise StoreUnavailable(str(exc)) from exc

    async def live_races(self) -> list[bytes]:
        return [body.encode() for (body,) in self._db.execute("SELECT body FROM live_races")]

    async def live_top(self, depth: int, stale_before: int) -> LiveTop:
        """Each order's first ``depth`` past the stale ones, read down its index; the stale ones by their end."""
        db = self._db
        found = dict(db.execute("SELECT match, body FROM live_races WHERE ends_at < ?", (stale_before,)))
        deep = depth + len(found)
        for order in ("started_at DESC, match DESC", "gap, started_at DESC, match DESC"):
            found.update(db.execute(f"SELECT match, body FROM live_races ORDER BY {order} LIMIT ?", (deep,)))
        (total,) = db.execute("SELECT count(*) FROM live_races").fetchone()
        return LiveTop([body.encode() for body in found.values()], total)

    async def close(self) -> None:
        self._commit()  # appends still waiting for their turn
        if self._flush_timer is not None:
            self._flush_timer.cancel()
        self._write_runs(self._journaled.matches())  # every journaled move into the table, at once
        if self._checkpointer is not None:
            self._checkpointer.stopping.set()
            await asyncio.to_thread(self._checkpointer.join)
        if self._lock_fd is not None and not len(self._journaled):  # on disk, all in the table (else its
            journal.sync_file(self._wal)  # files stay, for the next start to take in: a full disk)
        self._journaled.close()
        self._db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # and with it the lock


def _run(match_id: str, moves: Sequence[tuple[int, str]]) -> tuple[str, int, int, str]:
    """``INSERT_RUN``'s parameters for a match's moves, (``ev``, JSON) in order."""
    return match_id, moves[0][0], moves[-1][0], ",".join(body for _, body in moves)
