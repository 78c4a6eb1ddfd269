"""Numbered schema migrations for the SQLite store, applied once each, in order, at open.

Migrations are the package files ``cairn/store/sqlite/migrations/NNNN_name.sql``. Each runs in
its own ``BEGIN IMMEDIATE`` transaction together with its row in ``schema_migrations``, so a
migration is
either wholly applied and recorded or not at all, and two processes opening a fresh file at once
cannot both apply it. A file that records a version newer than this code knows is refused:
running old code on a newer schema could silently drop what the newer code writes.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources

from cairn.errors import ConfigurationError

_FILE_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

_CREATE_LEDGER = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def known_migrations() -> list[Migration]:
    """The migrations shipped in the package, by version; versions run 1, 2, 3 ... unbroken."""
    folder = resources.files("cairn.store.sqlite").joinpath("migrations")
    found = []
    for entry in folder.iterdir():
        match = _FILE_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise ConfigurationError(
            "cairn's SQLite migrations are not numbered 0001, 0002, ... without gaps; "
            "reinstall cairn"
        )
    return found


def statements(script: str) -> Iterator[str]:
    """The SQL statements of ``script``, one at a time (comments and blank lines dropped)."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            yield pending.strip()
            pending = ""
    if _without_comments(pending).strip():
        raise ConfigurationError("a SQLite migration ends with an unterminated statement")


def _without_comments(text: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in text.splitlines())


def applied_versions(conn: sqlite3.Connection) -> dict[int, str]:
    """Version -> name of every migration recorded in the file (empty for a new file)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if exists is None:
        return {}
    rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
    return {int(version): str(name) for version, name in rows}


def refuse_foreign(conn: sqlite3.Connection, where: str) -> None:
    """``ConfigurationError`` if the file is another application's database: it has tables
    but no ``schema_migrations`` ledger. cairn never adds its tables to such a file."""
    tables = [
        str(name)
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " ORDER BY name"
        ).fetchall()
    ]
    if tables and "schema_migrations" not in tables:
        shown = ", ".join(tables[:3]) + (", ..." if len(tables) > 3 else "")
        raise ConfigurationError(
            f"the SQLite file at {where} is not a cairn store (it holds other tables: {shown}); "
            "cairn leaves it untouched: point --store (or CAIRN_STORE) at a new file or an "
            "existing cairn store"
        )


def _refuse_newer(applied: dict[int, str], known: list[Migration], where: str) -> None:
    latest = known[-1].version if known else 0
    newer = sorted(v for v in applied if v > latest)
    if newer:
        raise ConfigurationError(
            f"the SQLite store at {where} has schema version {newer[-1]} "
            f"({applied[newer[-1]]}), newer than the {latest} this cairn knows; upgrade cairn "
            "or open another file"
        )


def apply_migrations(
    conn: sqlite3.Connection, known: list[Migration], now: Callable[[], str], where: str
) -> list[int]:
    """Apply every migration not yet recorded, each in its own transaction; return their versions.

    Opening an up-to-date file takes no write lock, so readers can open while a writer works.
    """
    applied = applied_versions(conn)
    _refuse_newer(applied, known, where)
    done = []
    for migration in (m for m in known if m.version not in applied):
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(_CREATE_LEDGER)
            # Another process may have migrated between our read and our lock: look again.
            current = applied_versions(conn)
            _refuse_newer(current, known, where)
            if migration.version not in current:
                for statement in statements(migration.sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, now()),
                )
                done.append(migration.version)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return done
