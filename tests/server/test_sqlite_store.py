"""The embedded store's group commit and its checkpoints off the event loop."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from server.errors import StoreUnavailable
from server.match.events import decode_events, event_json, with_ev
from server.stats import fold
from server.store import Conflict
from server.store.sqlite import SqliteStore
from tests.store_events import decided, disk_full, moved, opening, reopened_without, result, started


async def test_a_conflict_in_a_group_commit_fails_only_its_own_append(tmp_path: Path) -> None:
    store = SqliteStore(str(tmp_path / "grip.db"))
    for m in ("AAAAAAAA", "CCCCCCCC"):
        await store.append(m, 0, opening(m))  # ev 1, 2
    # one loop turn, one transaction: a stale lone move; a batch whose second event is
    # stale, so its first must be undone too (or the last append would conflict)
    results = await asyncio.gather(
        store.append("AAAAAAAA", 2, [moved(3, 0, 1)]),
        store.append("AAAAAAAA", 2, [moved(3, 0, 2)]),
        store.append("CCCCCCCC", 2, [moved(3, 0, 1), moved(2, 0, 2)]),
        store.append("CCCCCCCC", 2, [moved(3, 0, 1)]),
        return_exceptions=True,
    )
    assert [type(r) for r in results] == [int, Conflict, Conflict, int]
    assert [(e.ev, e.kind) for e in await store.events("AAAAAAAA", 2)] == [(3, "moved")]
    assert [getattr(e, "seq", None) for e in await store.events("AAAAAAAA", 2)] == [1]
    assert [(e.ev, e.kind) for e in await store.events("CCCCCCCC")] == [
        (1, "opened"),
        (2, "seated"),
        (3, "moved"),
    ]
    await store.close()


async def test_the_wal_is_checkpointed_without_a_commit_doing_it(tmp_path: Path) -> None:
    path = tmp_path / "grip.db"
    store = SqliteStore(str(path))
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    for ev in range(3, 400):
        await store.append("AAAAAAAA", ev - 1, [moved(ev, 0, ev - 2)])

    def checkpointed_rows() -> int:
        """Rows readable from the database file alone (a copy of it without its WAL)."""
        copy = tmp_path / "copy.db"
        copy.write_bytes(path.read_bytes())
        db = sqlite3.connect(copy)
        try:
            runs = db.execute("SELECT body FROM event_runs").fetchall()  # the moves, a row a match's run
            moves = sum(len(decode_events(f"[{body}]")) for (body,) in runs)
            return moves + int(db.execute("SELECT count(*) FROM events").fetchone()[0])
        except sqlite3.DatabaseError:
            return 0
        finally:
            db.close()

    async def wait_for_checkpoint() -> None:
        while checkpointed_rows() < 399:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(wait_for_checkpoint(), 10)
    await store.close()


async def test_a_steady_stream_of_moves_does_not_grow_the_wal_for_good(tmp_path: Path) -> None:
    """PASSIVE checkpoints alone never start the WAL over while commits keep coming: it only grew.

    The moves reach the WAL a flush at a time (the journal's), a few MB each
    here: the WAL starts over again and again, never past the reset size and
    a flush or two.
    """
    path = tmp_path / "grip.db"
    wal = Path(f"{path}-wal")
    store = SqliteStore(str(path), checkpoint_every_s=0.01, wal_reset_bytes=1 << 20)
    matches = [c * 8 for c in "ACDEFGHJKM"]
    for m in matches:
        await store.append(m, 0, opening(m))

    async def stream_until_the_wal_started_over(times: int) -> int:
        ev, largest, size, shrunk = 3, 0, 0, 0
        while shrunk < times:
            await asyncio.gather(*(store.append(m, ev - 1, [moved(ev, 0, ev - 2)]) for m in matches))
            ev += 1
            size, was = wal.stat().st_size, size
            shrunk += size < was
            largest = max(largest, size)
        return largest

    largest = await asyncio.wait_for(stream_until_the_wal_started_over(3), 60)
    assert largest < 16 << 20
    assert len(await store.events("AAAAAAAA")) > 2  # nothing lost on the way
    await store.close()


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own priority is a Linux thing")
async def test_the_checkpoints_run_at_the_lowest_cpu_priority(tmp_path: Path) -> None:
    """So they take the event loop's idle time instead of a share of its core."""
    ours = os.getpriority(os.PRIO_PROCESS, 0)  # this thread's, the event loop's
    store = SqliteStore(str(tmp_path / "grip.db"))
    checkpointer = store._checkpointer
    assert checkpointer is not None and checkpointer.native_id is not None
    stat = Path(f"/proc/self/task/{checkpointer.native_id}/stat")

    def nice() -> int:
        return int(stat.read_text().rsplit(")", 1)[1].split()[16])  # field 19 of proc(5)

    async def lowered() -> None:
        while nice() != 19:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(lowered(), 5)
    assert os.getpriority(os.PRIO_PROCESS, 0) == ours  # that thread alone
    await store.close()


@pytest.mark.parametrize("path", ["", ":memory:"])
async def test_a_memory_store_needs_no_checkpoints(path: str) -> None:
    store = SqliteStore(path)
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    assert len(await store.events("AAAAAAAA")) == 2
    await store.close()


FIRST_LAYOUT = """CREATE TABLE events (
    match TEXT NOT NULL, ev INTEGER NOT NULL, body TEXT NOT NULL,
    PRIMARY KEY (match, ev)
) WITHOUT ROWID"""


async def test_a_data_file_of_the_first_layout_is_migrated_whole(tmp_path: Path) -> None:
    path = tmp_path / "grip.db"
    old = sqlite3.connect(path)
    old.execute(FIRST_LAYOUT)
    written = [*opening("AAAAAAAA"), moved(3, 0, 1), *opening("CCCCCCCC")]
    old.executemany(
        "INSERT INTO events VALUES (?, ?, ?)",
        [("AAAAAAAA" if i < 3 else "CCCCCCCC", e.ev, event_json(e)) for i, e in enumerate(written)],
    )
    old.commit()
    old.close()

    store = SqliteStore(str(path))
    assert await store.events("AAAAAAAA") == written[:3]
    assert await store.events("CCCCCCCC") == written[3:]
    await store.append("AAAAAAAA", 3, [moved(4, 0, 2)])
    with pytest.raises(Conflict):  # (match, ev) is still unique
        await store.append("AAAAAAAA", 3, [moved(4, 1, 1)])
    await store.close()

    check = sqlite3.connect(path)
    tables = [r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    layout = check.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    check.close()
    assert "events_v1" not in tables and "WITHOUT ROWID" not in layout.upper()
    store = SqliteStore(str(path))  # a second start finds nothing to migrate
    assert [e.ev for e in await store.events("AAAAAAAA")] == [1, 2, 3, 4]
    await store.close()


async def test_a_data_file_from_before_the_totals_gets_them_from_its_results(tmp_path: Path) -> None:
    path = str(tmp_path / "grip.db")
    store = SqliteStore(path)
    played = [result(m, ["ann", "bob"], [3 + i, 9], 1000 + i) for i, m in enumerate(("ACDEFGHJ", "CDEFGHJK"))]
    played.append(result("DEFGHJKM", ["ann"], [40], 1005))
    for r in played:
        await store.append(r.match, 0, [*opening(r.match), decided(r)])
    kept = {pid: await store.totals(pid) for pid in ("ann", "bob")}
    assert kept["ann"] == fold("ann", played) and kept["bob"] == fold("bob", played)
    await store.close()
    store = reopened_without(path, "player_totals")
    assert {pid: await store.totals(pid) for pid in ("ann", "bob")} == kept
    await store.close()


async def test_the_data_file_and_its_wal_are_the_owners_alone(tmp_path: Path) -> None:
    """It holds the daily secret: no other user of the machine may read it."""
    path = tmp_path / "data" / "grip.db"
    store = SqliteStore(str(path))
    await store.setting("daily_secret", "s" * 64)
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    files = [path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}.lock")]
    assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {f.name: "0o600" for f in files}
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    await store.close()
    path.chmod(0o644)  # made by an earlier version
    store = SqliteStore(str(path))
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    await store.close()


def _journal_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}-events.*"))


async def test_journaled_moves_are_read_back_in_order_with_the_events_committed_after_them(
    tmp_path: Path,
) -> None:
    """A move waits in the journal while a later drop is committed to the table at once."""
    store = SqliteStore(str(tmp_path / "grip.db"))
    m = await started(store, "AAAAAAAA")
    last = m.ev
    await store.append(m.id, last, [moved(last + 1, 0, 1)])
    dropped = [with_ev(e, e.ev + 1) for e in m.decide_disconnect(1, "inst1-1", 5)]  # after the move
    await store.append(m.id, last + 1, dropped)
    logged = await store.events(m.id, last)
    assert [(e.ev, e.kind) for e in logged] == [(last + 1, "moved"), (last + 2, "disconnected")]
    assert [e.ev for e in await store.events(m.id)] == list(range(1, last + 3))
    await store.close()


async def test_moves_a_killed_process_journaled_are_in_the_log_when_it_starts_again(tmp_path: Path) -> None:
    """Killed before any flush: the journal alone holds the moves, and the next start takes them in."""
    path = tmp_path / "grip.db"
    script = f"""
import asyncio, os, sys
sys.path[:0] = [{str(Path.cwd())!r}, {str(Path.cwd() / "tests")!r}]
from server.store.sqlite import SqliteStore
from tests.store_events import moved, opening

async def main():
    store = SqliteStore({str(path)!r}, checkpoint_every_s=3600)
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    for ev in range(3, 40):
        await store.append("AAAAAAAA", ev - 1, [moved(ev, 0, ev - 2)])
    os._exit(0)  # as a SIGKILL would leave it: no flush, no close

asyncio.run(main())
"""
    done = await asyncio.create_subprocess_exec(sys.executable, "-c", script)
    assert await done.wait() == 0
    assert _journal_files(path), "the moves were journaled"
    store = SqliteStore(str(path))
    assert [getattr(e, "seq", None) for e in await store.events("AAAAAAAA", 2)] == list(range(1, 38))
    assert not _journal_files(path), "taken in, then removed"
    await store.close()
    store = SqliteStore(str(path))  # and read from the table from then on
    assert len(await store.events("AAAAAAAA")) == 39
    await store.close()


async def test_a_journal_line_cut_off_is_not_read_nor_what_follows(tmp_path: Path) -> None:
    path = tmp_path / "grip.db"
    store = SqliteStore(str(path))
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    await store.close()
    whole = f"AAAAAAAA 3 {event_json(moved(3, 0, 1))}\n"
    cut = f"AAAAAAAA 4 {event_json(moved(4, 0, 2))}"[:40]
    Path(f"{path}-events.7").write_text(whole + cut)
    store = SqliteStore(str(path))
    assert [e.ev for e in await store.events("AAAAAAAA")] == [1, 2, 3]
    await store.close()


async def test_a_journal_file_taken_in_twice_gives_each_move_once(tmp_path: Path) -> None:
    """A file whose moves the table holds (written, the file not yet removed when the process died)."""
    path = tmp_path / "grip.db"
    store = SqliteStore(str(path))
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    for ev in (3, 4):
        await store.append("AAAAAAAA", ev - 1, [moved(ev, 0, ev - 2)])
    await store.close()  # in the table now
    lines = "".join(f"AAAAAAAA {ev} {event_json(moved(ev, 0, ev - 2))}\n" for ev in (3, 4, 5))
    Path(f"{path}-events.0").write_text(lines)
    store = SqliteStore(str(path))
    assert [e.ev for e in await store.events("AAAAAAAA")] == [1, 2, 3, 4, 5]
    await store.close()


async def test_the_journal_files_go_once_their_moves_are_in_the_table(tmp_path: Path) -> None:
    path = tmp_path / "grip.db"
    store = SqliteStore(str(path), checkpoint_every_s=0.05)
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    await store.append("AAAAAAAA", 2, [moved(3, 0, 1)])
    first = _journal_files(path)
    assert len(first) == 1

    async def gone() -> None:
        while set(first) & set(_journal_files(path)):
            await asyncio.sleep(0.05)

    await asyncio.wait_for(gone(), 10)  # a flush, then the checkpointer's sync of the WAL
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT ev, last FROM event_runs").fetchall() == [(3, 3)]
    assert [e.ev for e in await store.events("AAAAAAAA")] == [1, 2, 3]
    await store.close()


async def test_moves_the_table_refuses_stay_readable_and_go_in_once_it_takes_them(tmp_path: Path) -> None:
    """A full disk (the table refuses writes): the journal keeps the moves, read back, written later."""
    path = tmp_path / "grip.db"
    store = SqliteStore(str(path))
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    store._db.execute("PRAGMA query_only = 1")  # type: ignore[attr-defined]
    await store.append("AAAAAAAA", 2, [moved(3, 0, 1)])
    await asyncio.sleep(0)
    store._flush()  # type: ignore[attr-defined]  # as its timer would: refused
    assert [e.ev for e in await store.events("AAAAAAAA")] == [1, 2, 3]
    store._db.execute("PRAGMA query_only = 0")  # type: ignore[attr-defined]
    await store.close()  # written now
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT ev, last FROM event_runs").fetchall() == [(3, 3)]
    assert not _journal_files(path)


async def test_on_a_full_disk_a_move_is_refused_whole_and_taken_once_there_is_room(tmp_path: Path) -> None:
    path = tmp_path / "grip.db"
    store = SqliteStore(str(path))
    await store.append("AAAAAAAA", 0, opening("AAAAAAAA"))
    await store.append("AAAAAAAA", 2, [moved(3, 0, 1)])
    with disk_full(store), pytest.raises(StoreUnavailable):
        await store.append("AAAAAAAA", 3, [moved(4, 0, 2), moved(5, 0, 3)])
    assert [e.ev for e in await store.events("AAAAAAAA")] == [1, 2, 3]  # nothing of the refused one
    await store.append("AAAAAAAA", 3, [moved(4, 0, 2)])  # sent again
    lines = b"".join(p.read_bytes() for p in _journal_files(path)).splitlines(keepends=True)
    assert [line.split(b" ")[1] for line in lines] == [b"3", b"4"] and all(
        line.endswith(b"\n") for line in lines
    )
    await store.close()
    store = SqliteStore(str(path))
    assert [e.ev for e in await store.events("AAAAAAAA")] == [1, 2, 3, 4]
    await store.close()
