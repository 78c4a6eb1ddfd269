"""``ChunkStore`` on SQLite: one row per chunk, checked and written in one write transaction."""

from __future__ import annotations

import sqlite3

from cairn.chunks import Chunk, admit, summarising
from cairn.errors import ChunkNotFoundError
from cairn.models import Scope
from cairn.store.sqlite.connection import SQLiteDatabase

_SCOPE = "memory_id = ? AND actor_id = ?"


class SQLiteChunkStore:
    """Chunks in one SQLite file; behaves exactly like ``InMemoryChunkStore``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def put(self, scope: Scope, chunk: Chunk) -> Chunk:
        """Check and insert in one ``BEGIN IMMEDIATE`` transaction, so two writers of the same
        level cannot both pass the contiguity check."""
        with self._db.transaction(write=True) as conn:
            key = (scope.memory_id, scope.actor_id, chunk.session_id)
            stored = _one(
                conn, f"{_SCOPE} AND session_id = ? AND chunk_id = ?", (*key, chunk.chunk_id)
            )
            last = _one(
                conn,
                f"{_SCOPE} AND session_id = ? AND level = ? ORDER BY from_seq DESC LIMIT 1",
                (*key, chunk.level),
            )
            below = _many(
                conn,
                f"{_SCOPE} AND session_id = ? AND chunk_id IN "
                f"({', '.join('?' for _ in chunk.children)})",
                (*key, *chunk.children),
            )
            found = admit(scope, chunk, stored=stored, last_of_level=last, below=below)
            if found is not None:
                return found
            conn.execute(
                "INSERT INTO chunks (memory_id, actor_id, session_id, level, from_seq, to_seq,"
                " chunk_id, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    *key,
                    chunk.level,
                    chunk.from_seq,
                    chunk.to_seq,
                    chunk.chunk_id,
                    chunk.model_dump_json(),
                ),
            )
        return chunk

    def get_chunk(self, scope: Scope, session_id: str, chunk_id: str) -> Chunk:
        with self._db.transaction(write=False) as conn:
            found = _one(
                conn,
                f"{_SCOPE} AND session_id = ? AND chunk_id = ?",
                (scope.memory_id, scope.actor_id, session_id, chunk_id),
            )
        if found is None:
            raise ChunkNotFoundError(chunk_id)
        return found

    def list_chunks(
        self, scope: Scope, session_id: str, *, level: int | None = None
    ) -> tuple[Chunk, ...]:
        where = f"{_SCOPE} AND session_id = ?"
        params: tuple[object, ...] = (scope.memory_id, scope.actor_id, session_id)
        if level is not None:
            where += " AND level = ?"
            params = (*params, level)
        with self._db.transaction(write=False) as conn:
            return tuple(_many(conn, where + " ORDER BY level, from_seq", params))

    def chunk_sessions(self, scope: Scope) -> tuple[str, ...]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT DISTINCT session_id FROM chunks WHERE memory_id = ? AND actor_id = ?"
                " ORDER BY session_id",
                (scope.memory_id, scope.actor_id),
            ).fetchall()
        return tuple(str(session_id) for (session_id,) in rows)

    def forget_turn(self, scope: Scope, session_id: str, event_id: str) -> int:
        with self._db.transaction(write=True) as conn:
            deleted = forget_turn_in(conn, scope, session_id, event_id)
        if deleted:
            self._db.checkpoint()
        return deleted

    def erase_session(self, scope: Scope, session_id: str) -> int:
        """Delete the session's chunks, content overwritten in the file; returns the count."""
        return self._delete(f"{_SCOPE} AND session_id = ?", (*_key(scope), session_id))

    def erase_scope(self, scope: Scope) -> int:
        """Delete the actor's chunks, content overwritten in the file; returns the count."""
        return self._delete(_SCOPE, _key(scope))

    def _delete(self, where: str, params: tuple[str, ...]) -> int:
        with self._db.transaction(write=True) as conn:
            deleted = conn.execute(f"DELETE FROM chunks WHERE {where}", params).rowcount  # noqa: S608
        self._db.checkpoint()
        return int(deleted)


def forget_turn_in(conn: sqlite3.Connection, scope: Scope, session_id: str, event_id: str) -> int:
    """``ChunkStore.forget_turn`` inside the caller's write transaction (``delete_event``'s)."""
    key = (*_key(scope), session_id)
    gone = summarising(_many(conn, f"{_SCOPE} AND session_id = ?", key), event_id)
    for chunk in gone:
        conn.execute(
            f"DELETE FROM chunks WHERE {_SCOPE} AND session_id = ? AND chunk_id = ?",  # noqa: S608
            (*key, chunk.chunk_id),
        )
    return len(gone)


def _key(scope: Scope) -> tuple[str, str]:
    return scope.memory_id, scope.actor_id


def _one(conn: sqlite3.Connection, where: str, params: tuple[object, ...]) -> Chunk | None:
    row = conn.execute(f"SELECT data FROM chunks WHERE {where}", params).fetchone()  # noqa: S608
    return None if row is None else Chunk.model_validate_json(row[0])


def _many(conn: sqlite3.Connection, where: str, params: tuple[object, ...]) -> list[Chunk]:
    rows = conn.execute(f"SELECT data FROM chunks WHERE {where}", params).fetchall()  # noqa: S608
    return [Chunk.model_validate_json(data) for (data,) in rows]
