"""A recall's journal entry outlives a crash of the process that recalled, once the block was
returned: the process is killed (SIGKILL, no cleanup, no close) right after its recall. A put
killed before it commits files nothing, and its retry files the entry once; the stored row is
the entry's JSON; every write commits at the ``synchronous`` level it asked for."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cairn.errors import JournalNotFoundError
from cairn.journal_chain import chain_digest, verify_scope
from cairn.models import Scope
from cairn.ports import ChainHead
from cairn.store.sqlite import SQLiteBackend
from tests.conformance.samples import SCOPE, journal_entry

RECALL_THEN_DIE = textwrap.dedent(
    """
    import os, signal, sys
    from cairn.changes import Create, NewRecord
    from cairn.clock import SystemClock
    from cairn.models import Scope, Source, SourceKind
    from cairn.recall import RecallQuery, recall
    from cairn.store.sqlite import SQLiteBackend

    scope = Scope(memory_id="m1", actor_id="a1")
    stores = SQLiteBackend(sys.argv[1]).stores()
    record = NewRecord(namespace="/facts/a1/", content="Prefers green tea",
                       sources=(Source(kind=SourceKind.USER),))
    stores.records.apply(scope, [Create(record=record)])
    found = recall(scope, RecallQuery(text="tea"), stores=stores, embedder=None,
                   clock=SystemClock())
    print(found.journal_id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _run(script: str, path: Path) -> subprocess.CompletedProcess[str]:
    """``script`` in a fresh interpreter of this one's, given the store ``path``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(  # noqa: S603 - our own interpreter, our own script
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.fault("journal", "killed-after", "sqlite")
def test_a_journal_entry_survives_the_process_being_killed_after_recall(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    completed = _run(RECALL_THEN_DIE, path)
    assert completed.returncode == -signal.SIGKILL
    journal_id = completed.stdout.strip()
    with SQLiteBackend(path) as backend:
        entry = backend.stores().journal.get(Scope(memory_id="m1", actor_id="a1"), journal_id)
    assert entry.query == "tea"
    assert len(entry.selected) == 1


# Killed inside put, after the entry's row is inserted and before the scope's head is: the
# transaction never commits.
PUT_THEN_DIE = textwrap.dedent(
    """
    import os, signal, sys
    from contextlib import contextmanager
    from cairn.store.sqlite import SQLiteBackend
    from cairn.store.sqlite.connection import SQLiteDatabase
    from tests.conformance.samples import journal_entry

    class DiesBeforeTheHead:
        def __init__(self, conn):
            self._conn = conn
        def execute(self, sql, *args):
            if sql.startswith("INSERT INTO journal_heads"):
                os.kill(os.getpid(), signal.SIGKILL)
            return self._conn.execute(sql, *args)

    opened = SQLiteDatabase.transaction
    @contextmanager
    def transaction(self, **kwargs):
        with opened(self, **kwargs) as conn:
            yield DiesBeforeTheHead(conn)

    stores = SQLiteBackend(sys.argv[1]).stores()
    stores.journal.put(journal_entry("j-1"))
    SQLiteDatabase.transaction = transaction
    stores.journal.put(journal_entry("j-2"))
    """
)


@pytest.mark.fault("journal", "killed-before", "sqlite")
def test_a_put_killed_mid_transaction_files_nothing_and_its_retry_files_it_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cairn.db"
    completed = _run(PUT_THEN_DIE, path)
    assert completed.returncode == -signal.SIGKILL, completed.stderr
    with SQLiteBackend(path) as backend:
        journal = backend.stores().journal
        assert [e.journal_id for e in journal.chain(SCOPE)] == ["j-1"]
        assert journal.head(SCOPE) == ChainHead(
            sequence=1, digest=chain_digest(journal.chain(SCOPE)[0])
        )
        with pytest.raises(JournalNotFoundError):
            journal.get(SCOPE, "j-2")

        journal.put(journal_entry("j-2"))  # the caller's retry
        journal.put(journal_entry("j-2"))  # and a retry of that

        assert [(e.journal_id, e.sequence) for e in journal.chain(SCOPE)] == [
            ("j-1", 1),
            ("j-2", 2),
        ]
        assert verify_scope(journal, SCOPE) == 2


def test_the_stored_row_is_the_linked_entry_as_json(tmp_path: Path) -> None:
    with SQLiteBackend(tmp_path / "cairn.db") as backend:
        journal = backend.stores().journal
        for journal_id in ("j-1", "j-2"):
            journal.put(journal_entry(journal_id))
        rows = sqlite3.connect(tmp_path / "cairn.db").execute(
            "SELECT data FROM journal ORDER BY sequence"
        )
        stored = [data for (data,) in rows]
        chained = journal.chain(SCOPE)

    assert stored == [entry.model_dump_json() for entry in chained]
    assert chained[1].previous == chain_digest(chained[0])


def _level_inside(backend: SQLiteBackend, *, fsync: bool) -> int:
    with backend._db.transaction(write=True, fsync=fsync) as conn:
        (level,) = conn.execute("PRAGMA synchronous").fetchone()
    return int(level)


def test_every_write_commits_at_the_level_it_asked_for_whatever_ran_before(
    tmp_path: Path,
) -> None:
    """The journal's NORMAL is set only when the connection is not at it already, and every
    other write goes back to FULL (1 is NORMAL, 2 is FULL)."""
    with SQLiteBackend(tmp_path / "cairn.db") as backend:
        stores = backend.stores()
        assert _level_inside(backend, fsync=True) == 2
        stores.journal.put(journal_entry("j-1"))
        assert _level_inside(backend, fsync=True) == 2  # a write after a recall: fsynced
        assert _level_inside(backend, fsync=False) == 1
        assert _level_inside(backend, fsync=False) == 1
        stores.journal.put(journal_entry("j-2"))
        stores.journal.put(journal_entry("j-3"))
        assert _level_inside(backend, fsync=True) == 2
        assert _level_inside(backend, fsync=True) == 2
