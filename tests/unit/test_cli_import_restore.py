"""``cairn export`` then ``cairn import --format cairn`` into an empty store is a lossless
restore: real processes, SQLite, the ONNX model, a history made by extraction and by hand."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.local.memory import open_memory

pytestmark = [pytest.mark.onnx, pytest.mark.slow]

RECORD_ID = re.compile(r"mem-[a-zA-Z0-9_-]{36,46}")
JOURNAL_LINE = re.compile(r"^.*journal.*$", re.MULTILINE | re.IGNORECASE)


def _run(store: Path, *args: str, actor: str | None = "sam") -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    whose = ["--actor", actor] if actor else []
    return subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "cairn", *args, "--store", str(store), *whose],
        capture_output=True,
        text=True,
        timeout=180,
        env=clean,
        check=False,
    )


def _cairn(store: Path, *args: str, actor: str | None = "sam") -> str:
    done = _run(store, *args, actor=actor)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _source_store(path: Path) -> None:
    """Records of every kind: extracted from a session (model sources, a correction that
    supersedes), remembered twice (a fold-in), inferred, forgotten and erased."""
    with open_memory(path, actor="sam") as memory:
        with memory.session("s-1") as session:
            session.add_turn("USER", "I live in Lyon and I prefer green tea in the morning.")
            session.add_turn("ASSISTANT", "Noted.")
        with memory.session("s-2") as session:
            session.add_turn("USER", "Actually, I live in Portland now.")
            session.add_turn("ASSISTANT", "Portland it is.")
    _cairn(path, "remember", "Sam keeps bees")
    _cairn(path, "remember", "Sam keeps bees")
    _cairn(path, "remember", "Sam rows on Sundays", "--source", "model")
    (gone,) = RECORD_ID.findall(_cairn(path, "remember", "Sam smokes"))
    _cairn(path, "forget", gone)
    (secret,) = RECORD_ID.findall(_cairn(path, "remember", "Sam's door code is 4412"))
    _cairn(path, "erase", secret)
    _cairn(path, "recall", "what does Sam keep?")
    _cairn(path, "jobs", "run", "access", actor=None)  # counts the recall's showings
    _cairn(path, "jobs", "enable", "decay", actor=None)
    _cairn(path, "jobs", "run", "decay", actor=None)  # measures salience beside the counts
    _link_two_records(path)


def _link_two_records(path: Path) -> None:
    """A link as the link job proposes one: model-sourced, so untrusted."""
    from datetime import UTC, datetime

    from cairn.links import Link
    from cairn.local.store import all_records
    from cairn.models import EdgeKind, Scope, Source, SourceKind
    from cairn.store.sqlite import SQLiteBackend

    scope = Scope(memory_id="default", actor_id="sam")
    stores = SQLiteBackend(path).stores()
    try:
        first, second = sorted(r.record_id for r in all_records(stores, scope))[:2]
        assert stores.links is not None
        stores.links.put(
            scope,
            Link(
                memory_id="default",
                actor_id="sam",
                from_id=first,
                kind=EdgeKind.RELATES_TO,
                to_id=second,
                sources=(Source(kind=SourceKind.MODEL, run_id="run-link-1"),),
                created_at=datetime(2026, 3, 2, tzinfo=UTC),
            ),
        )
    finally:
        stores.close()


def test_export_import_export_gives_the_same_lines_and_the_same_answers(tmp_path: Path) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    _source_store(source)
    exported = _cairn(source, "export", actor=None)
    every = [json.loads(line) for line in exported.splitlines()]
    lines = [line for line in every if line["section"] == "record"]
    links = [line for line in every if line["section"] == "link"]
    counted = [line for line in every if line["section"] == "access"]
    assert links
    assert {link["sources"][0]["kind"] for link in links} == {"model"}  # kept untrusted
    assert counted
    assert any(line["count"] for line in counted)
    assert any(line["salience"] for line in counted)
    statuses = {v["status"] for line in lines for v in line["versions"]}
    assert statuses >= {"active", "superseded", "retracted", "erased"}
    assert any(v["seen_count"] == 2 for line in lines for v in line["versions"])
    dump = tmp_path / "sam.jsonl"
    dump.write_text(exported, encoding="utf-8")

    first = _cairn(target, "import", str(dump))
    again = _cairn(target, "import", str(dump))

    assert first.startswith(f"imported {len(lines)} record(s) into 'sam'; 0 already held")
    shown = sum(line["count"] is not None for line in counted)
    measured = sum(line["salience"] is not None for line in counted)
    assert (
        f"; {len(links)} link(s), {shown} access count(s) and {measured} salience value(s) "
        "restored" in first
    )
    assert again.startswith(f"imported 0 record(s) into 'sam'; {len(lines)} already held")
    assert "; 0 link(s), 0 access count(s) and 0 salience value(s) restored" in again
    assert _cairn(target, "export", actor=None) == exported
    for line in lines:
        rid = line["record_id"]
        assert _cairn(target, "history", rid) == _cairn(source, "history", rid)
    for query in ("where does Sam live?", "what does Sam drink?", "bees"):
        here, there = _cairn(source, "recall", query), _cairn(target, "recall", query)
        assert JOURNAL_LINE.sub("", here) == JOURNAL_LINE.sub("", there)
        (journal,) = re.findall(r"jrn-[0-9a-f]+", there)
        assert _run(target, "replay", journal).returncode == 0


def test_an_import_that_collides_with_another_history_writes_nothing(tmp_path: Path) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    (bees,) = RECORD_ID.findall(_cairn(source, "remember", "Sam keeps bees"))
    _cairn(source, "remember", "Sam rows on Sundays")
    dump = tmp_path / "sam.jsonl"
    dump.write_text(_cairn(source, "export", actor=None), encoding="utf-8")
    _cairn(target, "import", str(dump))
    _cairn(source, "remember", "Sam keeps bees")  # the source moves on: bees is v2 there
    _cairn(source, "remember", "Sam reads at night")
    dump.write_text(_cairn(source, "export", actor=None), encoding="utf-8")
    before = _cairn(target, "export", actor=None)

    refused = _run(target, "import", str(dump))

    assert refused.returncode == 2
    assert f"record {bees!r} is held here with another history; nothing was imported" in (
        refused.stderr
    )
    assert _cairn(target, "export", actor=None) == before


def test_a_forged_history_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    _cairn(source, "remember", "Sam rows on Sundays", "--source", "model")
    _cairn(source, "remember", "Sam keeps bees")
    (inferred, stated) = [json.loads(x) for x in _cairn(source, "export", actor=None).splitlines()]
    laundered = dict(inferred)
    user_version = {**stated["versions"][0], "record_id": inferred["record_id"], "version": 2}
    laundered["versions"] = [inferred["versions"][0], user_version]
    dump = tmp_path / "forged.jsonl"
    dump.write_text(json.dumps(stated) + "\n" + json.dumps(laundered) + "\n", encoding="utf-8")

    refused = _run(target, "import", str(dump))

    assert refused.returncode == 2
    assert "trust never rises" in refused.stderr
    assert "nothing was imported" in refused.stderr
    assert not target.exists()


def test_a_restored_record_is_placed_so_the_api_finds_it_by_id(tmp_path: Path) -> None:
    from cairn.changes import Create, NewRecord
    from cairn.cli.import_restore import restore_histories
    from cairn.clock import FixedClock
    from cairn.models import Scope, Source, SourceKind
    from cairn.store.sqlite import SQLiteBackend
    from cairn.testing import HashingEmbedder

    scope = Scope(memory_id="default", actor_id="sam")
    note = NewRecord(
        namespace="/facts/sam/", content="Sam keeps bees", sources=(Source(kind=SourceKind.USER),)
    )
    source = SQLiteBackend(tmp_path / "a.db", FixedClock()).stores()
    target = SQLiteBackend(tmp_path / "b.db", FixedClock()).stores()
    try:
        (written,) = source.records.apply(scope, [Create(record=note)])
        history = source.records.history(scope, written.record_id)
        done = restore_histories(target, scope, [history], HashingEmbedder())
        assert target.directory is not None
        placed = target.directory.locate("default", written.record_id)
    finally:
        source.close()
        target.close()
    assert (done.restored, done.held) == (1, 0)
    assert (placed.actor_id, placed.namespace) == ("sam", "/facts/sam/")
