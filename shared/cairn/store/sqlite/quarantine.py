"""``QuarantineList`` on SQLite: one row per memory and selector."""

from __future__ import annotations

from cairn.quarantine import QuarantineEntry, SourceSelector
from cairn.store.memory.quarantine import ordered
from cairn.store.sqlite.connection import SQLiteDatabase


class SQLiteQuarantineList:
    """The list in one SQLite file; behaves exactly like ``InMemoryQuarantineList``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def add(self, entry: QuarantineEntry) -> bool:
        with self._db.transaction(write=True) as conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO quarantine (memory_id, selector, data) VALUES (?, ?, ?)",
                (entry.memory_id, str(entry.selector), entry.model_dump_json()),
            )
            return cursor.rowcount == 1

    def remove(self, memory_id: str, selector: SourceSelector) -> bool:
        with self._db.transaction(write=True) as conn:
            cursor = conn.execute(
                "DELETE FROM quarantine WHERE memory_id = ? AND selector = ?",
                (memory_id, str(selector)),
            )
            return cursor.rowcount == 1

    def entries(self, memory_id: str) -> tuple[QuarantineEntry, ...]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT data FROM quarantine WHERE memory_id = ?", (memory_id,)
            ).fetchall()
        return ordered([QuarantineEntry.model_validate_json(data) for (data,) in rows])
