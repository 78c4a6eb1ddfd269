"""A recall's journal entry outlives a crash of the process that recalled, once the block was
returned: the process is killed (SIGKILL, no cleanup, no close) right after its recall."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cairn.models import Scope
from cairn.store.sqlite import SQLiteBackend

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


@pytest.mark.fault("journal", "killed-after", "sqlite")
def test_a_journal_entry_survives_the_process_being_killed_after_recall(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    completed = subprocess.run(  # noqa: S603 - our own interpreter, our own script
        [sys.executable, "-c", RECALL_THEN_DIE, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode == -signal.SIGKILL
    journal_id = completed.stdout.strip()
    with SQLiteBackend(path) as backend:
        entry = backend.stores().journal.get(Scope(memory_id="m1", actor_id="a1"), journal_id)
    assert entry.query == "tea"
    assert len(entry.selected) == 1
