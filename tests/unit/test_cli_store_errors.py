"""The real ``cairn`` command pointed at a file that is not its store: refused, left untouched."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def _cairn(*args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    return subprocess.run(  # noqa: S603 - our own interpreter and arguments
        [sys.executable, "-m", "cairn", *args, "--actor", "alice"],
        capture_output=True,
        text=True,
        timeout=120,
        env=clean,
        check=False,
    )


@pytest.mark.onnx
@pytest.mark.parametrize("command", [("remember", "Alice keeps bees"), ("as-of", "2026-01-01")])
def test_another_applications_sqlite_file_is_refused_and_left_byte_for_byte(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users (name) VALUES ('sam')")
    conn.close()
    before = hashlib.sha256(other.read_bytes()).hexdigest()

    done = _cairn(*command, "--store", str(other))

    assert done.returncode == 1
    assert done.stderr == (
        f"cairn: error: the SQLite file at {other} is not a cairn store (it holds other tables: "
        "users); cairn leaves it untouched: point --store (or CAIRN_STORE) at a new file or an "
        "existing cairn store\n"
    )
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.db"]
