"""``cairn export`` / ``cairn import`` as a user runs them: real processes, SQLite, ONNX."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.onnx, pytest.mark.slow]

RECORD_ID = re.compile(r"mem-[a-zA-Z0-9_-]{36,46}")


def _cairn(store: Path, *args: str, actor: str | None = "alice") -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    whose = ["--actor", actor] if actor else []
    done = subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "cairn", *args, "--store", str(store), *whose],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _failing(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "cairn", *args, "--store", str(store), "--actor", "alice"],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )


def test_an_export_holds_every_version_with_its_sources_and_imports_once(tmp_path: Path) -> None:
    source, target = tmp_path / "a.db", tmp_path / "b.db"
    (bees,) = RECORD_ID.findall(_cairn(source, "remember", "Alice keeps bees"))
    _cairn(source, "remember", "Alice keeps bees")  # folded in: v2
    (rows,) = RECORD_ID.findall(_cairn(source, "remember", "Alice rows", "--source", "model"))
    (gone,) = RECORD_ID.findall(_cairn(source, "remember", "Alice smokes"))
    _cairn(source, "forget", gone)

    lines = [json.loads(line) for line in _cairn(source, "export", actor=None).splitlines()]
    by_id = {line["record_id"]: line for line in lines if line["section"] == "record"}
    assert set(by_id) == {bees, rows, gone}
    assert all(line["format"] == "cairn.export/2" for line in lines)
    assert [v["version"] for v in by_id[bees]["versions"]] == [1, 2]
    assert by_id[bees]["versions"][-1]["seen_count"] == 2
    assert [s["kind"] for s in by_id[rows]["versions"][0]["sources"]] == ["model"]
    assert by_id[rows]["versions"][0]["trust"] == "untrusted"
    assert by_id[gone]["versions"][-1]["status"] == "retracted"

    export = tmp_path / "alice.jsonl"
    export.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    first = _cairn(target, "import", str(export))
    again = _cairn(target, "import", str(export))
    # Into its own scope every record is restored as it was, the forgotten one too.
    assert first.startswith("imported 3 record(s) into 'alice'; 0 already held")
    assert again.startswith("imported 0 record(s) into 'alice'; 3 already held")

    imported = json.loads(_cairn(target, "ls", "records", "--json"))["records"]
    trust = {r["content"]: r["trust"] for r in imported}
    assert trust == {"Alice keeps bees": "trusted", "Alice rows": "untrusted"}  # never raised
    assert "Alice smokes" not in trust  # a forgotten record is not revived
    restored = json.loads(_cairn(target, "history", gone, "--json"))["versions"]
    assert [v["status"] for v in restored] == ["active", "retracted"]

    for_bob = _cairn(target, "import", str(export), actor="bob")  # another scope: live copies
    assert for_bob.startswith("imported 2 record(s) into 'bob'")
    assert "/facts/bob/" in _cairn(target, "ls", "records", actor="bob")


def test_agentcore_and_mem0_exports_come_in_as_imported_records(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    agentcore = tmp_path / "records.json"
    agentcore.write_text(
        json.dumps(
            {
                "memoryRecordSummaries": [
                    {
                        "memoryRecordId": "mem-abc",
                        "content": {"text": "The user plays chess on Sundays."},
                        "namespaces": ["/facts/u1/"],
                        "createdAt": "2026-01-01T00:00:00Z",
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(
        json.dumps({"results": [{"id": "7", "memory": "Likes jazz", "user_id": "u1"}]}),
        encoding="utf-8",
    )
    _cairn(store, "import", str(agentcore), "--format", "agentcore")
    _cairn(store, "import", str(mem0), "--format", "mem0")

    records = json.loads(_cairn(store, "ls", "records", "--json"))["records"]
    assert sorted(r["content"] for r in records) == [
        "Likes jazz",
        "The user plays chess on Sundays.",
    ]
    assert {(r["trust"], r["sources"][0]["kind"]) for r in records} == {("untrusted", "import")}


def test_a_file_in_the_wrong_format_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    mem0 = tmp_path / "mem0.json"
    mem0.write_text(json.dumps({"results": [{"memory": "Likes jazz"}]}), encoding="utf-8")
    done = _failing(store, "import", str(mem0))  # the default format is cairn's
    assert done.returncode == 2
    assert (
        "line 1 is not a line of a cairn export (cairn.export/2, or cairn.export/1); check --format"
        in done.stderr
    )
    assert not store.exists()
