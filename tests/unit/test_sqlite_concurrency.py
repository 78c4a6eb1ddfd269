"""One writer and many readers across real processes; many threads inside one process."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.changes import Create, NewRecord
from cairn.errors import StoreUnavailableError
from cairn.models import Scope, Source, SourceKind
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="m1", actor_id="a1")

# Another process: opens the store, then answers "list" / "write" commands on stdin, one JSON
# line per command, so the test drives it step by step without sleeping.
READER = """
import json, sys
from cairn.changes import Create, NewRecord
from cairn.errors import StoreUnavailableError
from cairn.errors import CairnError
from cairn.models import Scope
from cairn.store.sqlite import SQLiteBackend

records = SQLiteBackend(sys.argv[1], busy_timeout=0.1).stores().records
scope = Scope(memory_id="m1", actor_id="a1")
print(json.dumps("ready"), flush=True)
for line in sys.stdin:
    try:
        if line.strip() == "list":
            reply = {"ok": [v.content for v in records.list_records(scope).items]}
        else:
            record = NewRecord(
                namespace="/facts/a1/", content=line.strip(), sources=[{"kind": "user"}]
            )
            records.apply(scope, [Create(record=record)])
            reply = {"ok": "written"}
    except CairnError as exc:
        reply = {"error": type(exc).__name__, "retryable": exc.retryable}
    print(json.dumps(reply), flush=True)
"""


def fact(content: str) -> Create:
    source = Source(kind=SourceKind.USER)
    return Create(record=NewRecord(namespace="/facts/a1/", content=content, sources=(source,)))


class OtherProcess:
    """A real second Python process holding its own connection to the same file."""

    def __init__(self, path: Path) -> None:
        self._proc = subprocess.Popen(  # noqa: S603 -- our own interpreter and script
            [sys.executable, "-c", READER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self._reply() == "ready"

    def _reply(self) -> Any:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            _, err = self._proc.communicate(timeout=30)
            pytest.fail(f"the other process exited early:\n{err}")
        return json.loads(line)

    def ask(self, command: str) -> Any:
        assert self._proc.stdin is not None
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        return self._reply()

    def stop(self) -> None:
        self._proc.communicate(timeout=30)


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[SQLiteBackend]:
    opened = SQLiteBackend(tmp_path / "cairn.db")
    yield opened
    opened.close()


def hold_the_write_lock(path: Path) -> sqlite3.Connection:
    """Another writer, mid-transaction: it has changed a row and not committed."""
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE record_heads SET status = 'retracted'")
    return writer


def test_another_process_reads_committed_state_while_a_writer_holds_the_lock(
    backend: SQLiteBackend,
) -> None:
    records = backend.stores().records
    records.apply(SCOPE, [fact("Grows tomatoes")])
    writer = hold_the_write_lock(backend.path)
    try:
        reader = OtherProcess(backend.path)  # opening needs no write lock either
        try:
            assert reader.ask("list") == {"ok": ["Grows tomatoes"]}
            assert reader.ask("Keeps bees") == {"error": "StoreUnavailableError", "retryable": True}
            writer.execute("ROLLBACK")
            assert reader.ask("Keeps bees") == {"ok": "written"}
            records.apply(SCOPE, [fact("Rides a bike")])
            assert sorted(reader.ask("list")["ok"]) == [
                "Grows tomatoes",
                "Keeps bees",
                "Rides a bike",
            ]
        finally:
            reader.stop()
    finally:
        writer.close()
    assert sorted(v.content for v in records.list_records(SCOPE).items) == [
        "Grows tomatoes",
        "Keeps bees",
        "Rides a bike",
    ]


def test_a_write_refused_for_a_busy_lock_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    patient = SQLiteBackend(path, busy_timeout=0.05)
    records = patient.stores().records
    records.apply(SCOPE, [fact("Grows tomatoes")])
    writer = hold_the_write_lock(path)
    try:
        with pytest.raises(StoreUnavailableError, match="locked") as raised:
            records.apply(SCOPE, [fact("Keeps bees")])
        assert raised.value.retryable
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert [v.content for v in records.list_records(SCOPE).items] == ["Grows tomatoes"]
    patient.close()


def test_threads_share_one_backend_without_losing_a_write(backend: SQLiteBackend) -> None:
    records = backend.stores().records
    failures: list[BaseException] = []

    def write_many(thread: int) -> None:
        try:
            for n in range(15):
                records.apply(SCOPE, [fact(f"thread {thread} fact {n}")])
                records.list_records(SCOPE, limit=5)
        except BaseException as exc:  # surfaced below; a thread cannot fail the test itself
            failures.append(exc)

    threads = [threading.Thread(target=write_many, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert len(records.list_records(SCOPE, limit=1000).items) == 8 * 15
