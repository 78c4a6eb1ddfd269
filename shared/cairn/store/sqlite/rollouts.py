"""``RolloutStore`` on SQLite (migration 0003): counters and rollouts beside the events.

The append, its counting and any claim are one ``BEGIN IMMEDIATE`` transaction, which holds the
file's write lock from the first read: concurrent writers, threads or processes, are serialised
by SQLite itself, so each sees the counters the previous one left and a firing is claimed once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from cairn.errors import RolloutNotFoundError
from cairn.models import Event, EventInput, Scope
from cairn.paging import check_limit
from cairn.ports import DEFAULT_PAGE_SIZE, Clock, check_append_batch, check_append_key
from cairn.rollout.consumption import check_staged_evidence
from cairn.rollout.index import (
    EVIDENCE_ID_PREFIX,
    Appended,
    EventRef,
    Rollout,
    RolloutKind,
    RolloutState,
    SessionCounters,
    TriggerPolicy,
    advance,
    appended,
    claim_closed_session,
    claim_idle_session,
    count_append,
)
from cairn.store.sqlite import append_keys
from cairn.store.sqlite.append_batch import append_batch
from cairn.store.sqlite.codec import decode_time, encode_time
from cairn.store.sqlite.connection import SQLiteDatabase
from cairn.store.sqlite.events import insert_event
from cairn.store.sqlite.generations import check_not_deleting
from cairn.store.sqlite.rollout_rows import COUNTERS, save_rollout
from cairn.store.sqlite.rollout_rows import save_counters as _save_counters

_COUNTERS = COUNTERS
_ROLLOUT = "SELECT data FROM rollouts WHERE memory_id = ? AND actor_id = ? AND rollout_id = ?"


# Evidence rollout ids are exactly those in [EVIDENCE_ID_PREFIX, _EVIDENCE_END): "." follows "-".
_EVIDENCE_END = EVIDENCE_ID_PREFIX[:-1] + "."
_KIND_FILTERS = {
    None: ("", ()),
    "evidence": (" AND rollout_id >= ? AND rollout_id < ?", (EVIDENCE_ID_PREFIX, _EVIDENCE_END)),
    "extraction": (
        " AND (rollout_id < ? OR rollout_id >= ?)",
        (EVIDENCE_ID_PREFIX, _EVIDENCE_END),
    ),
}


class SQLiteRolloutStore:
    """The rollout index in one SQLite file; behaves exactly like ``InMemoryRolloutStore``."""

    def __init__(self, db: SQLiteDatabase, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    def append_counted(
        self,
        scope: Scope,
        event: EventInput,
        *,
        policy: TriggerPolicy | None,
        idempotency_key: str | None = None,
        deletion_fence: bool = False,
    ) -> Appended:
        """Append and count in one write transaction; a fired trigger's claim is returned."""
        check_append_key(idempotency_key)
        now = self._clock.now()
        with self._db.transaction(write=True) as conn:
            if deletion_fence:
                check_not_deleting(conn, scope.memory_id)
            known = append_keys.stored_under(conn, scope, idempotency_key, now)
            if known is not None:
                return Appended(event=known)
            stored = insert_event(conn, scope, event, now)
            append_keys.remember(conn, scope, idempotency_key, stored)
            if policy is None:
                return Appended(event=stored)
            found = conn.execute(_COUNTERS, (*_scope(scope), stored.session_id)).fetchone()
            current = SessionCounters.model_validate_json(found[0]) if found else None
            counted = count_append(current, stored, policy)
            if counted is None:
                return Appended(event=stored)
            counters, claim = counted
            _save_counters(conn, counters)
            if claim is not None:
                save_rollout(conn, claim)
        return appended(stored, current, counters, claim)

    def append_counted_batch(
        self,
        scope: Scope,
        events: Sequence[EventInput],
        *,
        policy: TriggerPolicy | None,
        idempotency_keys: Sequence[str | None] | None = None,
    ) -> tuple[Appended, ...]:
        """The whole batch in one write transaction (``cairn.store.sqlite.append_batch``)."""
        check_append_batch(events, idempotency_keys)
        keys = list(idempotency_keys or [None] * len(events))
        now = self._clock.now()
        with self._db.transaction(write=True) as conn:
            return append_batch(conn, scope, events, keys, policy, now)

    def events_for(
        self, scope: Scope, session_id: str, refs: Sequence[EventRef]
    ) -> tuple[Event, ...]:
        """The named events of the session, in the order given; deleted ones are absent."""
        wanted = [ref.event_id for ref in refs]
        found: dict[str, Event] = {}
        with self._db.transaction(write=False) as conn:
            for start in range(0, len(wanted), 500):  # stay under SQLite's bound-variable limit
                chunk = wanted[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                sql = (
                    "SELECT event_id, data FROM events WHERE memory_id = ? AND actor_id = ?"  # noqa: S608 - only '?' placeholders are interpolated
                    f" AND session_id = ? AND event_id IN ({marks})"
                )
                rows = conn.execute(sql, (*_scope(scope), session_id, *chunk)).fetchall()
                found.update((eid, Event.model_validate_json(data)) for eid, data in rows)
        return tuple(found[eid] for eid in wanted if eid in found)

    def counters(self, scope: Scope, session_id: str) -> SessionCounters | None:
        """The session's counters; ``None`` if it never counted a message."""
        with self._db.transaction(write=False) as conn:
            found = conn.execute(_COUNTERS, (*_scope(scope), session_id)).fetchone()
        return SessionCounters.model_validate_json(found[0]) if found else None

    def get(self, scope: Scope, rollout_id: str) -> Rollout:
        """The rollout; ``RolloutNotFoundError`` if it is not in this scope."""
        with self._db.transaction(write=False) as conn:
            return _read_rollout(conn, scope, rollout_id)

    def find_in_any_scope(self, rollout_id: str) -> tuple[Rollout, ...]:
        """The rollouts with this id, whatever their scope (ids are random: normally one).
        Not a port method: the embedded staging tidy-up needs it (``cairn.local.leftovers``)."""
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT data FROM rollouts WHERE rollout_id = ?", (rollout_id,)
            ).fetchall()
        return tuple(Rollout.model_validate_json(data) for (data,) in rows)

    def list_pending(
        self, scope: Scope, *, limit: int = DEFAULT_PAGE_SIZE, kind: RolloutKind | None = None
    ) -> tuple[Rollout, ...]:
        """The scope's unconsumed rollouts (of ``kind``), oldest claim first."""
        check_limit(limit)
        condition, bounds = _KIND_FILTERS[kind]
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT data FROM rollouts WHERE memory_id = ? AND actor_id = ?"  # noqa: S608 - constant conditions, '?' placeholders only
                f" AND state <> 'consumed'{condition} ORDER BY rollout_id LIMIT ?",
                (*_scope(scope), *bounds, limit),
            ).fetchall()
        return tuple(Rollout.model_validate_json(data) for (data,) in rows)

    def add_staged(self, scope: Scope, rollout: Rollout) -> Rollout:
        """Insert the staged evidence rollout unless its id is there; return what is stored."""
        check_staged_evidence(scope, rollout)
        with self._db.transaction(write=True) as conn:
            found = conn.execute(_ROLLOUT, (*_scope(scope), rollout.rollout_id)).fetchone()
            if found is not None:
                return Rollout.model_validate_json(found[0])
            save_rollout(conn, rollout)
        return rollout

    def mark(
        self,
        scope: Scope,
        rollout_id: str,
        state: RolloutState,
        *,
        now: datetime,
        staging_key: str | None = None,
        reason: str | None = None,
    ) -> Rollout:
        """Move the rollout as ``advance`` plans, read and written in one transaction."""
        with self._db.transaction(write=True) as conn:
            current = _read_rollout(conn, scope, rollout_id)
            moved = advance(current, state, now, staging_key=staging_key, reason=reason)
            if moved is None:
                return current
            save_rollout(conn, moved)
            return moved

    def claim_idle(self, now: datetime, *, limit: int = DEFAULT_PAGE_SIZE) -> tuple[Rollout, ...]:
        """Claim the sessions idle at ``now``, oldest deadline first, in one transaction."""
        check_limit(limit)
        claims: list[Rollout] = []
        with self._db.transaction(write=True) as conn:
            rows = conn.execute(
                "SELECT data FROM session_counters WHERE idle_due_at <= ?"
                " ORDER BY idle_due_at, memory_id, actor_id, session_id LIMIT ?",
                (encode_time(now), limit),
            ).fetchall()
            for (data,) in rows:
                claimed = claim_idle_session(SessionCounters.model_validate_json(data), now)
                if claimed is None:
                    continue
                counters, claim = claimed
                _save_counters(conn, counters)
                save_rollout(conn, claim)
                claims.append(claim)
        return tuple(claims)

    def claim_session(self, scope: Scope, session_id: str, now: datetime) -> Rollout | None:
        """Claim the session's pending messages, read and written in one transaction."""
        with self._db.transaction(write=True) as conn:
            found = conn.execute(_COUNTERS, (*_scope(scope), session_id)).fetchone()
            if found is None:
                return None
            claimed = claim_closed_session(SessionCounters.model_validate_json(found[0]), now)
            if claimed is None:
                return None
            counters, claim = claimed
            _save_counters(conn, counters)
            save_rollout(conn, claim)
        return claim

    def list_due(self, now: datetime, *, limit: int = DEFAULT_PAGE_SIZE) -> tuple[Rollout, ...]:
        """Rollouts of every scope due at ``now``, oldest due first."""
        check_limit(limit)
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT data FROM rollouts WHERE due_at <= ? ORDER BY due_at, rollout_id LIMIT ?",
                (encode_time(now), limit),
            ).fetchall()
        return tuple(Rollout.model_validate_json(data) for (data,) in rows)

    def next_due(self) -> datetime | None:
        """The earliest idle deadline or rollout due time, from the two indexed columns."""
        with self._db.transaction(write=False) as conn:
            (found,) = conn.execute(
                "SELECT MIN(due) FROM (SELECT MIN(idle_due_at) AS due FROM session_counters"
                " UNION ALL SELECT MIN(due_at) FROM rollouts)"
            ).fetchone()
        return decode_time(found) if found is not None else None

    def erase_scope(self, scope: Scope) -> int:
        """Delete the scope's counters and rollouts; returns how many rows went."""
        with self._db.transaction(write=True) as conn:
            counters = conn.execute(
                "DELETE FROM session_counters WHERE memory_id = ? AND actor_id = ?", _scope(scope)
            ).rowcount
            rollouts = conn.execute(
                "DELETE FROM rollouts WHERE memory_id = ? AND actor_id = ?", _scope(scope)
            ).rowcount
        return int(counters) + int(rollouts)


def _scope(scope: Scope) -> tuple[str, str]:
    return scope.memory_id, scope.actor_id


def read_rollouts(
    conn: sqlite3.Connection, scope: Scope, rollout_ids: Sequence[str]
) -> dict[str, Rollout]:
    """The named rollouts of the scope that exist, by id (for an apply that consumes them)."""
    found: dict[str, Rollout] = {}
    for rid in dict.fromkeys(rollout_ids):
        row = conn.execute(_ROLLOUT, (*_scope(scope), rid)).fetchone()
        if row is not None:
            found[rid] = Rollout.model_validate_json(row[0])
    return found


def _read_rollout(conn: sqlite3.Connection, scope: Scope, rollout_id: str) -> Rollout:
    found = conn.execute(_ROLLOUT, (*_scope(scope), rollout_id)).fetchone()
    if found is None:
        raise RolloutNotFoundError(rollout_id)
    return Rollout.model_validate_json(found[0])
