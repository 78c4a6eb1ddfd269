"""``JournalStore`` on SQLite: recall journal entries filed as links of their scope's hash
chain (``cairn.journal_chain``), the entry and the scope's head in one transaction."""

from __future__ import annotations

import sqlite3

from cairn.errors import JournalNotFoundError
from cairn.journal_chain import link_json
from cairn.models import JournalEntry, Scope
from cairn.ports import ChainHead
from cairn.store.sqlite.codec import encode_time
from cairn.store.sqlite.connection import SQLiteDatabase


class SQLiteJournalStore:
    """Recall journal entries in one SQLite file; behaves exactly like ``InMemoryJournalStore``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def put(self, entry: JournalEntry) -> None:
        """File the entry as the next link of its scope's chain (the first filing of an id
        stands).

        Committed without an fsync: see ``cairn.store.sqlite.connection`` for what a power
        loss can take (a process crash takes nothing once this returns)."""
        memory_id, actor_id = entry.memory_id, entry.actor_id
        with self._db.transaction(write=True, fsync=False) as conn:
            # Whether the id is filed, and the chain's head, in one statement.
            filed, sequence, digest = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM journal WHERE memory_id = ?1 AND actor_id = ?2"
                " AND journal_id = ?3), h.sequence, h.digest FROM (SELECT 1)"
                " LEFT JOIN journal_heads AS h ON h.memory_id = ?1 AND h.actor_id = ?2",
                (memory_id, actor_id, entry.journal_id),
            ).fetchone()
            if filed:
                return
            before = (
                None if sequence is None else ChainHead(sequence=int(sequence), digest=str(digest))
            )
            stored, head = link_json(entry, before)
            conn.execute(
                "INSERT INTO journal (memory_id, actor_id, journal_id, created_at, data, sequence)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    memory_id,
                    actor_id,
                    entry.journal_id,
                    encode_time(entry.created_at),
                    stored,
                    head.sequence,
                ),
            )
            conn.execute(
                "INSERT INTO journal_heads (memory_id, actor_id, sequence, digest)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (memory_id, actor_id)"
                " DO UPDATE SET sequence = excluded.sequence, digest = excluded.digest",
                (memory_id, actor_id, head.sequence, head.digest),
            )

    def get(self, scope: Scope, journal_id: str) -> JournalEntry:
        """The entry; ``JournalNotFoundError`` if it is not in this scope."""
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT data FROM journal WHERE memory_id = ? AND actor_id = ? AND journal_id = ?",
                (scope.memory_id, scope.actor_id, journal_id),
            ).fetchone()
        if row is None:
            raise JournalNotFoundError(journal_id)
        return JournalEntry.model_validate_json(row[0])

    def chain(self, scope: Scope, *, after: int = 0, limit: int = 100) -> tuple[JournalEntry, ...]:
        """The chained entries after ``after``, in sequence order (the stored row's sequence:
        an entry moved in the table shows up out of place)."""
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT data FROM journal WHERE memory_id = ? AND actor_id = ? AND sequence > ?"
                " ORDER BY sequence LIMIT ?",
                (scope.memory_id, scope.actor_id, max(after, 0), limit),
            ).fetchall()
        return tuple(JournalEntry.model_validate_json(row[0]) for row in rows)

    def head(self, scope: Scope) -> ChainHead | None:
        with self._db.transaction(write=False) as conn:
            return _head(conn, scope)

    def erase_scope(self, scope: Scope) -> int:
        """Delete every journal entry of the scope and its chain head, content overwritten;
        returns the count."""
        with self._db.transaction(write=True) as conn:
            deleted = conn.execute(
                "DELETE FROM journal WHERE memory_id = ? AND actor_id = ?",
                (scope.memory_id, scope.actor_id),
            ).rowcount
            conn.execute(
                "DELETE FROM journal_heads WHERE memory_id = ? AND actor_id = ?",
                (scope.memory_id, scope.actor_id),
            )
        self._db.checkpoint()
        return int(deleted)


def _head(conn: sqlite3.Connection, scope: Scope) -> ChainHead | None:
    row = conn.execute(
        "SELECT sequence, digest FROM journal_heads WHERE memory_id = ? AND actor_id = ?",
        (scope.memory_id, scope.actor_id),
    ).fetchone()
    return ChainHead(sequence=int(row[0]), digest=str(row[1])) if row is not None else None
