"""``LinkStore`` and ``AccessCounts`` on SQLite: one row per link, per counted record and per
scope's cursor; a link's ends are checked in the transaction that writes it, and counts are
added in the transaction that moves their cursor."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence

from cairn.errors import CountedMeanwhileError, RecordNotFoundError
from cairn.links import (
    MAX_LINKS_LISTED,
    Link,
    Salience,
    check_add,
    check_counts,
    check_link,
    check_salience,
)
from cairn.models import Scope
from cairn.store.sqlite.connection import SQLiteDatabase

_SCOPE = "memory_id = ? AND actor_id = ?"


def _scope(scope: Scope) -> tuple[str, str]:
    return (scope.memory_id, scope.actor_id)


def _live(conn: sqlite3.Connection, scope: Scope, record_id: str) -> bool:
    row = conn.execute(
        f"SELECT status FROM record_heads WHERE {_SCOPE} AND record_id = ?",  # noqa: S608
        (*_scope(scope), record_id),
    ).fetchone()
    return row is not None and row[0] != "erased"


class SQLiteLinkStore:
    """Links in one SQLite file; behaves exactly like ``InMemoryLinkStore``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def put(self, scope: Scope, link: Link) -> Link:
        check_link(scope, link)
        with self._db.transaction(write=True) as conn:
            for record_id in (link.from_id, link.to_id):
                if not _live(conn, scope, record_id):
                    raise RecordNotFoundError(record_id)
            row = conn.execute(
                f"SELECT data FROM links WHERE {_SCOPE} AND from_id = ? AND kind = ?"  # noqa: S608
                " AND to_id = ?",
                (*_scope(scope), *link.key),
            ).fetchone()
            if row is not None:
                return Link.model_validate_json(row[0])
            conn.execute(
                "INSERT INTO links (memory_id, actor_id, from_id, kind, to_id, data)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (*_scope(scope), *link.key, link.model_dump_json()),
            )
            return link

    def links_of(self, scope: Scope, record_id: str) -> tuple[Link, ...]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT data FROM links WHERE {_SCOPE} AND (from_id = ? OR to_id = ?)"  # noqa: S608
                " ORDER BY from_id, kind, to_id LIMIT ?",
                (*_scope(scope), record_id, record_id, MAX_LINKS_LISTED),
            ).fetchall()
        return tuple(Link.model_validate_json(data) for (data,) in rows)

    def every_link(self, scope: Scope) -> Iterator[Link]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT data FROM links WHERE {_SCOPE} ORDER BY from_id, kind, to_id",  # noqa: S608
                _scope(scope),
            ).fetchall()
        return (Link.model_validate_json(data) for (data,) in rows)

    def erase_records(self, scope: Scope, record_ids: Sequence[str]) -> int:
        gone = 0
        with self._db.transaction(write=True) as conn:
            for record_id in record_ids:
                gone += conn.execute(
                    f"DELETE FROM links WHERE {_SCOPE} AND (from_id = ? OR to_id = ?)",  # noqa: S608
                    (*_scope(scope), record_id, record_id),
                ).rowcount
        self._db.checkpoint()
        return gone

    def erase_scope(self, scope: Scope) -> int:
        with self._db.transaction(write=True) as conn:
            gone = conn.execute(f"DELETE FROM links WHERE {_SCOPE}", _scope(scope)).rowcount  # noqa: S608
        self._db.checkpoint()
        return int(gone)


class SQLiteAccessCounts:
    """Access counts in one SQLite file; behaves exactly like ``InMemoryAccessCounts``."""

    def __init__(self, db: SQLiteDatabase) -> None:
        self._db = db

    def cursor(self, scope: Scope) -> int:
        with self._db.transaction(write=False) as conn:
            return _cursor(conn, scope)

    def counts(self, scope: Scope) -> dict[str, int]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT record_id, count FROM access_counts WHERE {_SCOPE}",  # noqa: S608
                _scope(scope),
            ).fetchall()
        return {str(rid): int(count) for rid, count in rows}

    def add(self, scope: Scope, counts: Mapping[str, int], *, after: int, upto: int) -> None:
        check_add(counts, after, upto)
        with self._db.transaction(write=True) as conn:
            found = _cursor(conn, scope)
            if found != after:
                raise CountedMeanwhileError(after, found)
            for record_id, count in counts.items():
                conn.execute(
                    "INSERT INTO access_counts (memory_id, actor_id, record_id, count)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (memory_id, actor_id, record_id)"
                    " DO UPDATE SET count = count + excluded.count",
                    (*_scope(scope), record_id, count),
                )
            conn.execute(
                "INSERT OR REPLACE INTO access_cursors (memory_id, actor_id, sequence)"
                " VALUES (?, ?, ?)",
                (*_scope(scope), upto),
            )

    def raise_counts(self, scope: Scope, counts: Mapping[str, int]) -> int:
        check_counts(counts)
        rose = 0
        with self._db.transaction(write=True) as conn:
            for record_id, count in counts.items():
                rose += conn.execute(
                    "INSERT INTO access_counts (memory_id, actor_id, record_id, count)"
                    " VALUES (?, ?, ?, ?) ON CONFLICT (memory_id, actor_id, record_id)"
                    " DO UPDATE SET count = excluded.count WHERE count < excluded.count",
                    (*_scope(scope), record_id, count),
                ).rowcount
        return rose

    def salience(self, scope: Scope) -> dict[str, Salience]:
        with self._db.transaction(write=False) as conn:
            rows = conn.execute(
                f"SELECT data FROM salience WHERE {_SCOPE}",  # noqa: S608
                _scope(scope),
            ).fetchall()
        found = (Salience.model_validate_json(str(data)) for (data,) in rows)
        return {value.record_id: value for value in found}

    def put_salience(self, scope: Scope, values: Sequence[Salience]) -> None:
        check_salience(values)
        with self._db.transaction(write=True) as conn:
            for value in values:
                conn.execute(
                    "INSERT OR REPLACE INTO salience (memory_id, actor_id, record_id, data)"
                    " VALUES (?, ?, ?, ?)",
                    (*_scope(scope), value.record_id, value.model_dump_json()),
                )

    def erase_records(self, scope: Scope, record_ids: Sequence[str]) -> int:
        gone = 0
        with self._db.transaction(write=True) as conn:
            for record_id in record_ids:
                conn.execute(
                    f"DELETE FROM salience WHERE {_SCOPE} AND record_id = ?",  # noqa: S608
                    (*_scope(scope), record_id),
                )
                gone += conn.execute(
                    f"DELETE FROM access_counts WHERE {_SCOPE} AND record_id = ?",  # noqa: S608
                    (*_scope(scope), record_id),
                ).rowcount
        self._db.checkpoint()
        return gone

    def erase_scope(self, scope: Scope) -> int:
        with self._db.transaction(write=True) as conn:
            gone = conn.execute(
                f"DELETE FROM access_counts WHERE {_SCOPE}",  # noqa: S608
                _scope(scope),
            ).rowcount
            conn.execute(f"DELETE FROM access_cursors WHERE {_SCOPE}", _scope(scope))  # noqa: S608
            conn.execute(f"DELETE FROM salience WHERE {_SCOPE}", _scope(scope))  # noqa: S608
        self._db.checkpoint()
        return int(gone)


def _cursor(conn: sqlite3.Connection, scope: Scope) -> int:
    row = conn.execute(
        f"SELECT sequence FROM access_cursors WHERE {_SCOPE}",  # noqa: S608
        _scope(scope),
    ).fetchone()
    return 0 if row is None else int(row[0])
