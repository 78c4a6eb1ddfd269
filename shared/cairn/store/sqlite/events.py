"""``EventStore`` and ``JournalStore`` on SQLite: immutable rows, deleted for real on erase."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from cairn.cursor import decode_cursor, encode_cursor
from cairn.errors import EventNotFoundError, InvalidCursorError
from cairn.ids import new_event_id
from cairn.models import Event, EventInput, Page, Scope, SessionSummary
from cairn.paging import check_limit
from cairn.ports import DEFAULT_PAGE_SIZE, Clock, check_append_key
from cairn.store.sqlite import append_keys
from cairn.store.sqlite.chunks import forget_turn_in
from cairn.store.sqlite.codec import decode_time, encode_time
from cairn.store.sqlite.connection import SQLiteDatabase
from cairn.store.sqlite.generations import check_not_deleting

_MALFORMED = "pagination cursor is malformed; pass back the next token exactly as returned"


def _is_event_position(position: Any) -> bool:
    """A list ``[event_timestamp text, event_id]``, as ``list_events`` writes it."""
    return (
        isinstance(position, list)
        and len(position) == 2
        and all(isinstance(part, str) for part in position)
    )


def _string_position(scope_key: str, query: dict[str, Any], cursor: str | None) -> str | None:
    if cursor is None:
        return None
    position = decode_cursor(scope_key, query, cursor)
    if not isinstance(position, str):
        raise InvalidCursorError(_MALFORMED)
    return position


def insert_event(conn: sqlite3.Connection, scope: Scope, event: EventInput, now: datetime) -> Event:
    """Insert ``event`` as appended at ``now`` inside the caller's write transaction."""
    stored = Event(
        **{name: getattr(event, name) for name in EventInput.model_fields},
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        event_id=new_event_id(event.event_timestamp),
        created_at=now,
    )
    conn.execute(
        "INSERT INTO events (memory_id, actor_id, session_id, event_id, event_timestamp,"
        " branch, created_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            scope.memory_id,
            scope.actor_id,
            stored.session_id,
            stored.event_id,
            encode_time(stored.event_timestamp),
            stored.branch.name if stored.branch else None,
            encode_time(stored.created_at),
            stored.model_dump_json(),
        ),
    )
    return stored


class SQLiteEventStore:
    """Events in one SQLite file; behaves exactly like ``InMemoryEventStore``."""

    def __init__(self, db: SQLiteDatabase, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def append(
        self,
        scope: Scope,
        event: EventInput,
        *,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Event:
        """Store one immutable event and return it with its id (a repeat under its key:
        the first one)."""
        check_append_key(idempotency_key)
        now = self._clock.now()
        with self._db.transaction(write=True) as conn:
            if deletion_fence:
                check_not_deleting(conn, scope.memory_id)
            known = append_keys.stored_under(conn, scope, idempotency_key, now)
            if known is not None:
                return known
            stored = insert_event(conn, scope, event, now)
            append_keys.remember(conn, scope, idempotency_key, stored)
            return stored

    def get_event(self, scope: Scope, session_id: str, event_id: str) -> Event:
        """The event; ``EventNotFoundError`` if it is not in this scope and session."""
        with self._db.transaction(write=False) as conn:
            row = conn.execute(
                "SELECT data FROM events WHERE memory_id = ? AND actor_id = ?"
                " AND session_id = ? AND event_id = ?",
                (scope.memory_id, scope.actor_id, session_id, event_id),
            ).fetchone()
        if row is None:
            raise EventNotFoundError(event_id)
        return Event.model_validate_json(row[0])

    def list_events(
        self,
        scope: Scope,
        session_id: str,
        *,
        branch: str | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        cursor: str | None = None,
    ) -> Page[Event]:
        """The session's events in (timestamp, event id) order."""
        check_limit(limit)
        query: dict[str, Any] = {"session": session_id, "branch": branch}
        after = None
        if cursor is not None:
            after = decode_cursor(str(scope), query, cursor)
            if not _is_event_position(after):
                raise InvalidCursorError(_MALFORMED)
        sql = (
            "SELECT event_timestamp, data FROM events WHERE memory_id = ? AND actor_id = ?"
            " AND session_id = ?"
        )
        params: list[Any] = [scope.memory_id, scope.actor_id, session_id]
        if branch is not None:
            sql += " AND branch = ?"
            params.append(branch)
        if after is not None:
            sql += " AND (event_timestamp, event_id) > (?, ?)"
            params += after
        sql += " ORDER BY event_timestamp, event_id LIMIT ?"
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(sql, (*params, limit + 1)).fetchall()
        events = tuple(Event.model_validate_json(data) for _, data in rows[:limit])
        next_cursor = None
        if len(rows) > limit:
            position = [rows[limit - 1][0], events[-1].event_id]
            next_cursor = encode_cursor(str(scope), query, position)
        return Page[Event](items=events, next_cursor=next_cursor)

    def list_sessions(
        self, scope: Scope, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[SessionSummary]:
        """The actor's sessions that hold events, by session id."""
        check_limit(limit)
        after = _string_position(str(scope), {}, cursor)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT session_id, MIN(created_at) FROM events"
                " WHERE memory_id = ? AND actor_id = ? AND session_id > ?"
                " GROUP BY session_id ORDER BY session_id LIMIT ?",
                (scope.memory_id, scope.actor_id, after or "", limit + 1),
            ).fetchall()
        sessions = tuple(
            SessionSummary(actor_id=scope.actor_id, session_id=sid, created_at=decode_time(at))
            for sid, at in rows[:limit]
        )
        more = len(rows) > limit
        next_cursor = encode_cursor(str(scope), {}, sessions[-1].session_id) if more else None
        return Page[SessionSummary](items=sessions, next_cursor=next_cursor)

    def list_actors(
        self, memory_id: str, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[str]:
        """Actor ids with events in this memory, sorted."""
        check_limit(limit)
        scope_key = f"memory:{memory_id}"
        after = _string_position(scope_key, {}, cursor)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT DISTINCT actor_id FROM events WHERE memory_id = ? AND actor_id > ?"
                " ORDER BY actor_id LIMIT ?",
                (memory_id, after or "", limit + 1),
            ).fetchall()
        actors = tuple(str(actor) for (actor,) in rows[:limit])
        next_cursor = encode_cursor(scope_key, {}, actors[-1]) if len(rows) > limit else None
        return Page[str](items=actors, next_cursor=next_cursor)

    def delete_event(self, scope: Scope, session_id: str, event_id: str) -> None:
        """Delete one event (its bytes overwritten); ``EventNotFoundError`` if absent."""
        with self._db.transaction(write=True) as conn:
            deleted = conn.execute(
                "DELETE FROM events WHERE memory_id = ? AND actor_id = ?"
                " AND session_id = ? AND event_id = ?",
                (scope.memory_id, scope.actor_id, session_id, event_id),
            ).rowcount
            if deleted:  # no summary outlives its turn: same transaction
                forget_turn_in(conn, scope, session_id, event_id)
        if not deleted:
            raise EventNotFoundError(event_id)
        self._db.checkpoint()

    def erase_scope(self, scope: Scope) -> int:
        """Delete every event of the actor, content overwritten in the file; returns the count."""
        with self._db.transaction(write=True) as conn:
            deleted = conn.execute(
                "DELETE FROM events WHERE memory_id = ? AND actor_id = ?",
                (scope.memory_id, scope.actor_id),
            ).rowcount
            append_keys.forget_scope(conn, scope)
        self._db.checkpoint()
        return int(deleted)
