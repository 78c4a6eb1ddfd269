"""The real ``cairn`` command given wrong options: one line on what was wrong, nothing changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CAIRN = [sys.executable, "-m", "cairn"]
HIDDEN = ("demo-phase", "demo-agent-phase")


def _cairn(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [*CAIRN, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean, **(env or {})},
        check=False,
    )


@pytest.mark.parametrize(("typed", "suggested"), [("recal", "recall"), ("xyzzy", None)])
def test_an_unknown_command_lists_only_the_public_ones(typed: str, suggested: str | None) -> None:
    done = _cairn(typed)
    assert done.returncode == 2
    assert done.stderr.startswith("cairn: error: unknown command; ")
    assert "the commands are remember, recall, history, as-of, forget, replay, erase" in done.stderr
    assert not any(hidden in done.stderr for hidden in HIDDEN)
    assert (f"did you mean {suggested}?" in done.stderr) is (suggested is not None)


@pytest.mark.parametrize("option", ["--actor", "--memory"])
def test_an_empty_option_is_refused_not_replaced_by_the_environment(
    tmp_path: Path, option: str
) -> None:
    store = tmp_path / "s.db"
    env = {"CAIRN_ACTOR": "alice", "CAIRN_MEMORY": "default", "CAIRN_STORE": str(store)}
    done = _cairn("remember", "Alice keeps bees", option, "", env=env)
    assert done.returncode == 2
    assert done.stderr.startswith(f"cairn: error: {option} is empty: give it a value")
    assert not store.exists()


def test_an_empty_store_is_refused(tmp_path: Path) -> None:
    done = _cairn("as-of", "2026-01-01", "--actor", "alice", "--store", "")
    assert done.returncode == 2
    assert done.stderr.startswith("cairn: error: --store names no file")
