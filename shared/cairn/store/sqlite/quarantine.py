"""``QuarantineList`` on SQLite: one row per memory and selector.

A recall reads the memory's list every time, so ``entries`` keeps what it last read per memory
under the file's quarantine epoch: ``PRAGMA data_version`` (it moves whenever another
connection, in this process or another, commits to the file) paired with the count of list
writes this connection has begun (``SQLiteDatabase.quarantine_writes``; a commit on this
connection does not move ``data_version``). The epoch is read before the rows, so a write
landing in between is seen as a newer epoch next time (a read too many, never a stale list):
an add or a remove is visible at once to the next read, here and in any other process.
"""

from __future__ import annotations

from cairn.quarantine import QuarantineEntry, SourceSelector
from cairn.store.memory.quarantine import ordered
from cairn.store.sqlite.connection import SQLiteDatabase

# Memories whose list is kept; past it every kept list is dropped (and read again).
_KEPT_MEMORIES = 64


class SQLiteQuarantineList:
    """The list in one SQLite file; behaves exactly like ``InMemoryQuarantineList``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db
        # Per memory: its list and the epoch read before it (one assignment: no lock needed).
        self._kept: dict[str, tuple[tuple[int, int], tuple[QuarantineEntry, ...]]] = {}

    def add(self, entry: QuarantineEntry) -> bool:
        with self._db.transaction(write=True) as conn:
            self._db.quarantine_writes += 1
            cursor = conn.execute(
                "INSERT OR IGNORE INTO quarantine (memory_id, selector, data) VALUES (?, ?, ?)",
                (entry.memory_id, str(entry.selector), entry.model_dump_json()),
            )
            return cursor.rowcount == 1

    def remove(self, memory_id: str, selector: SourceSelector) -> bool:
        with self._db.transaction(write=True) as conn:
            self._db.quarantine_writes += 1
            cursor = conn.execute(
                "DELETE FROM quarantine WHERE memory_id = ? AND selector = ?",
                (memory_id, str(selector)),
            )
            return cursor.rowcount == 1

    def entries(self, memory_id: str) -> tuple[QuarantineEntry, ...]:
        epoch = self._db.quarantine_epoch()
        kept = self._kept.get(memory_id)
        if kept is not None and kept[0] == epoch:
            return kept[1]
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT data FROM quarantine WHERE memory_id = ?", (memory_id,)
            ).fetchall()
        found = ordered([QuarantineEntry.model_validate_json(data) for (data,) in rows])
        if len(self._kept) >= _KEPT_MEMORIES:
            self._kept = {}
        self._kept[memory_id] = (epoch, found)
        return found
