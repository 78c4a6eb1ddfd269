"""Long CLI steps over a large store show progress on a terminal, and only there.

The first ``cairn recall`` of a process builds the actor's recall index; ``cairn export`` reads
one history per record. Real processes: the console script runs with stderr on a
pseudo-terminal (``pty``, 24 x 100) and stdout on a pipe, over a SQLite store of
``LARGE_SCOPE`` records, so tqdm sees a terminal as a user's shell gives it one. The bar is on
stderr; stdout is the same bytes as a run with stderr on a pipe (which draws nothing at all).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import termios
import threading
from pathlib import Path

import pytest

from cairn.changes import MAX_CHANGES_PER_APPLY, Create, NewRecord
from cairn.cli.progress import LARGE_SCOPE
from cairn.clock import SystemClock
from cairn.models import Conversational, EventInput, Role, Scope, Source, SourceKind
from cairn.store.sqlite import SQLiteBackend
from tests.unit.test_cli import _console_script

ALICE = Scope(memory_id="default", actor_id="alice")
JOURNAL = re.compile(rb"^journal: jrn-\S+$", flags=re.MULTILINE)

pytestmark = [pytest.mark.slow, pytest.mark.onnx]


def _fill(store: Path, count: int) -> None:
    stores = SQLiteBackend(store, SystemClock()).stores()
    try:
        for first in range(0, count, MAX_CHANGES_PER_APPLY):
            stores.records.apply(
                ALICE,
                [
                    Create(
                        record=NewRecord(
                            namespace="/facts/alice/",
                            content=f"Alice noted fact {i} about topic {i % 97}",
                            sources=(Source(kind=SourceKind.USER),),
                        )
                    )
                    for i in range(first, min(count, first + MAX_CHANGES_PER_APPLY))
                ],
            )
    finally:
        stores.close()


def _recall(store: Path, *, terminal: bool, extra: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
    """(stdout, stderr) of one ``cairn recall`` process; stderr a pty when ``terminal``."""
    return _cairn(store, "recall", "topic 42", *extra, terminal=terminal)


def _cairn(store: Path, *command: str, terminal: bool) -> tuple[bytes, bytes]:
    """(stdout, stderr) of one ``cairn`` process; stderr a pty when ``terminal``."""
    args = [_console_script(), *command, "--store", str(store), "--actor", "alice"]
    extra: tuple[str, ...] = ()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_")}
    if not terminal:
        done = subprocess.run(  # noqa: S603 - our own console script
            [*args, *extra], capture_output=True, env=env, check=False, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr
    main, child = pty.openpty()
    # A terminal has a size; tqdm draws nothing on a 0-row one (an unsized pty's default).
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.Popen(  # noqa: S603 - our own console script
        [*args, *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=child,
        env=env,
    )
    os.close(child)
    drawn = bytearray()

    def drain() -> None:  # a full pty would block the child: read as it writes
        while True:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # EIO: the child closed its end
                return
            if not chunk:
                return
            drawn.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    stdout, _ = process.communicate(timeout=300)
    reader.join(timeout=30)
    os.close(main)
    assert process.returncode == 0, bytes(drawn)
    return stdout, bytes(drawn)


def _without_journal_id(stdout: bytes) -> bytes:
    assert len(JOURNAL.findall(stdout)) == 1, stdout
    return JOURNAL.sub(b"journal: <id>", stdout)


@pytest.mark.parametrize("extra", [(), ("--with-history",)], ids=["records", "with-history"])
def test_a_large_store_shows_its_index_build_on_a_terminal_and_stdout_is_unchanged(
    tmp_path: Path, extra: tuple[str, ...]
) -> None:
    store = tmp_path / "cairn.db"
    _fill(store, LARGE_SCOPE)
    shown_out, shown_err = _recall(store, terminal=True, extra=extra)
    piped_out, piped_err = _recall(store, terminal=False, extra=extra)

    assert f"indexing {LARGE_SCOPE:,} records".encode() in shown_err
    assert re.search(rb"records: +\d+%\|", shown_err)  # a percentage, redrawn as it goes
    assert b"Alice noted" not in shown_err  # counts only, never content
    assert piped_err == b""  # not a terminal: no bar, not a byte
    # Both ways journal the recall (--with-history too), each under its own id.
    assert _without_journal_id(shown_out) == _without_journal_id(piped_out)
    assert b"Alice noted fact 42 about topic 42" in shown_out


def test_an_export_of_a_large_store_shows_its_progress_and_writes_the_same_lines(
    tmp_path: Path,
) -> None:
    store = tmp_path / "cairn.db"
    _fill(store, LARGE_SCOPE)  # a large scope's export shows its bar at once, however quick
    shown_out, shown_err = _cairn(store, "export", terminal=True)
    piped_out, piped_err = _cairn(store, "export", terminal=False)
    assert b"exporting alice" in shown_err
    assert re.search(rb"\d+/20000", shown_err)
    assert b"Alice noted" not in shown_err
    assert piped_err == b""
    assert shown_out == piped_out
    assert shown_out.count(b"\n") == LARGE_SCOPE


def test_recall_with_history_shows_the_embedding_of_turns_it_has_not_seen(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    _fill(store, 50)
    stores = SQLiteBackend(store, SystemClock()).stores()
    try:
        for i in range(150):  # embedded on the first --with-history of every process
            stores.events.append(
                ALICE,
                EventInput(
                    session_id=f"s{i // 10}",
                    event_timestamp=SystemClock().now(),
                    payload=(Conversational(role=Role.USER, text=f"Alice said thing {i}"),),
                ),
            )
    finally:
        stores.close()
    shown_out, shown_err = _recall(store, terminal=True, extra=("--with-history",))
    piped_out, piped_err = _recall(store, terminal=False, extra=("--with-history",))
    assert b"embedding 150 passages" in shown_err
    assert b"indexing" not in shown_err  # 50 records: indexed in a blink
    assert b"Alice said" not in shown_err
    assert piped_err == b""
    assert _without_journal_id(shown_out) == _without_journal_id(piped_out)


def test_a_small_store_on_a_terminal_draws_nothing(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    _fill(store, 50)
    stdout, drawn = _recall(store, terminal=True)
    assert drawn == b""
    assert b"Alice noted fact 42 about topic 42" in stdout
