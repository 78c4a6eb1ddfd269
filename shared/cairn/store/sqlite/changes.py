"""The record change feed on SQLite (``record_changes``, migration 0008; 0017 admits the
``re-embedded`` kind).

Writers call ``log_writes`` / ``log_erased`` / ``log_reembedded`` inside the transaction of the
write they describe, so the feed never lists an uncommitted write and never misses a committed
one; AUTOINCREMENT keeps sequences strictly increasing, never reused, in commit order (one
writer at a time).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime

from cairn.models import RecordVersion, Scope, VersionRef
from cairn.ports import ChangeKind, RecordChange, change_kind
from cairn.store.sqlite.codec import decode_time, encode_time
from cairn.store.sqlite.connection import SQLiteDatabase

MAX_CHANGES = 1000
_INSERT = (
    "INSERT INTO record_changes (memory_id, actor_id, record_id, version, kind, at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)


def log_writes(
    conn: sqlite3.Connection, scope: Scope, versions: Sequence[RecordVersion], at: datetime
) -> None:
    """One change per version written; call inside the write transaction."""
    rows = [
        (scope.memory_id, scope.actor_id, v.record_id, v.version, change_kind(v), encode_time(at))
        for v in versions
    ]
    conn.executemany(_INSERT, rows)


def log_erased(
    conn: sqlite3.Connection, scope: Scope, heads: Iterable[tuple[str, int]], at: datetime
) -> None:
    """One ``erased`` change per record, at its head's version; inside the erase transaction."""
    kind: ChangeKind = "erased"
    rows = [
        (scope.memory_id, scope.actor_id, rid, version, kind, encode_time(at))
        for rid, version in heads
    ]
    conn.executemany(_INSERT, rows)


def log_reembedded(
    conn: sqlite3.Connection, scope: Scope, refs: Iterable[VersionRef], at: datetime
) -> None:
    """One ``re-embedded`` change per version given a vector; inside the re-embedding
    transaction (migration 0017 admits the kind)."""
    kind: ChangeKind = "re-embedded"
    rows = [
        (scope.memory_id, scope.actor_id, ref.record_id, ref.version, kind, encode_time(at))
        for ref in refs
    ]
    conn.executemany(_INSERT, rows)


class SQLiteChangeFeed:
    """``cairn.ports.StoreChangeFeed`` over one SQLite file (any process's writes): one
    sequence for the whole file, so a scope's changes are its rows in that order."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def changes_after(
        self, sequence: int = 0, *, limit: int = 100, memory_id: str | None = None
    ) -> tuple[RecordChange, ...]:
        if not 1 <= limit <= MAX_CHANGES:
            raise ValueError(f"limit must be 1-{MAX_CHANGES}, not {limit}")
        query = (
            "SELECT sequence, memory_id, actor_id, record_id, version, kind, at"
            " FROM record_changes WHERE sequence > ?"
        )
        values: list[object] = [sequence]
        if memory_id is not None:
            query += " AND memory_id = ?"
            values.append(memory_id)
        query += " ORDER BY sequence LIMIT ?"
        values.append(limit)
        return self._read(query, values)

    def scope_changes(
        self, scope: Scope, after: int = 0, *, limit: int = 100
    ) -> tuple[RecordChange, ...]:
        if not 1 <= limit <= MAX_CHANGES:
            raise ValueError(f"limit must be 1-{MAX_CHANGES}, not {limit}")
        query = (
            "SELECT sequence, memory_id, actor_id, record_id, version, kind, at"
            " FROM record_changes WHERE memory_id = ? AND sequence > ? AND actor_id = ?"
            " ORDER BY sequence LIMIT ?"
        )
        return self._read(query, [scope.memory_id, after, scope.actor_id, limit])

    def last_sequence(self, scope: Scope) -> int:
        query = "SELECT max(sequence) FROM record_changes WHERE memory_id = ? AND actor_id = ?"
        with self._db.transaction(write=False) as conn:
            (last,) = conn.execute(query, (scope.memory_id, scope.actor_id)).fetchone()
        return int(last) if last is not None else 0

    def _read(self, query: str, values: Sequence[object]) -> tuple[RecordChange, ...]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(query, values).fetchall()
        return tuple(
            RecordChange(
                sequence=row[0],
                memory_id=row[1],
                actor_id=row[2],
                record_id=row[3],
                version=row[4],
                kind=row[5],
                at=decode_time(row[6]),
            )
            for row in rows
        )
