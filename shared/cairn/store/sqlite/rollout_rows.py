"""SQLite rows of the rollout index: a session's counters and a rollout, read and written
inside the caller's transaction (``cairn.store.sqlite.rollouts``, ``append_batch``)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from cairn.models import Scope
from cairn.rollout.index import Rollout, SessionCounters, due_at
from cairn.store.sqlite.codec import encode_time

COUNTERS = (
    "SELECT data FROM session_counters WHERE memory_id = ? AND actor_id = ? AND session_id = ?"
)


def optional_time(value: datetime | None) -> str | None:
    return encode_time(value) if value is not None else None


def read_counters(
    conn: sqlite3.Connection, scope: Scope, session_id: str
) -> SessionCounters | None:
    found = conn.execute(COUNTERS, (scope.memory_id, scope.actor_id, session_id)).fetchone()
    return SessionCounters.model_validate_json(found[0]) if found else None


def save_counters(conn: sqlite3.Connection, counters: SessionCounters) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO session_counters (memory_id, actor_id, session_id, version,"
        " idle_due_at, data) VALUES (?, ?, ?, ?, ?, ?)",
        (
            counters.memory_id,
            counters.actor_id,
            counters.session_id,
            counters.version,
            optional_time(counters.idle_due_at),
            counters.model_dump_json(),
        ),
    )


def save_rollout(conn: sqlite3.Connection, rollout: Rollout) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO rollouts (memory_id, actor_id, rollout_id, state, due_at, data)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            rollout.memory_id,
            rollout.actor_id,
            rollout.rollout_id,
            rollout.state.value,
            optional_time(due_at(rollout)),
            rollout.model_dump_json(),
        ),
    )
