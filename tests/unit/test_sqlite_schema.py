"""The SQLite file: migrations recorded once, newer schemas refused, WAL on, bad files refused."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.errors import ConfigurationError, RecordNotFoundError
from cairn.models import Scope
from cairn.store.sqlite import SQLiteBackend
from cairn.store.sqlite.schema import Migration, apply_migrations, known_migrations

SCOPE = Scope(memory_id="m1", actor_id="a1")


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection of our own, committed and closed on the way out."""
    with closing(sqlite3.connect(path)) as conn, conn:
        yield conn


def ledger(path: Path) -> list[tuple[int, str, str]]:
    with raw(path) as conn:
        rows = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY 1")
        return [(int(v), str(n), str(a)) for v, n, a in rows]


def tables(path: Path) -> set[str]:
    with raw(path) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return {str(name) for (name,) in rows}


def test_opening_a_new_file_applies_and_records_every_migration(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dirs" / "cairn.db"
    SQLiteBackend(path, FixedClock()).close()

    known = known_migrations()
    assert [(v, n) for v, n, _ in ledger(path)] == [(m.version, m.name) for m in known]
    assert {"record_versions", "record_heads", "vectors", "events", "journal"} <= tables(path)


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    clock = FixedClock()
    SQLiteBackend(path, clock).close()
    first = ledger(path)

    clock.advance(days=3)
    SQLiteBackend(path, clock).close()

    assert ledger(path) == first


def test_a_file_from_a_newer_cairn_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    SQLiteBackend(path).close()
    with raw(path) as conn:
        conn.execute(
            "INSERT INTO schema_migrations VALUES (9999, 'from_the_future', "
            "'2030-01-01T00:00:00.000000Z')"
        )
    before = ledger(path)

    with pytest.raises(ConfigurationError, match="9999") as raised:
        SQLiteBackend(path)

    assert "upgrade cairn" in raised.value.message
    assert ledger(path) == before


def test_a_failing_migration_leaves_no_trace_of_itself(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "cairn.db", isolation_level=None)
    good = Migration(1, "good", "CREATE TABLE kept (x INTEGER);")
    bad = Migration(
        2, "bad", "CREATE TABLE half_done (x INTEGER);\nINSERT INTO missing VALUES (1);"
    )

    with pytest.raises(sqlite3.OperationalError):
        apply_migrations(conn, [good, bad], lambda: "2026-01-01T00:00:00.000000Z", "test")

    names = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "kept" in names
    assert "half_done" not in names
    assert [v for (v,) in conn.execute("SELECT version FROM schema_migrations")] == [1]
    conn.close()


def test_the_file_is_in_write_ahead_logging_mode(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    SQLiteBackend(path).close()

    with raw(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_that_is_not_a_database_is_refused_with_advice(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("shopping list: eggs, milk, bread\n" * 200)

    with pytest.raises(ConfigurationError, match=r"notes\.txt"):
        SQLiteBackend(path)

    assert path.read_text().startswith("shopping list")


def test_a_closed_backend_refuses_calls_instead_of_reopening(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "cairn.db")
    stores = backend.stores()
    with pytest.raises(RecordNotFoundError):
        stores.records.get(SCOPE, "mem-" + "0" * 36)

    stores.close()
    stores.close()  # closing twice is harmless

    with pytest.raises(ConfigurationError, match="closed"):
        stores.records.get(SCOPE, "mem-" + "0" * 36)
