"""The embedded store: one SQLite file in WAL mode.

Calls run on the event loop's thread: a WAL commit with synchronous=NORMAL
is tens of microseconds, cheaper than a thread hop, and it survives a killed
process (the WAL is in the OS's hands once the commit returns); only a power
cut can take the last commits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from ..match import Decided, Event, decode_events
from ..protocol import Result
from . import Conflict, PlayerRecord

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    match TEXT NOT NULL, ev INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (match, ev)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
    match TEXT PRIMARY KEY, decided_at INTEGER NOT NULL, body TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS players (
    id TEXT PRIMARY KEY, key_hash TEXT NOT NULL, name TEXT NOT NULL, created_at INTEGER NOT NULL
);
"""


class SqliteStore:

    def __init__(self, path: str) -> None:
        if path not in ("", ":memory:"):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path or ":memory:", isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)

    async def ping(self) -> bool:
        try:
            self._db.execute("SELECT 1")
        except sqlite3.Error:
            return False
        return True

    async def append(self, match_id: str, expected_ev: int, events: Sequence[Event]) -> None:
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT INTO events (match, ev, body) VALUES (?, ?, ?)",
                [(match_id, e.ev, e.model_dump_json()) for e in events],
            )
            for e in events:
                if isinstance(e, Decided):
                    db.execute(
                        "INSERT INTO results (match, decided_at, body) VALUES (?, ?, ?)",
                        (match_id, e.at, e.result.model_dump_json()),
                    )
            db.execute("COMMIT")
        except sqlite3.IntegrityError:
            db.execute("ROLLBACK")
            raise Conflict(match_id) from None
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    async def events(self, match_id: str, after: int = 0) -> list[Event]:
        rows = self._db.execute(
            "SELECT body FROM events WHERE match = ? AND ev > ? ORDER BY ev", (match_id, after)
        ).fetchall()
        return decode_events("[" + ",".join(r[0] for r in rows) + "]")

    async def result(self, match_id: str) -> Result | None:
        row = self._db.execute("SELECT body FROM results WHERE match = ?", (match_id,)).fetchone()
        return None if row is None else Result.model_validate_json(row[0])

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

    async def close(self) -> None:
        self._db.close()
