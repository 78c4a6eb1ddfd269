"""Several processes extracting into one SQLite file file each fact once (issue 14, item 2).

Real processes, started at the same moment, each with its own embedded worker, each telling
the same preference to the same actors in its own sessions. Run one after another they fold
the repeats into one record; at once, every worker used to plan against a namespace the others
had not written yet, and each filed its own copy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cairn.clock import SystemClock
from cairn.models import Scope
from cairn.store.sqlite import SQLiteBackend

PROCESSES = 4
ACTORS = 3
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_processes_extracting_at_once_file_each_preference_once(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    SQLiteBackend(store, SystemClock()).close()  # created and migrated before the race
    command = [sys.executable, "-m", "tests.processes.extract_writer", str(store)]
    processes = [
        subprocess.Popen(  # noqa: S603  # our own interpreter and module
            [*command, f"w{i}", str(ACTORS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=dict(os.environ),
        )
        for i in range(PROCESSES)
    ]
    for process in processes:
        assert process.stdin is not None
    # The line waits in each pipe until its process has opened the store: a process still
    # opening (and tidying the staging folder) overlaps the others' writes, as it may in use.
    for process in processes:
        process.stdin.write("go\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
    outputs = [process.communicate(timeout=120)[0] for process in processes]
    assert [p.returncode for p in processes] == [0] * PROCESSES
    assert outputs == ["done\n"] * PROCESSES

    stores = SQLiteBackend(store, SystemClock()).stores()
    try:
        for actor in range(ACTORS):
            scope = Scope(memory_id="default", actor_id=f"tg:{actor}")
            live = stores.records.list_records(scope, limit=1000).items
            preferences = [
                v.content
                for v in live
                if "green tea" in v.content and not v.namespace.startswith("/summaries/")
            ]
            summaries = Counter(v.namespace for v in live if v.namespace.startswith("/summaries/"))
            assert len(preferences) == 1, f"actor {actor}: {preferences}"
            assert set(summaries.values()) == {1}, f"actor {actor}: {dict(summaries)}"
            assert len(summaries) == PROCESSES  # one live summary for each session
    finally:
        stores.close()
