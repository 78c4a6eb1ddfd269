"""``cairn erase --all-of-actor`` erases the conversation wherever extraction put it.

Turns appended through the embedded extraction pipeline leave staged payloads on disk (files
beside the store) and rollout index rows; a payload is deleted only once it is consumed. The
erase, run as the real console script, must leave no byte of the actor's conversation in the
staging directory, nor anywhere else beside the store, while another actor's stays.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cairn.clock import FixedClock
from cairn.local import offline_model
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.system import staging_dir, wire_embedded
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.store.sqlite import SQLiteBackend

ALICE = Scope(memory_id="default", actor_id="alice")
BOB = Scope(memory_id="default", actor_id="bob")
SECRET = {ALICE: "My passport number is X1234567.", BOB: "My locker code is 8080."}


def _console_script() -> str:
    beside = Path(sys.executable).parent / "cairn"
    found = str(beside) if beside.exists() else shutil.which("cairn")
    assert found, "the `cairn` console script is not installed; run `make .venv/.installed`"
    return found


def stage_conversations(store: Path) -> None:
    """Six turns for each actor, released and staged; no worker runs, so nothing is consumed."""
    clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
    stores = SQLiteBackend(store, clock).stores()
    extraction = wire_embedded(
        stores,
        FilesystemStagingStore(staging_dir(store)),
        model=offline_model(),
        embedder=None,
        clock=clock,
    )
    try:
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
    finally:
        stores.close()  # not extraction.close(): that would drain the queue and consume them


def holding(root: Path, text: str) -> list[str]:
    """Files under ``root`` whose bytes contain ``text``."""
    needle = text.encode("utf-8")
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and needle in p.read_bytes()
    )


def test_erasing_an_actor_leaves_none_of_its_conversation_in_staging(tmp_path: Path) -> None:
    store = tmp_path / "store" / "cairn.db"
    stage_conversations(store)
    assert len(holding(staging_dir(store), SECRET[ALICE])) == 1  # staged, not consumed
    assert len(holding(staging_dir(store), SECRET[BOB])) == 1

    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    result = subprocess.run(  # noqa: S603 - our own console script
        [
            _console_script(),
            "erase",
            "--all-of-actor",
            "--yes",
            "--store",
            str(store),
            "--actor",
            "alice",
        ],
        capture_output=True,
        text=True,
        env=clean,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert "6 event(s)" in result.stdout
    assert "1 staged payload(s)" in result.stdout
    assert holding(store.parent, SECRET[ALICE]) == []  # staging, database, its WAL: nothing
    assert len(holding(staging_dir(store), SECRET[BOB])) == 1
    stores = SQLiteBackend(store).stores()
    try:
        assert stores.rollouts is not None
        assert stores.rollouts.list_pending(ALICE) == ()
        assert stores.rollouts.counters(ALICE, "s1") is None
        assert len(stores.rollouts.list_pending(BOB)) == 1
    finally:
        stores.close()


def test_erasing_an_actor_with_nothing_staged_reports_zero(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    SQLiteBackend(store).stores().close()

    result = subprocess.run(  # noqa: S603 - our own console script
        [
            _console_script(),
            "erase",
            "--all-of-actor",
            "--yes",
            "--store",
            str(store),
            "--actor",
            "alice",
        ],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")},
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert "0 staged payload(s)" in result.stdout
