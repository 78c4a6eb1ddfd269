"""``cairn backup`` on real SQLite files: a consistent copy while another connection writes."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest

from cairn.api.operations.events import session_events
from cairn.changes import Create, NewRecord
from cairn.cli.main import main
from cairn.clock import FixedClock
from cairn.models import Conversational, Event, EventInput, Role, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="default", actor_id="tg:1")


def event(n: int, clock: FixedClock) -> EventInput:
    clock.advance(timedelta(milliseconds=1))
    text = f"turn {n}"
    return EventInput(
        session_id="s1",
        event_timestamp=clock.now(),
        payload=(Conversational(role=Role.USER, text=text),),
    )


def test_a_backup_taken_while_a_writer_appends_is_a_consistent_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, copy = tmp_path / "cairn.db", tmp_path / "backup.db"
    clock = FixedClock()
    stores = SQLiteBackend(path, clock).stores()
    record = NewRecord(
        namespace="/facts/tg:1/", content="Lives in Porto", sources=(Source(kind=SourceKind.USER),)
    )
    stores.records.apply(SCOPE, [Create(record=record)])
    for n in range(50):
        stores.events.append(SCOPE, event(n, clock))
    done = threading.Event()

    def keep_writing() -> None:
        n = 50
        while not done.is_set() and n < 2000:
            stores.events.append(SCOPE, event(n, clock))
            n += 1

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        status = main(["backup", str(copy), "--store", str(path)])
    finally:
        done.set()
        writer.join()
    written = [e.event_id for e in _all_events(stores)]
    stores.close()

    assert status == 0
    assert "integrity ok" in capsys.readouterr().out
    restored = SQLiteBackend(copy, FixedClock()).stores()
    try:
        backed_up = [e.event_id for e in _all_events(restored)]
        assert restored.records.get(SCOPE, record.record_id).content == "Lives in Porto"
    finally:
        restored.close()
    assert len(backed_up) >= 50
    assert backed_up == written[: len(backed_up)]  # the store as of one commit: a prefix


def _all_events(stores: Stores) -> list[Event]:
    return session_events(stores.events, SCOPE, "s1")


def test_a_backup_never_overwrites_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, copy = tmp_path / "cairn.db", tmp_path / "backup.db"
    SQLiteBackend(path, FixedClock()).stores().close()
    copy.write_bytes(b"an older backup")

    status = main(["backup", str(copy), "--store", str(path)])

    assert status == 1
    assert "exists already" in capsys.readouterr().err
    assert copy.read_bytes() == b"an older backup"
