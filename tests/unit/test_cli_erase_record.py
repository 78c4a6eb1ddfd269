"""``cairn erase RECORD`` follows the record into what restates it (``cairn.erasure_lineage``),
run as the real console script over a store the embedded pipeline filled: the turn that said
it, the session summary, the history chunks; no byte of the sentence is left in the database,
its WAL or the staging folder, while another actor's copy stays. ``--keep-events`` keeps the
turn (and says so), and makes no sense with ``--all-of-actor``.
"""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cairn.clock import FixedClock
from cairn.local import offline_model
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import staging_dir, wire_embedded
from cairn.models import Conversational, EventInput, Role
from cairn.store.sqlite import SQLiteBackend
from tests.unit.test_cli_erase import ALICE, BOB, SECRET, _console_script, holding

PASSPORT = "X1234567"


def converse_and_extract(store: Path) -> str:
    """Six turns of each actor, extracted by the offline model (the queue drained); the id of
    alice's record holding her passport number."""
    clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    stores = SQLiteBackend(store, clock).stores()
    extraction = wire_embedded(
        stores,
        FilesystemStagingStore(staging_dir(store)),
        model=offline_model(),
        embedder=None,
        clock=clock,
    )
    for scope, secret in SECRET.items():
        for i in range(6):
            text = secret if i == 2 else f"turn {i}"
            turn = EventInput(
                session_id="s1",
                event_timestamp=clock.now(),
                payload=(Conversational(role=Role.USER, text=text),),
            )
            extraction.append(scope, turn)
            clock.advance(timedelta(seconds=1))
    extraction.close()  # drains the queue: every rollout consumed
    stores = SQLiteBackend(store).stores()
    try:
        (fact,) = [
            v
            for v in stores.records.list_records(ALICE).items
            if PASSPORT in v.content and v.strategy != "summary"
        ]
        return fact.record_id
    finally:
        stores.close()


def cairn(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return subprocess.run(  # noqa: S603 - our own console script
        [_console_script(), *args, "--store", str(store), "--actor", "alice"],
        capture_output=True,
        text=True,
        env=clean,
        check=False,
    )


def test_erasing_a_record_leaves_no_byte_of_what_was_said(tmp_path: Path) -> None:
    store = tmp_path / "store" / "cairn.db"
    fact = converse_and_extract(store)
    assert holding(store.parent, PASSPORT)  # the scan finds it before

    result = cairn(store, "erase", fact)

    assert result.returncode == 0, result.stderr
    assert "1 source turn(s)" in result.stdout
    assert holding(store.parent, PASSPORT) == []  # database, WAL, staging: nothing
    assert holding(store.parent, "8080")  # bob's locker code stays
    stores = SQLiteBackend(store).stores()
    try:
        texts = [
            part.text
            for event in stores.events.list_events(ALICE, "s1").items
            for part in event.payload
            if isinstance(part, Conversational)
        ]
        assert texts == [f"turn {i}" for i in range(6) if i != 2]
        assert any("8080" in v.content for v in stores.records.list_records(BOB).items)
    finally:
        stores.close()


def test_keep_events_keeps_the_turn(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    fact = converse_and_extract(store)

    result = cairn(store, "erase", fact, "--keep-events")

    assert result.returncode == 0, result.stderr
    assert "0 source turn(s)" in result.stdout
    stores = SQLiteBackend(store).stores()
    try:
        texts = [e.payload[0].text for e in stores.events.list_events(ALICE, "s1").items]
        assert SECRET[ALICE] in texts
        assert all(PASSPORT not in v.content for v in stores.records.list_records(ALICE).items)
    finally:
        stores.close()


def test_keep_events_with_all_of_actor_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    converse_and_extract(store)

    result = cairn(store, "erase", "--all-of-actor", "--yes", "--keep-events")

    assert result.returncode != 0
    assert "--keep-events applies to erasing one RECORD_ID" in result.stderr
    assert holding(tmp_path, PASSPORT)
