"""Idempotency keys of appends on SQLite (migration 0007), inside the append's transaction.

The key is looked up and remembered in the same write transaction that inserts the event, so a
repeat can never slip between the two; expired keys are purged by the next keyed append.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from cairn.errors import EventNotFoundError
from cairn.models import Event, Scope
from cairn.ports import APPEND_KEY_KEPT_FOR
from cairn.store.sqlite.codec import encode_time


def stored_under(
    conn: sqlite3.Connection, scope: Scope, key: str | None, now: datetime
) -> Event | None:
    """The event an unexpired ``key`` stored; ``EventNotFoundError`` if it was deleted."""
    if key is None:
        return None
    found = conn.execute(
        "SELECT k.event_id, e.data FROM append_keys k LEFT JOIN events e"
        " ON e.memory_id = k.memory_id AND e.actor_id = k.actor_id"
        " AND e.session_id = k.session_id AND e.event_id = k.event_id"
        " WHERE k.memory_id = ? AND k.actor_id = ? AND k.append_key = ? AND k.expires_at > ?",
        (scope.memory_id, scope.actor_id, key, encode_time(now)),
    ).fetchone()
    if found is None:
        return None
    event_id, data = found
    if data is None:
        raise EventNotFoundError(str(event_id))
    return Event.model_validate_json(data)


def remember(conn: sqlite3.Connection, scope: Scope, key: str | None, event: Event) -> None:
    """Remember that ``key`` stored ``event`` (replacing an expired entry), purging expired."""
    if key is None:
        return
    conn.execute("DELETE FROM append_keys WHERE expires_at <= ?", (encode_time(event.created_at),))
    conn.execute(
        "INSERT OR REPLACE INTO append_keys"
        " (memory_id, actor_id, append_key, session_id, event_id, expires_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            scope.memory_id,
            scope.actor_id,
            key,
            event.session_id,
            event.event_id,
            encode_time(event.created_at + APPEND_KEY_KEPT_FOR),
        ),
    )


def forget_scope(conn: sqlite3.Connection, scope: Scope) -> None:
    conn.execute(
        "DELETE FROM append_keys WHERE memory_id = ? AND actor_id = ?",
        (scope.memory_id, scope.actor_id),
    )
