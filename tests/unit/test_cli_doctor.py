"""``cairn doctor`` on real SQLite files: healthy, stuck work, a file that is not a store."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from cairn.changes import Create, NewRecord, Vector
from cairn.cli.main import main
from cairn.clock import FixedClock
from cairn.models import Conversational, EventInput, Role, Scope, Source, SourceKind
from cairn.rollout.index import RolloutState, TriggerPolicy
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder

SCOPE = Scope(memory_id="default", actor_id="tg:1")
POLICY = TriggerPolicy(strategy_ids=("facts",), message_count=2)


def talk(path: Path, clock: FixedClock, session: str, turns: int) -> list[str]:
    """Append ``turns`` counted turns; the ids of the rollouts the triggers claimed."""
    stores = SQLiteBackend(path, clock).stores()
    rollouts = stores.rollouts
    assert rollouts is not None
    claimed = []
    try:
        for n in range(turns):
            event = EventInput(
                session_id=session,
                event_timestamp=clock.now(),
                payload=(Conversational(role=Role.USER, text=f"private turn {n}"),),
            )
            appended = rollouts.append_counted(SCOPE, event, policy=POLICY)
            if appended.claim is not None:
                claimed.append(appended.claim.rollout_id)
            clock.advance(timedelta(seconds=1))
    finally:
        stores.close()
    return claimed


def test_a_healthy_store_is_reported_healthy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    talk(path, FixedClock(), "s1", 1)  # one message waiting for its trigger

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 0
    assert "integrity ok" in out
    assert "1 with messages waiting" in out
    assert out.rstrip().endswith("healthy")
    assert "private turn" not in out


def test_stuck_and_failed_rollouts_need_an_operator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    clock = FixedClock()  # long ago: whatever it left unfinished is stuck by now
    stuck, failed = talk(path, clock, "s1", 4)
    stores = SQLiteBackend(path, clock).stores()
    assert stores.rollouts is not None
    reason = "InvalidModelOutputError: the model's answer was not JSON"
    stores.rollouts.mark(SCOPE, failed, RolloutState.FAILED, now=clock.now(), reason=reason)
    stores.close()

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 1
    assert "not consumed yet: 1 claimed, 1 failed" in out
    assert f"stuck      {stuck} claimed" in out
    assert f"failed     {failed}: {reason}" in out
    assert "needs an operator" in out
    assert "private turn" not in out


def test_a_file_that_is_not_a_store_fails_its_integrity_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    path.write_bytes(b"this is not a SQLite database, just some bytes" * 100)

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 1
    assert "integrity not a readable cairn store" in out


def remember(path: Path, *contents: str, embedded: bool = False) -> list[str]:
    """File one user-stated fact per content; the record ids."""
    stores = SQLiteBackend(path, FixedClock()).stores()
    embedder = HashingEmbedder()
    try:
        records = [
            NewRecord(
                namespace="/facts/tg:1/",
                content=content,
                sources=(Source(kind=SourceKind.USER),),
                vector=Vector(
                    embedder=embedder.identity,
                    values=tuple(float(v) for v in embedder.embed([content])[0]),
                )
                if embedded
                else None,
            )
            for content in contents
        ]
        stores.records.apply(SCOPE, [Create(record=r) for r in records])
    finally:
        stores.close()
    return [r.record_id for r in records]


def test_a_store_whose_index_agrees_with_its_records_is_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    remember(path, "private fact one", "private fact two", embedded=True)
    remember(path, "private fact three")

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 0
    assert "index      1 scopes, 3 live heads: current" in out
    assert "vectors    2 of 3 live heads embedded; 1 scored by keywords" in out
    assert "private fact" not in out


def test_a_head_that_disagrees_with_its_version_is_not_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    first, _ = remember(path, "private fact one", "private fact two")
    with sqlite3.connect(path) as conn:  # what a bad restore or a hand edit leaves
        conn.execute("UPDATE record_heads SET status = 'retracted' WHERE record_id = ?", (first,))

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 1
    assert "integrity ok" in out  # SQLite's own check cannot see it
    assert "NOT current" in out
    assert f"1 heads disagree with their version: default|tg:1/{first}" in out
    assert "private fact" not in out


def test_rows_the_index_cannot_read_are_not_current(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cairn.db"
    (record,) = remember(path, "private fact one")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE record_versions SET data = '{}' WHERE record_id = ?", (record,))

    status = main(["doctor", "--store", str(path)])

    out = capsys.readouterr().out
    assert status == 1
    assert "cannot read the rows of default|tg:1 (TypeError)" in out
    assert "needs an operator" in out
