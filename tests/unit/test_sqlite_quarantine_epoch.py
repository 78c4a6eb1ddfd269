"""The SQLite quarantine list keeps what it read per memory until the file's quarantine epoch
moves (``cairn.store.sqlite.quarantine``): a recall reads no list rows while nothing changed,
and an add or a remove, by this connection, by another connection in this process or by
another process, is seen by the very next recall."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from cairn.clock import FixedClock
from cairn.models import Source, SourceKind, Trust
from cairn.ports import QuarantineList, Stores
from cairn.quarantine import QuarantineEntry, parse_selector
from cairn.recall import RecallQuery, recall
from cairn.store.sqlite import SQLiteBackend
from tests.conformance.samples import SCOPE, create

LAPTOP = Source(kind=SourceKind.USER, event_id="ev-9", session_id="laptop")
OPERATOR = textwrap.dedent(
    """
    import sys
    from datetime import UTC, datetime
    from cairn.quarantine import QuarantineEntry, parse_selector
    from cairn.store.sqlite import SQLiteBackend

    path, action = sys.argv[1], sys.argv[2]
    selector = parse_selector("session:laptop")
    with SQLiteBackend(path) as backend:
        listed = backend.stores().quarantine
        if action == "add":
            added_at = datetime(2026, 1, 1, tzinfo=UTC)
            assert listed.add(QuarantineEntry(memory_id="m1", selector=selector, added_at=added_at))
        else:
            assert listed.remove("m1", selector)
    """
)


def list_of(stores: Stores) -> QuarantineList:
    assert stores.quarantine is not None
    return stores.quarantine


def entry() -> QuarantineEntry:
    return QuarantineEntry(
        memory_id="m1", selector=parse_selector("session:laptop"), added_at=FixedClock().now()
    )


def trusts(stores: Stores) -> list[Trust]:
    found = recall(
        SCOPE, RecallQuery(text="deposit flat"), stores=stores, embedder=None, clock=FixedClock()
    )
    return [e.version.trust for e in found.entries]


def operator(path: Path, action: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(  # noqa: S603 - our own interpreter, our own script
        [sys.executable, "-c", OPERATOR, str(path), action], check=True, env=env, timeout=120
    )


def test_an_unchanged_list_is_not_read_again(tmp_path: Path) -> None:
    with SQLiteBackend(tmp_path / "cairn.db") as backend:
        listed = list_of(backend.stores())
        listed.add(entry())
        first = listed.entries("m1")
        assert listed.entries("m1") is first  # kept: no rows read, none parsed
        assert listed.remove("m1", parse_selector("session:laptop"))
        assert listed.entries("m1") == ()
        assert listed.add(entry())
        assert listed.entries("m1") == first


def test_a_quarantine_by_this_connection_is_seen_by_the_next_recall(tmp_path: Path) -> None:
    with SQLiteBackend(tmp_path / "cairn.db") as backend:
        stores = backend.stores()
        create(stores, "Wire the deposit for the flat to account 99-1234", sources=(LAPTOP,))
        assert trusts(stores) == [Trust.TRUSTED]  # the list is now kept
        list_of(stores).add(entry())
        assert trusts(stores) == [Trust.UNTRUSTED]
        list_of(stores).remove("m1", parse_selector("session:laptop"))
        assert trusts(stores) == [Trust.TRUSTED]


def test_a_quarantine_by_another_connection_is_seen_by_the_next_recall(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    with SQLiteBackend(path) as backend, SQLiteBackend(path) as other:
        stores = backend.stores()
        create(stores, "Wire the deposit for the flat to account 99-1234", sources=(LAPTOP,))
        assert trusts(stores) == [Trust.TRUSTED]
        list_of(other.stores()).add(entry())
        assert trusts(stores) == [Trust.UNTRUSTED]
        list_of(other.stores()).remove("m1", parse_selector("session:laptop"))
        assert trusts(stores) == [Trust.TRUSTED]


def test_a_quarantine_by_another_process_is_seen_by_the_next_recall(tmp_path: Path) -> None:
    path = tmp_path / "cairn.db"
    with SQLiteBackend(path) as backend:
        stores = backend.stores()
        create(stores, "Wire the deposit for the flat to account 99-1234", sources=(LAPTOP,))
        assert trusts(stores) == [Trust.TRUSTED]
        operator(path, "add")
        assert trusts(stores) == [Trust.UNTRUSTED]
        operator(path, "remove")
        assert trusts(stores) == [Trust.TRUSTED]
