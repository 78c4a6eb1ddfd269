"""The real ``cairn`` console script, run in subprocesses against a store in ``tmp_path``.

Every invocation is a fresh process, so what one command wrote and another read went through
the SQLite file on disk. Commands that embed (remember, recall, demo) load the real ONNX model.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cairn.changes import Create, NewRecord
from cairn.clock import SystemClock
from cairn.models import Conversational, EventInput, Role, Scope, Source, SourceKind, Status
from cairn.recall.render import CAVEAT, EMPTY_LINE, HEADING, WEAK_LINE
from cairn.store.sqlite import SQLiteBackend
from cairn.visible_text import is_invisible

RECORD_ID = re.compile(r"mem-[a-zA-Z0-9_-]{36,46}")
JOURNAL_LINE = re.compile(r"^journal: (\S+)$", flags=re.MULTILINE)
UNKNOWN_ID = "mem-000000000000aaaaaaaaaaaaaaaaaaaaaaaa"
ALICE = Scope(memory_id="default", actor_id="alice")
BOB = Scope(memory_id="default", actor_id="bob")


def _console_script() -> str:
    beside = Path(sys.executable).parent / "cairn"
    found = str(beside) if beside.exists() else shutil.which("cairn")
    assert found, "the `cairn` console script is not installed; run `make .venv/.installed`"
    return found


Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store" / "cairn.db"


@pytest.fixture
def cli(store: Path) -> Cli:
    """Run ``cairn ARGS --store <tmp> --actor alice`` with no CAIRN_* variable inherited."""
    script = _console_script()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}

    def run(
        *args: str, actor: str | None = "alice", env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        whose = ["--actor", actor] if actor is not None else []
        return subprocess.run(  # noqa: S603 - our own console script
            [script, *args, "--store", str(store), *whose],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env={**clean, **(env or {})},
            check=False,
        )

    return run


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def seed(store: Path, scope: Scope, *contents: str) -> list[str]:
    """Write records (and one event) straight through the SQLite backend, no model needed."""
    stores = SQLiteBackend(store, SystemClock()).stores()
    try:
        stores.events.append(
            scope,
            EventInput(
                session_id="s1",
                event_timestamp=SystemClock().now(),
                payload=(Conversational(role=Role.USER, text="hello"),),
            ),
        )
        changes = [
            Create(
                record=NewRecord(
                    namespace=f"/facts/{scope.actor_id}/",
                    content=text,
                    sources=(Source(kind=SourceKind.USER),),
                )
            )
            for text in contents
        ]
        return [v.record_id for v in stores.records.apply(scope, changes)]
    finally:
        stores.close()


@pytest.mark.slow
@pytest.mark.onnx
def test_a_remembered_fact_is_recalled_replayed_forgotten_and_erased_across_processes(
    cli: Cli,
) -> None:
    written = ok(
        cli("remember", "The user drinks oat milk flat whites", "--category", "preference")
    )
    match = RECORD_ID.search(written)
    assert match is not None
    assert "v1" in written
    assert "/preferences/alice/" in written
    coffee = match[0]
    ok(cli("remember", "The user's office is in Lisbon"))

    recalled = ok(cli("recall", "What coffee does the user drink?"))
    assert f"{coffee} |" in recalled
    assert "oat milk flat whites" in recalled
    journal = JOURNAL_LINE.search(recalled)
    assert journal is not None
    replayed = ok(cli("replay", journal[1]))
    assert "replay: matches the journaled block" in replayed
    assert "oat milk flat whites" in replayed

    forgot = ok(cli("forget", coffee, "--reason", "switched to tea"))
    assert "content is kept" in forgot
    assert f"cairn erase {coffee}" in forgot
    after = json.loads(ok(cli("recall", "What coffee does the user drink?", "--json")))
    assert after["journal_id"]
    assert coffee not in [entry["record_id"] for entry in after["entries"]]

    versions = json.loads(ok(cli("history", coffee, "--json")))["versions"]
    assert [(v["version"], v["status"]) for v in versions] == [(1, "active"), (2, "retracted")]
    assert all(v["sources"] == [{"kind": "user"}] and v["trust"] == "trusted" for v in versions)
    assert versions[1]["retract_reason"] == "switched to tea"
    before_forget = ok(cli("as-of", versions[0]["created_at"]))
    assert coffee in before_forget
    assert "oat milk flat whites" in before_forget

    erased = ok(cli("erase", coffee))
    assert coffee in erased
    assert "2 version(s)" in erased
    shown = ok(cli("history", coffee))
    assert "oat milk" not in shown
    assert shown.count("erased") >= 2
    tombstones = json.loads(ok(cli("history", coffee, "--json")))["versions"]
    assert [v["status"] for v in tombstones] == ["erased", "erased"]
    assert [v["content"] for v in tombstones] == [None, None]
    assert [v["content_digest"] for v in tombstones] == [v["content_digest"] for v in versions]
    # A replay that no longer matches is a failed check: exit 1, the reason on stdout.
    after_erase = cli("replay", journal[1])
    assert after_erase.returncode == 1
    assert "does NOT match" in after_erase.stdout


def test_erasing_a_whole_actor_needs_yes_and_leaves_other_actors_alone(
    cli: Cli, store: Path
) -> None:
    (alice_id,) = seed(store, ALICE, "Alice keeps bees")
    (bob_id,) = seed(store, BOB, "Bob keeps goats")

    refused = cli("erase", "--all-of-actor")
    assert refused.returncode != 0
    assert "--yes" in refused.stderr
    report = ok(cli("erase", "--all-of-actor", "--yes"))
    assert "1 record(s), 1 event(s)" in report

    stores = SQLiteBackend(store).stores()
    try:
        assert stores.records.get(ALICE, alice_id).status is Status.ERASED
        assert stores.events.list_events(ALICE, "s1").items == ()
        assert stores.records.get(BOB, bob_id).content == "Bob keeps goats"
        assert len(stores.events.list_events(BOB, "s1").items) == 1
    finally:
        stores.close()


@pytest.mark.parametrize(
    ("args", "actor", "named"),
    [
        (("history", UNKNOWN_ID), "alice", "does not exist"),
        (("recall", "coffee", "--top-k", "0"), "alice", "--top-k"),
        (("as-of", "last tuesday"), "alice", "ISO 8601"),
        (("history", UNKNOWN_ID), None, "--actor"),
        (("remember", "a fact"), "not a valid actor!", "--actor"),
        (("replay", "jrn-unknown"), "alice", "does not exist"),
        (("forget", UNKNOWN_ID), "alice", "does not exist"),
        (("frobnicate",), "alice", "unknown command"),
    ],
)
def test_a_bad_command_fails_with_one_line_saying_what_was_wrong(
    cli: Cli, store: Path, args: tuple[str, ...], actor: str | None, named: str
) -> None:
    seed(store, ALICE, "Alice keeps bees")
    result = cli(*args, actor=actor)
    assert result.returncode != 0
    assert result.stdout == ""
    assert result.stderr.startswith("cairn: error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert named in result.stderr
    assert "Traceback" not in result.stderr


def test_a_store_that_is_not_a_database_is_one_line_too(cli: Cli, store: Path) -> None:
    store.parent.mkdir(parents=True)
    store.write_bytes(b"not a database, just bytes" * 100)
    result = cli("history", UNKNOWN_ID)
    assert result.returncode != 0
    assert result.stderr.startswith("cairn: error: ")
    assert result.stderr.count("\n") == 1
    assert str(store) in result.stderr


def test_reading_a_store_that_does_not_exist_says_so_and_creates_nothing(
    cli: Cli, store: Path
) -> None:
    result = cli("as-of", "2026-01-01")
    assert result.returncode != 0
    assert "no store at" in result.stderr
    assert not store.exists()


def test_cairn_debug_shows_the_traceback(cli: Cli, store: Path) -> None:
    seed(store, ALICE, "Alice keeps bees")
    result = cli("history", UNKNOWN_ID, env={"CAIRN_DEBUG": "1"})
    assert result.returncode != 0
    assert "Traceback" in result.stderr
    assert "RecordNotFoundError" in result.stderr


def test_actor_and_memory_can_come_from_the_environment(cli: Cli, store: Path) -> None:
    (record_id,) = seed(store, ALICE, "Alice keeps bees")
    env = {"CAIRN_ACTOR": "alice", "CAIRN_MEMORY": "default"}
    shown = ok(cli("history", record_id, actor=None, env=env))
    assert "Alice keeps bees" in shown
    assert "sources: user" in shown
    other = cli("history", record_id, actor=None, env={**env, "CAIRN_ACTOR": "bob"})
    assert other.returncode != 0
    assert "does not exist" in other.stderr


def test_options_may_come_before_the_command_and_the_last_one_given_wins(
    store: Path,
) -> None:
    (record_id,) = seed(store, ALICE, "Alice keeps bees")
    where = ["--store", str(store)]
    result = subprocess.run(  # noqa: S603 - our own console script
        [_console_script(), *where, "--actor", "bob", "history", record_id, "--actor", "alice"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")},
        check=False,
    )
    assert "Alice keeps bees" in ok(result)


@pytest.mark.slow
@pytest.mark.onnx
def test_the_demo_files_in_one_process_and_recalls_and_replays_in_others(
    cli: Cli, tmp_path: Path
) -> None:
    demo_store = tmp_path / "demo" / "demo.db"
    demo_store.parent.mkdir()
    demo_store.write_bytes(b"left over from an older run")  # --fresh must clear it
    script = _console_script()
    result = subprocess.run(  # noqa: S603 - our own console script
        [script, "demo", "--fresh", "--store", str(demo_store)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "filed" in out
    assert "The user is allergic to peanuts" in out
    assert "The user prefers oat milk flat whites in the morning." in out
    pids = set(re.findall(r"\(process (\d+),", out))
    assert len(pids) == 2
    blocks = out.split("question: ")
    assert len(blocks) == 3
    assert "breakfast meeting" in blocks[1]
    # The allergy and the drink the user stated in the first session are recalled for the
    # breakfast order.
    breakfast = blocks[1].split("journal:")[0]
    assert "The user is allergic to peanuts" in breakfast
    assert "The user prefers oat milk flat whites in the morning." in breakfast
    assert "Postgres" in blocks[2]
    assert out.count("replay: matches the journaled block") == 2


def test_history_and_as_of_show_invisible_characters_as_markers_and_json_keeps_them(
    cli: Cli, store: Path
) -> None:
    hidden = "Allergic\u202e to\u200b penicillin\U000e0049\x1b[2J"
    (record_id,) = seed(store, Scope(memory_id="default", actor_id="alice"), hidden)

    shown = ok(cli("history", record_id)) + ok(cli("as-of", "2100-01-01T00:00:00Z"))
    exact = json.loads(ok(cli("history", record_id, "--json")))

    assert not [ch for ch in shown if is_invisible(ch) and ch != "\n"], repr(shown)
    for marker in ("<U+202E>", "<U+200B>", "<U+E0049>", "<U+001B>"):
        assert shown.count(marker) == 2
    assert [v["content"] for v in exact["versions"]] == [hidden]  # scripts get it exactly


@pytest.mark.onnx
def test_the_readme_example_recalls_its_memory_and_says_the_match_is_weak(cli: Cli) -> None:
    ok(cli("remember", "I prefer green tea in the morning", "--category", "preference"))
    block = ok(cli("recall", "what does the user drink?"))
    lines = block.splitlines()
    assert lines[:2] == [HEADING, CAVEAT]
    # MiniLM puts this pair at cosine 0.285, under the 0.3 floor: the weak fallback answers.
    assert lines[2] == WEAK_LINE
    assert lines[3].endswith("| trusted | I prefer green tea in the morning")
    assert EMPTY_LINE not in block
