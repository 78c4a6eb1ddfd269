"""``cairn jobs``: list the jobs with their switches and last runs, run one, switch one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.cli.main import main
from cairn.clock import SystemClock
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.store.sqlite import SQLiteBackend

SCOPE = Scope(memory_id="default", actor_id="alice")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "cairn.db"
    with SQLiteBackend(path, SystemClock()) as backend:
        stores = backend.stores()
        for i in range(10):
            stores.events.append(
                SCOPE,
                EventInput(
                    session_id="s1",
                    event_timestamp=datetime(2026, 3, 2, tzinfo=UTC) + timedelta(minutes=i),
                    payload=(Conversational(role=Role.USER, text=f"We keep bees, hive {i}."),),
                ),
            )
    return path


def cairn(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def test_jobs_lists_runs_and_switches_the_rollup(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAIRN_MEMORY", raising=False)
    listed = cairn(capsys, "jobs", "--store", str(store))
    ran = cairn(capsys, "jobs", "run", "rollup", "--store", str(store))
    off = cairn(capsys, "jobs", "disable", "rollup", "--store", str(store))
    skipped = cairn(capsys, "jobs", "run", "rollup", "--store", str(store))
    again = cairn(capsys, "jobs", "--store", str(store))

    assert listed[0] == 0
    assert "- rollup: on (default)" in listed[1]
    assert "never run" in listed[1]
    assert ran[0] == 0
    assert "rollup done: 1 actor(s), 1 change(s)" in ran[1]
    assert off[1].strip() == "rollup: off for default"
    assert "rollup skipped: 0 actor(s), 0 change(s)" in skipped[1]
    assert "switched off for this memory" in skipped[1]
    assert "- rollup: off:" in again[1]
    lines = again[1].splitlines()
    assert "skipped" in lines[2]
    assert "done" in lines[3], "newest run first"
    assert "bees" not in again[1] + ran[1], "a run log holds no content"


def test_naming_no_job_to_run_is_a_usage_error(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = cairn(capsys, "jobs", "run", "--store", str(store))

    assert status == 2
    assert "name the job to run" in err


def test_reflection_is_listed_off_and_runs_once_enabled_with_the_real_embedder(
    store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.changes import Create, NewRecord, Vector
    from cairn.embed.onnx import OnnxEmbedder
    from cairn.models import Source, SourceKind
    from cairn.reflection_records import REFLECTION_STRATEGY

    monkeypatch.delenv("CAIRN_MEMORY", raising=False)
    embedder = OnnxEmbedder()
    texts = ["The user keeps two beehives in the garden.", "The user's beehives are in the garden."]
    with SQLiteBackend(store, SystemClock()) as backend:
        records = backend.stores().records
        for text, row in zip(texts, embedder.embed(texts), strict=True):
            values = tuple(float(v) for v in row)
            record = NewRecord(
                namespace="/facts/alice/",
                content=text,
                sources=(Source(kind=SourceKind.USER),),
                vector=Vector(embedder=embedder.identity, values=values),
            )
            records.apply(SCOPE, [Create(record=record)])

    listed = cairn(capsys, "jobs", "--store", str(store))
    off = cairn(capsys, "jobs", "run", "reflection", "--store", str(store))
    cairn(capsys, "jobs", "enable", "reflection", "--store", str(store))
    ran = cairn(capsys, "jobs", "run", "reflection", "--store", str(store))

    assert "- reflection: off (default): synthesise one insight" in listed[1]
    assert "reflection skipped" in off[1]
    assert "reflection done: 1 actor(s), 1 change(s)" in ran[1]
    assert "beehives" not in ran[1], "a run log holds no content"
    with SQLiteBackend(store, SystemClock()) as backend:
        heads = backend.stores().records.list_records(SCOPE, limit=10).items
    (made,) = [r for r in heads if r.strategy == REFLECTION_STRATEGY]
    assert made.content.startswith("2 memories concern beehives: The user keeps")
