"""The real ``cairn`` command pointed at a file that is not its store: refused, left untouched."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def _read_only(store: Path) -> Iterator[None]:
    """The store file and its directory unwritable for this process, root included."""
    targets = [store, store.parent]
    if os.geteuid() != 0:
        store.chmod(0o444)
        store.parent.chmod(0o555)
        try:
            yield
        finally:
            store.parent.chmod(0o755)
            store.chmod(0o644)
        return
    try:  # root ignores permission bits; the immutable attribute binds it too
        subprocess.run(["chattr", "+i", *map(str, targets)], check=True, capture_output=True)  # noqa: S603, S607
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("cannot make a file read-only for root here (no chattr or no support)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, targets)], check=True, capture_output=True)  # noqa: S603, S607


@pytest.mark.onnx
def test_a_read_only_store_can_be_read_and_a_write_says_what_it_needs(tmp_path: Path) -> None:
    store = tmp_path / "shared" / "cairn.db"
    assert _cairn("remember", "Alice keeps bees", "--store", str(store)).returncode == 0
    with _read_only(store):
        listed = _cairn("as-of", "2099-01-01", "--store", str(store))
        written = _cairn("remember", "Alice rows", "--store", str(store))
        leftovers = sorted(p.name for p in store.parent.iterdir())
    assert listed.returncode == 0, listed.stderr
    assert "Alice keeps bees" in listed.stdout
    assert written.returncode == 1
    assert f"the SQLite store at {store} is read-only for this process" in written.stderr
    assert "give write access to the file and its directory" in written.stderr
    assert leftovers == ["cairn.db"]
