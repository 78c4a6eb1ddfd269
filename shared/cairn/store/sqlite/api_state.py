"""``MemoryConfigStore``, ``IdempotencyStore`` and ``RecordDirectory`` on SQLite (migration 0002).

They behave exactly like the in-memory reference (``cairn.store.memory.api_state``); the
conformance suite runs both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from cairn.cursor import decode_cursor, encode_cursor
from cairn.erasure_fence import check_fence, placement_scope
from cairn.errors import (
    ConflictError,
    InvalidCursorError,
    MemoryNameTakenError,
    MemoryNotFoundError,
    RecordNotFoundError,
)
from cairn.memories import MemoryConfig
from cairn.models import Page, Scope
from cairn.paging import check_limit
from cairn.ports import DEFAULT_PAGE_SIZE, IdempotencyClaim, RecordPlacement
from cairn.store.sqlite.codec import encode_time
from cairn.store.sqlite.connection import SQLiteDatabase
from cairn.store.sqlite.generations import check_not_deleting
from cairn.store.sqlite.generations import erasures as count_of_erasures
from cairn.store.sqlite.listing import namespace_filter


class SQLiteMemoryConfigStore:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def create(self, memory: MemoryConfig) -> None:
        """Store a new memory; ``MemoryNameTakenError`` if an existing memory has its name."""
        with self._db.transaction(write=True) as conn:
            taken = conn.execute("SELECT 1 FROM memories WHERE name = ?", (memory.name,)).fetchone()
            if taken is not None:
                raise MemoryNameTakenError(memory.name)
            conn.execute(
                "INSERT INTO memories (memory_id, name, revision, data) VALUES (?, ?, ?, ?)",
                (memory.memory_id, memory.name, memory.revision, memory.model_dump_json()),
            )

    def get(self, memory_id: str) -> MemoryConfig:
        """The memory's configuration; ``MemoryNotFoundError`` if there is none."""
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT data FROM memories WHERE memory_id = ?", (memory_id,)
            ).fetchone()
        if row is None:
            raise MemoryNotFoundError(memory_id)
        return MemoryConfig.model_validate_json(row[0])

    def replace(self, memory: MemoryConfig, *, expected_revision: int) -> None:
        """Overwrite the memory if it still has ``expected_revision``; else ``ConflictError``."""
        with self._db.transaction(write=True) as conn:
            row = conn.execute(
                "SELECT revision FROM memories WHERE memory_id = ?", (memory.memory_id,)
            ).fetchone()
            if row is None:
                raise MemoryNotFoundError(memory.memory_id)
            if row[0] != expected_revision:
                raise ConflictError(
                    f"memory {memory.memory_id!r} changed while this update was prepared "
                    f"(revision {row[0]}, expected {expected_revision}); retry it"
                )
            conn.execute(
                "UPDATE memories SET revision = ?, data = ? WHERE memory_id = ?",
                (memory.revision, memory.model_dump_json(), memory.memory_id),
            )

    def mark_deleting(self, memory_id: str) -> None:
        """Set the memory's deletion mark for good (``memory_deletions``)."""
        with self._db.transaction(write=True) as conn:
            conn.execute(
                "INSERT OR IGNORE INTO memory_deletions (memory_id) VALUES (?)", (memory_id,)
            )

    def delete(self, memory_id: str) -> None:
        """Forget the memory's configuration; ``MemoryNotFoundError`` if there is none."""
        with self._db.transaction(write=True) as conn:
            deleted = conn.execute(
                "DELETE FROM memories WHERE memory_id = ?", (memory_id,)
            ).rowcount
        if not deleted:
            raise MemoryNotFoundError(memory_id)

    def list_memories(
        self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[MemoryConfig]:
        """Every memory, by memory id."""
        check_limit(limit)
        after = ""
        if cursor is not None:
            position = decode_cursor("memories", {}, cursor)
            if not isinstance(position, str):
                raise InvalidCursorError(
                    "pagination cursor is malformed; pass back the next token exactly as returned"
                )
            after = position
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT data FROM memories WHERE memory_id > ? ORDER BY memory_id LIMIT ?",
                (after, limit + 1),
            ).fetchall()
        memories = tuple(MemoryConfig.model_validate_json(data) for (data,) in rows[:limit])
        more = len(rows) > limit
        next_cursor = encode_cursor("memories", {}, memories[-1].memory_id) if more else None
        return Page[MemoryConfig](items=memories, next_cursor=next_cursor)


class SQLiteIdempotencyStore:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def claim(
        self,
        key: str,
        fingerprint: str,
        *,
        now: datetime,
        expires_at: datetime,
        durable: bool = True,
    ) -> IdempotencyClaim | None:
        """Claim ``key`` and return ``None``, or return the unexpired claim already there
        (``durable=False``: committed without an fsync of its own, at ``synchronous=NORMAL``;
        the next fsynced commit -- the request's own write -- makes it durable too)."""
        with self._db.transaction(write=True, fsync=durable) as conn:
            # Expired claims are dead weight; dropping them here keeps the table bounded.
            conn.execute(
                "DELETE FROM idempotency_claims WHERE expires_at <= ?", (encode_time(now),)
            )
            row = conn.execute(
                "SELECT data FROM idempotency_claims WHERE key = ?", (key,)
            ).fetchone()
            if row is not None:
                return IdempotencyClaim.model_validate_json(row[0])
            claim = IdempotencyClaim(key=key, fingerprint=fingerprint, expires_at=expires_at)
            conn.execute(
                "INSERT INTO idempotency_claims (key, expires_at, data) VALUES (?, ?, ?)",
                (key, encode_time(expires_at), claim.model_dump_json()),
            )
        return None

    def complete(
        self,
        key: str,
        outcome: Mapping[str, Any],
        *,
        expires_at: datetime,
        durable: bool = True,
    ) -> None:
        """Record what the claimed request produced, kept until ``expires_at``."""
        with self._db.transaction(write=True, fsync=durable) as conn:
            row = conn.execute(
                "SELECT data FROM idempotency_claims WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                return
            claim = IdempotencyClaim.model_validate_json(row[0]).model_copy(
                update={"outcome": json.loads(json.dumps(dict(outcome))), "expires_at": expires_at}
            )
            conn.execute(
                "UPDATE idempotency_claims SET expires_at = ?, data = ? WHERE key = ?",
                (encode_time(expires_at), claim.model_dump_json(), key),
            )

    def release(self, key: str) -> None:
        """Drop the claim; no-op if absent."""
        with self._db.transaction(write=True) as conn:
            conn.execute("DELETE FROM idempotency_claims WHERE key = ?", (key,))


class SQLiteRecordDirectory:
    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def place(
        self,
        memory_id: str,
        placements: Sequence[RecordPlacement],
        *,
        erasures: int | None = None,
        deletion_fence: bool = False,
    ) -> None:
        """Record where these records live; placing a record again overwrites its entry. With
        ``erasures``, only if no erasure of their scope committed since; with
        ``deletion_fence``, only in an unmarked memory (both in the same transaction)."""
        with self._db.transaction(write=True) as conn:
            if deletion_fence and placements:
                check_not_deleting(conn, memory_id)
            if erasures is not None and placements:
                scope = placement_scope(memory_id, (p.actor_id for p in placements))
                check_fence(erasures, count_of_erasures(conn, scope))
            conn.executemany(
                "INSERT OR REPLACE INTO record_placements (memory_id, record_id, actor_id,"
                " namespace) VALUES (?, ?, ?, ?)",
                [(memory_id, p.record_id, p.actor_id, p.namespace) for p in placements],
            )

    def locate(self, memory_id: str, record_id: str) -> RecordPlacement:
        """Where the record lives; ``RecordNotFoundError`` if it was never placed here."""
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT actor_id, namespace FROM record_placements"
                " WHERE memory_id = ? AND record_id = ?",
                (memory_id, record_id),
            ).fetchone()
        if row is None:
            raise RecordNotFoundError(record_id)
        return RecordPlacement(record_id=record_id, actor_id=row[0], namespace=row[1])

    def actors(self, memory_id: str, *, namespace_prefix: str | None = None) -> tuple[str, ...]:
        """Actors, sorted, holding a placed record under the namespace prefix."""
        where, params = namespace_filter(namespace_prefix)
        with self._db.transaction(write=False) as conn:
            # `where` is fixed SQL from namespace_filter; every value is a bound parameter.
            rows = conn.execute(
                "SELECT DISTINCT c.actor_id FROM record_placements AS c WHERE c.memory_id = ?"  # noqa: S608
                + where
                + " ORDER BY c.actor_id",
                (memory_id, *params),
            ).fetchall()
        return tuple(str(actor) for (actor,) in rows)

    def erase_scope(self, scope: Scope) -> int:
        """Forget every placement in the scope; returns how many were forgotten."""
        with self._db.transaction(write=True) as conn:
            deleted = conn.execute(
                "DELETE FROM record_placements WHERE memory_id = ? AND actor_id = ?",
                (scope.memory_id, scope.actor_id),
            ).rowcount
        return int(deleted)
