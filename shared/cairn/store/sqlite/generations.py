"""Record generations on SQLite: what tells a recall index, in any process, that it is stale.

Every committed record write moves its scope's row in ``record_generations`` inside the write's
own transaction (``bump``) to a new random value. The epoch is ``PRAGMA data_version`` (it
moves whenever another connection, in this process or another, commits to the file; 13 µs to
read) paired with the count of record writes this connection has begun, so a recall that finds
the epoch unchanged needs no query at all: https://sqlite.org/pragma.html#pragma_data_version
"""

from __future__ import annotations

import sqlite3

from cairn.errors import MemoryDeletingError
from cairn.models import Scope
from cairn.store.sqlite.connection import SQLiteDatabase

# A positive 62-bit random value (the table checks generation >= 1).
_RANDOM = "((random() & 4611686018427387903) + 1)"


def bump(conn: sqlite3.Connection, db: SQLiteDatabase, scope: Scope) -> None:
    """Move ``scope``'s generation on one record write; call inside the write transaction,
    lock held. The new value is random (62 bits of SQLite's ``random()``), never one more: a
    persisted index snapshot is stamped with the generation it was built at, and a file put
    back from a backup, or deleted and made again, would repeat a counter's values with other
    records behind them. Only equality is ever asked of a generation."""
    db.record_writes += 1
    conn.execute(
        "INSERT INTO record_generations (memory_id, actor_id, generation)"  # noqa: S608
        f" VALUES (?, ?, {_RANDOM}) ON CONFLICT (memory_id, actor_id)"
        f" DO UPDATE SET generation = {_RANDOM}",
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


def check_not_deleting(conn: sqlite3.Connection, memory_id: str) -> None:
    """``MemoryDeletingError`` if DeleteMemory marked the memory; call inside the write's
    own transaction (the deletion fence, ``MemoryConfigStore.mark_deleting``)."""
    marked = conn.execute(
        "SELECT 1 FROM memory_deletions WHERE memory_id = ?", (memory_id,)
    ).fetchone()
    if marked is not None:
        raise MemoryDeletingError(memory_id)


class SQLiteHistoryGenerations:
    """``HistoryGenerations`` of one SQLite file: the ``history_generations`` row that the
    triggers of migration 0014 move with every event and chunk written or deleted."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def generation(self, scope: Scope) -> int:
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT generation FROM history_generations WHERE memory_id = ? AND actor_id = ?",
                (scope.memory_id, scope.actor_id),
            ).fetchone()
        return int(row[0]) if row is not None else 0
