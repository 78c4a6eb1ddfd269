"""``cairn.toml`` under the real command: below flags and the environment, errors that name it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cairn.changes import Create, NewRecord
from cairn.clock import SystemClock
from cairn.models import Scope, Source, SourceKind
from cairn.store.sqlite import SQLiteBackend


def _seed(store: Path, actor: str, text: str) -> None:
    stores = SQLiteBackend(store, SystemClock()).stores()
    try:
        record = NewRecord(
            namespace=f"/facts/{actor}/", content=text, sources=(Source(kind=SourceKind.USER),)
        )
        stores.records.apply(Scope(memory_id="default", actor_id=actor), [Create(record=record)])
    finally:
        stores.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "config" / "cairn").mkdir(parents=True)
    return tmp_path


def _cairn(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith(("CAIRN_", "XDG_")) and k != "HOME"
    }
    clean.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"), **env)
    return subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "cairn", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=clean,
        check=False,
    )


def _configure(home: Path, text: str) -> Path:
    path = home / "config" / "cairn" / "cairn.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_config_file_names_actor_and_store_and_flags_and_env_win(home: Path) -> None:
    store, other = home / "configured.db", home / "other.db"
    _seed(store, "alice", "Alice keeps bees")
    _seed(store, "bob", "Bob rows boats")
    _seed(other, "alice", "Alice in the other store")
    _configure(home, f'actor = "alice"\nstore = "{store}"\n')

    assert "Alice keeps bees" in _cairn(home, "as-of", "2099-01-01").stdout
    assert "Bob rows boats" in _cairn(home, "as-of", "2099-01-01", CAIRN_ACTOR="bob").stdout
    flagged = _cairn(home, "as-of", "2099-01-01", "--actor", "bob", CAIRN_ACTOR="alice")
    assert "Bob rows boats" in flagged.stdout
    moved = _cairn(home, "as-of", "2099-01-01", CAIRN_STORE=str(other))
    assert "Alice in the other store" in moved.stdout


def test_a_home_relative_store_is_expanded(home: Path) -> None:
    _seed(home / "mine.db", "alice", "Alice keeps bees")
    _configure(home, 'actor = "alice"\nstore = "~/mine.db"\n')
    assert "Alice keeps bees" in _cairn(home, "as-of", "2099-01-01").stdout


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('actor = "alice', "is not valid TOML"),
        ('actor = "alice"\nactr = "bob"\n', "sets actr, which cairn does not know"),
        ("actor = 12\n", "actor must be a non-empty string"),
    ],
)
def test_a_bad_config_file_is_named_with_what_to_fix(home: Path, text: str, said: str) -> None:
    path = _configure(home, text)
    done = _cairn(home, "as-of", "2099-01-01", "--store", str(home / "s.db"))
    assert done.returncode == 2
    assert done.stderr.startswith("cairn: error: ")
    assert str(path) in done.stderr
    assert said in done.stderr
    assert not (home / "s.db").exists()


def test_cairn_config_naming_a_missing_file_is_an_error(home: Path) -> None:
    done = _cairn(home, "as-of", "2099-01-01", "--actor", "a", CAIRN_CONFIG=str(home / "no.toml"))
    assert done.returncode == 2
    assert "CAIRN_CONFIG names" in done.stderr
