"""``cairn reindex`` on a real SQLite store whose records were embedded by another embedder
(the hashing one), re-embedded with the real ONNX model: recall then finds what it should,
nothing about the records changes, and a second run embeds nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from cairn.cli.main import main
from tests.processes.hashed_store import SCOPE, TEA, fillers, write_hashed_store

QUESTION = "what does the user drink?"
FILLERS = 60  # more than recall re-embeds a question (max_reembed 32), all sharing its words


def cairn(capsys: pytest.CaptureFixture[str], store: Path, *argv: str, actor: bool = True) -> str:
    capsys.readouterr()
    named = ["--actor", SCOPE.actor_id] if actor else []
    assert main(["--store", str(store), *named, *argv]) == 0
    return capsys.readouterr().out


def versions(store: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(store) as conn:
        return conn.execute(
            "SELECT record_id, version, status, content_digest, embedder_key, data"
            " FROM record_versions ORDER BY record_id, version"
        ).fetchall()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "cairn.db"
    write_hashed_store(path, [*fillers(FILLERS), TEA])
    return path


def test_a_store_embedded_by_another_embedder_recalls_its_answer_after_reindex(
    capsys: pytest.CaptureFixture[str], store: Path
) -> None:
    before = cairn(capsys, store, "recall", QUESTION)
    assert TEA not in before  # scored by keywords only: it shares no word with the question
    written = versions(store)

    out = cairn(capsys, store, "reindex", actor=False)  # every actor of the memory

    assert f"(1 actor(s)) with all-MiniLM-L6-v2-onnx-int8@384: {FILLERS + 1} of" in out
    assert TEA in cairn(capsys, store, "recall", QUESTION)  # the recall index rebuilt
    assert versions(store) == written  # no version, trust, content or embedding changed


def test_a_second_run_embeds_nothing(capsys: pytest.CaptureFixture[str], store: Path) -> None:
    cairn(capsys, store, "reindex")
    with sqlite3.connect(store) as conn:
        first = conn.execute("SELECT * FROM vectors ORDER BY 1, 2, 3, 4, 5").fetchall()

    out = cairn(capsys, store, "reindex")

    assert f"0 of {FILLERS + 1} live record(s) re-embedded, {FILLERS + 1} had a vector" in out
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT * FROM vectors ORDER BY 1, 2, 3, 4, 5").fetchall() == first


def test_doctor_names_the_records_reindex_would_embed(
    capsys: pytest.CaptureFixture[str], store: Path
) -> None:
    waiting = f"{FILLERS + 1} live heads have no vector of all-MiniLM-L6-v2-onnx-int8@384"
    assert waiting in cairn(capsys, store, "doctor")

    cairn(capsys, store, "reindex")

    assert "have no vector of" not in cairn(capsys, store, "doctor")


def test_another_actor_is_left_alone_when_one_is_named(
    capsys: pytest.CaptureFixture[str], store: Path
) -> None:
    out = cairn(capsys, store, "reindex", "--actor", "someone-else")

    assert "0 of 0 live record(s)" in out
    assert "have no vector of" in cairn(capsys, store, "doctor")


def test_a_missing_store_is_refused_and_not_created(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere.db"

    assert main(["--store", str(missing), "reindex"]) == 1

    assert "no store at" in capsys.readouterr().err
    assert not missing.exists()
