"""The embedded store's journal: an event is durable once one ``write`` has put it in a file.

A SQLite commit of a lone move cost a fixed 25-30 us beside its row (BEGIN,
the WAL's frame header and page, COMMIT) and a loop turn to wait for, and
each move's row and index entry landed on a page of its own among the
hundreds of races in play; at a light load, where a turn carries a move or
two, the append was a fifth of the server's time a move (docs/benchmarks.md,
"The journal"). So ``SqliteStore`` writes a batch of events (moves, and all
but the few that change the tables kept beside the logs) as lines here, as
safe as its commit with ``synchronous=NORMAL``: in the operating system's
hands once the ``write`` returns, so a killed process loses nothing, and
synced to the disk within about a second (``sync``). It writes them into its
table later, each match's as one row (``SqliteStore._flush``); until then a
read of a log takes them from here (``rows_of``).

The journal is a series of files, ``<data file>-events.<n>``, each a line per
event (``match ev json``). A flush first starts a new file (``freeze``), and
a file whose rows are all in the table is removed only once the table's WAL
holding them has been synced (``sync``, on the checkpointer's thread), so an
operating-system crash cannot lose what neither file still holds. A server
that starts on its data reads what files an earlier run left (``recover``)
and writes their rows into the table before anything else.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import StoreUnavailable

log = logging.getLogger(__name__)

#: One event of a log: its match, its ``ev`` and its JSON.
Row = tuple[str, int, str]


@dataclass(eq=False, slots=True)
class _File:
    """One file of the journal: where, its descriptor (None in memory) and the rows of it not yet in the table."""

    path: str | None
    fd: int | None
    size: int = 0
    rows: int = 0
    synced: bool = True  # no write since its last fsync


class Journal:
    """The events not yet in the table: in files for safety, in memory for reads.

    Used from the event loop's thread, but for ``sync``, which the
    checkpointer's thread calls: the two share the files under ``_lock``.
    ``base`` None keeps the rows in memory only (an in-memory database).
    """

    def __init__(self, base: str | None) -> None:
        self.base = base
        #: The rows not yet in the table, by match, in ``ev`` order: (``ev``, JSON, the file holding it).
        self._of: dict[str, list[tuple[int, str, _File]]] = {}
        self._count = 0
        self._files: list[_File] = []  # oldest first; the last is the one written to
        self._removable: list[_File] = []  # all of their rows in the table: removed once the WAL is synced
        self._lock = threading.Lock()
        self._next = max(_numbers(base), default=-1) + 1

    def __len__(self) -> int:
        return self._count

    # ------------------------------------------------------------- the loop's side

    def write(self, match_id: str, rows: Sequence[tuple[int, str]]) -> None:
        """Make ``rows`` (``ev``, JSON) of ``match_id`` durable, in one ``write``; StoreUnavailable if not.

        A write that fails part way is cut back off the file, so its lines
        never reach a later reader half written.
        """
        f = self._files[-1] if self._files else self._open()
        if f.fd is not None:
            data = "".join(f"{match_id} {ev} {body}\n" for ev, body in rows).encode()
            try:
                written = 0
                while written < len(data):
                    written += os.write(f.fd, data[written:])
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(f.fd, f.size)
                raise StoreUnavailable(f"the journal: {exc}") from None
            f.size += len(data)
            f.synced = False
        kept = self._of.get(match_id)
        if kept is None:
            kept = self._of[match_id] = []
        kept.extend((ev, body, f) for ev, body in rows)
        f.rows += len(rows)
        self._count += len(rows)

    def last_ev(self, match_id: str) -> int | None:
        """The ``ev`` of the match's last row here (None: the table holds all of its log)."""
        kept = self._of.get(match_id)
        return kept[-1][0] if kept else None

    def rows_of(self, match_id: str, after: int = 0) -> list[tuple[int, str]]:
        """The match's rows here past ``after`` (``ev``, JSON), in order."""
        kept = self._of.get(match_id)
        return [(ev, body) for ev, body, _ in kept if ev > after] if kept else []

    def matches(self) -> list[str]:
        """The matches with rows here, the longest-waiting first."""
        return list(self._of)

    def freeze(self) -> list[str]:
        """Start a new file for the rows to come; the matches with rows now (``matches``), to write them."""
        if self._files and self._files[-1].size:
            done = self._files[-1]
            self._open()
            if not done.rows:  # every row of it went into the table with a match's later ones
                self._retire(done)
        return self.matches()

    def written(self, match_id: str, n: int) -> None:
        """The match's ``n`` oldest rows are in the table now: forgotten, and so is a file once all of it is."""
        kept = self._of[match_id]
        for _, _, f in kept[:n]:
            f.rows -= 1
            if not f.rows and f is not self._files[-1]:
                self._retire(f)
        del kept[:n]
        if not kept:
            del self._of[match_id]
        self._count -= n

    def forget(self, match_id: str) -> None:
        """The match's log is gone (a lobby forgotten): so are its rows here."""
        kept = self._of.get(match_id)
        if kept:
            self.written(match_id, len(kept))

    def close(self) -> None:
        """Close every file; remove them all if every row is in the table (its WAL synced by the caller).

        Else they stay for the next start to take in (``recover``).
        """
        with self._lock:
            files, self._removable = [*self._removable, *self._files], []
            self._files.clear()
            for f in files:
                _close(f)
        if not self._count:
            for f in files:
                _remove(f.path)

    # ------------------------------------------------------------- the checkpointer's side

    def sync(self, wal: str) -> None:
        """Sync every file still needed, then the table's WAL, then remove the files it makes needless.

        The files retired before the WAL's sync are removed after it: their
        rows were committed before, so the synced WAL (or the database file a
        checkpoint copied them to, synced before the WAL starts over) holds them.
        """
        with self._lock:
            fds = [os.dup(f.fd) for f in self._files if f.fd is not None and not f.synced]
            for f in self._files:
                f.synced = True
            removable, self._removable = self._removable, []
        try:
            for fd in fds:
                os.fsync(fd)
        finally:
            for fd in fds:
                os.close(fd)
        if removable:
            sync_file(wal)
            for f in removable:
                _remove(f.path)

    # ------------------------------------------------------------- files

    def _open(self) -> _File:
        if self.base is None:
            f = _File(None, None)
        else:
            path = f"{self.base}-events.{self._next}"
            self._next += 1
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_TRUNC, 0o600)
            except OSError as exc:
                raise StoreUnavailable(f"the journal: {exc}") from None
            f = _File(path, fd)
        with self._lock:
            self._files.append(f)
        return f

    def _retire(self, f: _File) -> None:
        with self._lock:  # closed under the lock: ``sync`` must never dup a descriptor's number reused
            self._files.remove(f)
            self._removable.append(f)
            _close(f)


def recover(base: str) -> tuple[list[Row], list[str]]:
    """The rows of the journal files an earlier run left at ``base``, oldest first, and the files.

    A file is read up to its first line that is not whole (a write cut off
    by an operating-system crash, never acknowledged).
    """
    rows: list[Row] = []
    paths = [f"{base}-events.{n}" for n in sorted(_numbers(base))]
    for path in paths:
        rows.extend(_read(path))
    return rows, paths


def remove(paths: Iterable[str]) -> None:
    for path in paths:
        _remove(path)


def sync_file(path: str) -> None:
    """fsync the file at ``path``, if there is one."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _read(path: str) -> list[Row]:
    rows: list[Row] = []
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            try:
                if not line.endswith(b"\n"):
                    raise ValueError("cut off")
                match_id, ev, body = line[:-1].decode().split(" ", 2)
                rows.append((match_id, int(ev), body))
            except ValueError as exc:
                log.warning("%s: line %d is not whole (%s); what follows is not read", path, number, exc)
                break
    return rows


def _numbers(base: str | None) -> list[int]:
    if base is None:
        return []
    folder, prefix = Path(base).parent, f"{Path(base).name}-events."
    if not folder.is_dir():
        return []
    names = [p.name for p in folder.iterdir() if p.name.startswith(prefix)]
    return [int(n[len(prefix) :]) for n in names if n[len(prefix) :].isdigit()]


def _close(f: _File) -> None:
    if f.fd is not None:
        with contextlib.suppress(OSError):
            os.close(f.fd)
        f.fd = None


def _remove(path: str | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)
