"""``cairn changes`` in real processes: it lists the store's record changes, ``--follow`` sees
another process's writes as they commit, and Ctrl-C stops it cleanly."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

from cairn.changes import Create, NewRecord, Retract
from cairn.clock import SystemClock
from cairn.models import Scope, Source, SourceKind
from cairn.store.sqlite import SQLiteBackend

CHANGES = [sys.executable, "-m", "cairn", "changes"]
SCOPE = Scope(memory_id="default", actor_id="u1")


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}


def _write(store: Path, content: str) -> str:
    record = NewRecord(
        namespace="/facts/u1/", content=content, sources=(Source(kind=SourceKind.USER),)
    )
    with SQLiteBackend(store, SystemClock()) as backend:
        (written,) = backend.stores().records.apply(SCOPE, [Create(record=record)])
    return written.record_id


def _retract(store: Path, record_id: str) -> None:
    with SQLiteBackend(store, SystemClock()) as backend:
        backend.stores().records.apply(SCOPE, [Retract(record_id=record_id)])


def _next_line(process: subprocess.Popen[str], timeout: float = 30.0) -> dict[str, object]:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    assert ready, "cairn changes --follow printed nothing"
    found: dict[str, object] = json.loads(process.stdout.readline())
    return found


def test_changes_lists_every_write_and_resumes_after_a_sequence(tmp_path: Path) -> None:
    store = tmp_path / "c.db"
    first = _write(store, "Drinks green tea")
    _retract(store, first)

    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [*CHANGES, "--store", str(store), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        check=False,
    )
    later = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [*CHANGES, "--store", str(store), "--after", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        check=False,
    )

    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["sequence"], r["kind"], r["record_id"]) for r in rows] == [
        (1, "created", first),
        (2, "deleted", first),
    ]
    assert "tea" not in done.stdout  # never content
    assert later.stdout.split("\t")[:2] == ["2", "deleted"]


def test_follow_sees_another_process_s_writes_and_stops_cleanly_on_ctrl_c(
    tmp_path: Path,
) -> None:
    store = tmp_path / "c.db"
    before = _write(store, "Drinks green tea")
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        [*CHANGES, "--store", str(store), "--follow", "--json", "--interval", "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        seen = [_next_line(process)]
        written = _write(store, "Lives in Lisbon")
        seen.append(_next_line(process))
        _retract(store, written)
        seen.append(_next_line(process))
    finally:
        process.send_signal(signal.SIGINT)
        _, notes = process.communicate(timeout=30)

    assert [(s["record_id"], s["kind"]) for s in seen] == [
        (before, "created"),
        (written, "created"),
        (written, "deleted"),
    ]
    assert process.returncode == 0, notes
    assert notes == "cairn changes: stopped\n"


def test_changes_of_a_missing_store_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    store = tmp_path / "missing.db"

    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [*CHANGES, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
        check=False,
    )

    assert done.returncode == 1
    assert done.stderr.startswith("cairn: error: no store at")
    assert len(done.stderr.splitlines()) == 1
    assert not store.exists()
