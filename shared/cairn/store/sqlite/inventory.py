"""What an embedded store holds, counted: memories, actors, and per scope its records, events,
sessions and journal entries, and the erased records no listing shows (``cairn export``).
Read-only; one consistent snapshot. Used by ``cairn ls`` and ``cairn stats``, and to tell a
mistyped ``--actor`` from an actor with no memories yet.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

from cairn.store.sqlite.connection import SQLiteDatabase

# Every table that holds data of a scope; an actor is known if any of them names it.
_SCOPED_TABLES = ("record_heads", "events", "journal")


@dataclass(frozen=True)
class ScopeCounts:
    """One ``(memory, actor)``: record heads by status, versions, events, sessions, journal."""

    memory_id: str
    actor_id: str
    records: dict[str, int] = field(default_factory=dict)
    versions: int = 0
    events: int = 0
    sessions: int = 0
    journal_entries: int = 0
    links: int = 0
    # Record showings counted from the journal so far (cairn.history.access).
    access_counted: int = 0


def _known(conn: sqlite3.Connection, memory_id: str | None) -> list[tuple[str, str]]:
    # Built from the fixed table names above; the memory id is a bound parameter.
    union = " UNION ".join(f"SELECT memory_id, actor_id FROM {t}" for t in _SCOPED_TABLES)  # noqa: S608
    sql = f"SELECT memory_id, actor_id FROM ({union})"  # noqa: S608
    params: tuple[str, ...] = ()
    if memory_id is not None:
        sql += " WHERE memory_id = ?"
        params = (memory_id,)
    rows = conn.execute(sql + " ORDER BY memory_id, actor_id", params).fetchall()
    return [(str(memory), str(actor)) for memory, actor in rows]


def known_scopes(db: SQLiteDatabase, memory_id: str | None = None) -> list[tuple[str, str]]:
    """Every ``(memory, actor)`` with records, events or journal entries, sorted."""
    with db.transaction(write=False) as conn:
        return _known(conn, memory_id)


_PER_SCOPE = {
    "versions": "SELECT memory_id, actor_id, COUNT(*) FROM record_versions",
    "events": "SELECT memory_id, actor_id, COUNT(*) FROM events",
    "sessions": "SELECT memory_id, actor_id, COUNT(DISTINCT session_id) FROM events",
    "journal_entries": "SELECT memory_id, actor_id, COUNT(*) FROM journal",
    "links": "SELECT memory_id, actor_id, COUNT(*) FROM links",
    "access_counted": "SELECT memory_id, actor_id, SUM(count) FROM access_counts",
}


def count_scopes(db: SQLiteDatabase, memory_id: str | None = None) -> list[ScopeCounts]:
    """The counts of every known scope (of ``memory_id`` if given), sorted by memory, actor."""
    where, params = (" WHERE memory_id = ?", (memory_id,)) if memory_id is not None else ("", ())
    totals: dict[str, dict[tuple[str, str], int]] = {}
    records: dict[tuple[str, str], dict[str, int]] = {}
    with db.transaction(write=False) as conn:
        scopes = _known(conn, memory_id)
        for name, select in _PER_SCOPE.items():
            rows = conn.execute(select + where + " GROUP BY memory_id, actor_id", params)
            totals[name] = {(str(m), str(a)): int(n) for m, a, n in rows.fetchall()}
        heads = conn.execute(
            "SELECT memory_id, actor_id, status, COUNT(*) FROM record_heads"  # noqa: S608 - fixed SQL
            + where
            + " GROUP BY memory_id, actor_id, status",
            params,
        ).fetchall()
    for memory, actor, status, n in heads:
        records.setdefault((str(memory), str(actor)), {})[str(status)] = int(n)
    return [
        ScopeCounts(
            memory_id=scope[0],
            actor_id=scope[1],
            records=records.get(scope, {}),
            versions=totals["versions"].get(scope, 0),
            events=totals["events"].get(scope, 0),
            sessions=totals["sessions"].get(scope, 0),
            journal_entries=totals["journal_entries"].get(scope, 0),
            links=totals["links"].get(scope, 0),
            access_counted=totals["access_counted"].get(scope, 0),
        )
        for scope in scopes
    ]


def erased_record_ids(db: SQLiteDatabase, memory_id: str, actor_id: str) -> list[str]:
    """The ids of the scope's erased records (tombstones), sorted: what no listing shows."""
    with db.transaction(write=False) as conn:
        rows = conn.execute(
            "SELECT record_id FROM record_heads WHERE memory_id = ? AND actor_id = ?"
            " AND status = 'erased' ORDER BY record_id",
            (memory_id, actor_id),
        ).fetchall()
    return [str(record_id) for (record_id,) in rows]
