"""Migration 0017 makes the record change feed take ``re-embedded`` changes: a file written
before it keeps every change and its sequence, and never reuses a sequence afterwards."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cairn.store.sqlite.schema import apply_migrations, known_migrations

_AT = "2026-01-01T00:00:00.000000Z"
_INSERT = (
    "INSERT INTO record_changes (memory_id, actor_id, record_id, version, kind, at)"
    " VALUES ('m1', 'a1', ?, 1, ?, ?)"
)


def _rows(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    query = "SELECT sequence, record_id, kind FROM record_changes ORDER BY sequence"
    return [(int(s), str(r), str(k)) for s, r, k in conn.execute(query)]


def test_a_feed_written_before_keeps_its_changes_and_never_reuses_a_sequence(
    tmp_path: Path,
) -> None:
    conn = sqlite3.connect(tmp_path / "cairn.db", isolation_level=None)
    known = known_migrations()
    (feed_kinds,) = [m for m in known if m.name == "reembedded_changes"]
    before = [m for m in known if m.version < feed_kinds.version]
    apply_migrations(conn, before, lambda: _AT, "test")
    for record_id, kind in [("r1", "created"), ("r2", "created"), ("r1", "erased")]:
        conn.execute(_INSERT, (record_id, kind, _AT))
    with pytest.raises(sqlite3.IntegrityError):  # the old schema refuses the new kind
        conn.execute(_INSERT, ("r2", "re-embedded", _AT))
    conn.execute("DELETE FROM record_changes WHERE sequence = 3")  # the counter stays at 3
    kept = _rows(conn)

    apply_migrations(conn, known, lambda: _AT, "test")

    assert _rows(conn) == kept
    conn.execute(_INSERT, ("r2", "re-embedded", _AT))
    assert _rows(conn)[-1] == (4, "r2", "re-embedded")
    with pytest.raises(sqlite3.IntegrityError):  # a kind outside the feed's is still refused
        conn.execute(_INSERT, ("r2", "renamed", _AT))
    indexes = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "record_changes_by_memory" in indexes
    conn.close()
