"""Record generations on SQLite: what tells a recall index, in any process, that it is stale.

Every committed record write bumps its scope's row in ``record_generations`` inside the write's
own transaction (``bump``). The epoch is ``PRAGMA data_version`` (it moves whenever another
connection, in this process or another, commits to the file; 13 µs to read) paired with the
count of record writes this connection has begun, so a recall that finds the epoch unchanged
needs no query at all: https://sqlite.org/pragma.html#pragma_data_version
"""

from __future__ import annotations

import sqlite3

from cairn.models import Scope
from cairn.store.sqlite.connection import SQLiteDatabase


def bump(conn: sqlite3.Connection, db: SQLiteDatabase, scope: Scope) -> None:
    """Count one record write in ``scope``; call inside the write transaction, lock held."""
    db.record_writes += 1
    conn.execute(
        "INSERT INTO record_generations (memory_id, actor_id, generation) VALUES (?, ?, 1)"
        " ON CONFLICT (memory_id, actor_id) DO UPDATE SET generation = generation + 1",
        (scope.memory_id, scope.actor_id),
    )


class SQLiteRecordGenerations:
    """``RecordGenerations`` of one SQLite file, read through the backend's connection."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def epoch(self) -> tuple[int, int]:
        # The count is read under the same lock a writer holds from BEGIN to COMMIT, so a write
        # this process committed before the call always shows in it.
        return self._db.data_version()

    def generation(self, scope: Scope) -> int:
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT generation FROM record_generations WHERE memory_id = ? AND actor_id = ?",
                (scope.memory_id, scope.actor_id),
            ).fetchone()
        return int(row[0]) if row is not None else 0


def erasures(conn: sqlite3.Connection, scope: Scope) -> int:
    """The scope's count of committed erasures (``cairn.erasure_fence``)."""
    row = conn.execute(
        "SELECT erasures FROM record_erasures WHERE memory_id = ? AND actor_id = ?",
        (scope.memory_id, scope.actor_id),
    ).fetchone()
    return int(row[0]) if row is not None else 0


def count_erasure(conn: sqlite3.Connection, scope: Scope) -> None:
    """Count one erasure in ``scope``; call inside the erasure's write transaction."""
    conn.execute(
        "INSERT INTO record_erasures (memory_id, actor_id, erasures) VALUES (?, ?, 1)"
        " ON CONFLICT (memory_id, actor_id) DO UPDATE SET erasures = erasures + 1",
        (scope.memory_id, scope.actor_id),
    )
