"""The everyday commands as a user runs them (the real ``cairn`` in subprocesses, real SQLite,
the real ONNX model): repeats fold in, stdin, ls, stats, and the errors that used to mislead."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.store.sqlite import SQLiteBackend

pytestmark = [pytest.mark.onnx, pytest.mark.slow]

RECORD_ID = re.compile(r"mem-[a-zA-Z0-9_-]{36,46}")


def _cairn(
    store: Path, *args: str, actor: str | None = "alice", stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    whose = ["--actor", actor] if actor else []
    return subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "cairn", *args, "--store", str(store), *whose],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def _journal_entries(store: Path) -> int:
    with SQLiteBackend(store) as backend:
        return sum(c.journal_entries for c in backend.inventory())


def test_a_repeat_folds_in_and_stdin_files_one_fact_per_line(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    first = _ok(_cairn(store, "remember", "Alice keeps bees"))
    again = _ok(_cairn(store, "remember", "Alice keeps bees"))
    (record_id,) = RECORD_ID.findall(first)
    assert again.startswith(f"remembered {record_id} v2 (already held: seen 2x)")

    piped = _ok(_cairn(store, "remember", "-", stdin="Alice rows\n\nAlice sings\nAlice rows\n"))
    assert piped.count("remembered ") == 2  # a blank line skipped, a repeated line filed once
    listed = _ok(_cairn(store, "ls", "records"))
    assert listed.splitlines()[0] == "3 record(s), active"
    assert all(fact in listed for fact in ("Alice keeps bees", "Alice rows", "Alice sings"))


def test_multi_line_text_and_an_empty_stdin_are_refused_with_what_to_do(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    several = _cairn(store, "remember", "first line\nsecond line")
    assert several.returncode == 2
    assert "one fact on one line" in several.stderr
    assert "`cairn remember -`" in several.stderr
    empty = _cairn(store, "remember", "-", stdin="\n\n")
    assert empty.returncode == 2
    assert "no fact on standard input" in empty.stderr
    assert not store.exists()


def test_a_mistyped_actor_is_named_and_nothing_is_journaled(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    _ok(_cairn(store, "remember", "Alice keeps bees"))
    typo = _cairn(store, "recall", "bees", actor="alcie")
    assert typo.returncode == 1
    assert "actor 'alcie' has no records or events" in typo.stderr
    assert "(actors here: alice)" in typo.stderr
    assert _journal_entries(store) == 0
    _ok(_cairn(store, "recall", "bees"))
    assert _journal_entries(store) == 1


def test_forget_twice_erase_twice_and_replay_after_erase_say_what_happened(
    tmp_path: Path,
) -> None:
    store = tmp_path / "s.db"
    (record_id,) = RECORD_ID.findall(_ok(_cairn(store, "remember", "Alice keeps bees")))
    recalled = _ok(_cairn(store, "recall", "Alice keeps bees"))
    journal_id = recalled.splitlines()[-1].removeprefix("journal: ")
    _ok(_cairn(store, "forget", record_id))

    twice = _cairn(store, "forget", record_id)
    assert twice.returncode == 1
    assert "is already retracted (forgotten)" in twice.stderr
    assert "successor" not in twice.stderr

    assert "erased 2 version(s)" in _ok(_cairn(store, "erase", record_id))
    again = _ok(_cairn(store, "erase", record_id))
    assert again.startswith(f"{record_id} was already erased: nothing left to destroy")
    assert "erased 2 version(s)" not in again

    replayed = _cairn(store, "replay", journal_id)
    assert replayed.returncode == 1
    assert f"erased since: {record_id}" in replayed.stdout
    assert replayed.stderr == (
        "cairn: error: 1 of 1 replay(s) do not match what was recalled; see the reasons above\n"
    )


def test_ls_and_stats_show_what_the_store_holds_and_write_nothing(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    _ok(_cairn(store, "remember", "Alice keeps bees"))
    (bob_record,) = RECORD_ID.findall(_ok(_cairn(store, "remember", "Bob rows", actor="bob")))
    _ok(_cairn(store, "forget", bob_record, actor="bob"))

    actors = _ok(_cairn(store, "ls", "actors", actor=None)).splitlines()
    assert [line.split()[0] for line in actors] == ["alice", "bob"]
    assert actors[1].startswith("bob  1 retracted record(s) (2 version(s))")
    assert _ok(_cairn(store, "ls", "memories", actor=None)) == "default  2 actor(s)\n"
    assert "0 record(s), active" in _ok(_cairn(store, "ls", "records", actor="bob"))
    retracted = json.loads(
        _ok(_cairn(store, "ls", "records", "--status", "retracted", "--json", actor="bob"))
    )
    assert [r["record_id"] for r in retracted["records"]] == [bob_record]

    stats = json.loads(_ok(_cairn(store, "stats", "--json", actor=None)))
    assert [(s["actor_id"], s["records"], s["versions"]) for s in stats["scopes"]] == [
        ("alice", {"active": 1}, 1),
        ("bob", {"retracted": 1}, 2),
    ]
    assert stats["bytes"] > 0
    assert _journal_entries(store) == 0
    needs_actor = _cairn(store, "ls", "records", actor=None)
    assert needs_actor.returncode == 2
    assert "pass --actor" in needs_actor.stderr


def test_access_counts_come_from_recalls_through_the_job_and_show_in_ls(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    (bees,) = RECORD_ID.findall(_ok(_cairn(store, "remember", "Alice keeps bees")))
    _ok(_cairn(store, "remember", "Alice drives a red car"))
    _ok(_cairn(store, "recall", "bees"))
    _ok(_cairn(store, "recall", "who keeps bees"))

    before = json.loads(_ok(_cairn(store, "ls", "records", "--json")))
    counted = _ok(_cairn(store, "jobs", "run", "access", actor=None))
    recounted = _ok(_cairn(store, "jobs", "run", "access", actor=None))
    after = json.loads(_ok(_cairn(store, "ls", "records", "--json")))
    linked = _ok(_cairn(store, "jobs", "run", "link", actor=None))

    assert {r["access_count"] for r in before["records"]} == {0}  # recall wrote nothing
    shown = {r["record_id"]: r["access_count"] for r in after["records"]}
    assert shown[bees] == 2
    assert "access done: 1 actor(s)" in counted
    assert "access done: 1 actor(s), 0 change(s)" in recounted  # never counted twice
    assert "shown 2×" in _ok(_cairn(store, "ls", "records"))
    assert "link done: 1 actor(s)" in linked
    stats = json.loads(_ok(_cairn(store, "stats", "--json", actor=None)))
    assert stats["scopes"][0]["access_counted"] >= 2


def test_decay_and_evolution_are_off_until_enabled_and_decay_shows_in_ls(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    _ok(_cairn(store, "remember", "Alice keeps bees"))

    off = _ok(_cairn(store, "jobs", "run", "decay", actor=None))
    unmeasured = json.loads(_ok(_cairn(store, "ls", "records", "--json")))
    _ok(_cairn(store, "jobs", "enable", "decay", actor=None))
    on = _ok(_cairn(store, "jobs", "run", "decay", actor=None))
    measured = json.loads(_ok(_cairn(store, "ls", "records", "--json")))

    assert "decay skipped" in off
    assert [r["salience"] for r in unmeasured["records"]] == [None]
    assert "decay done: 1 actor(s), 1 change(s)" in on
    (value,) = [r["salience"] for r in measured["records"]]
    assert 0.99 <= value <= 1.0  # just confirmed
    assert ", salience " in _ok(_cairn(store, "ls", "records"))
    assert "- decay: on" in _ok(_cairn(store, "jobs", actor=None))
    assert "evolution skipped" in _ok(_cairn(store, "jobs", "run", "evolution", actor=None))
    _ok(_cairn(store, "jobs", "enable", "evolution", actor=None))
    evolved = _ok(_cairn(store, "jobs", "run", "evolution", actor=None))
    assert "evolution done: 1 actor(s), 0 change(s)" in evolved  # no links, nothing to add
