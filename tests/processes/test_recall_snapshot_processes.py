"""Several real processes on one SQLite file share its persisted recall index snapshots.

Each worker (``tests.processes.recall_worker``) keeps its backend and recall index open, as an
agent's process does. A write by one process is in another's very next recall (the generation
moved, so the snapshot it holds is stale and takes in what changed since, from the change
feed); a fresh process maps the file the last rebuild wrote instead of reading the rows, and
catches it up the same way; an erase by one process leaves the erased content
in no byte of the store's folder, though another process had mapped a snapshot holding it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRIVATE = "Quixotic-Aubergine-Diagnosis-8841 tea"
LATER = "Walks the dog at dawn"
QUERY = "tea aubergine diagnosis"


class Worker:
    def __init__(self, store: Path) -> None:
        self.process = subprocess.Popen(  # noqa: S603  # our own interpreter and module
            [sys.executable, "-m", "tests.processes.recall_worker", str(store)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=dict(os.environ),  # PYTHONPATH included: the sources under test
        )

    def ask(self, line: str) -> str:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        assert answer, f"the worker died on {line!r}"
        return answer.strip()

    def recall(self, text: str = QUERY) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self.ask(f"recall {text}"))
        return found

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[Worker]]:
    opened: list[Worker] = []
    yield opened
    for worker in opened:
        if worker.process.poll() is None:
            worker.close()


def folder_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_processes_see_each_others_writes_and_share_the_persisted_snapshot(
    tmp_path: Path, workers: list[Worker]
) -> None:
    store = tmp_path / "cairn.db"
    reader, writer = Worker(store), Worker(store)
    workers += [reader, writer]
    assert writer.ask("write Drinks green tea at noon") == "ok"
    assert writer.ask(f"write {PRIVATE}") == "ok"
    first = reader.recall()
    assert first["contents"] == sorted(["Drinks green tea at noon", PRIVATE])
    assert (first["published"], first["caught_up"]) == (1, 0)
    assert writer.ask(f"write {LATER}") == "ok"
    # The reader's next recall sees the other process's write: its snapshot was stale, and it
    # caught up by reading just what changed since, without rebuilding or rewriting the file.
    seen = reader.recall()
    assert seen["contents"] == sorted(["Drinks green tea at noon", PRIVATE, LATER])
    assert (seen["published"], seen["caught_up"]) == (1, 1)
    # A fresh process maps the file the reader wrote (behind the store by one write) without
    # reading a row, and catches it up the same way.
    fresh = Worker(store)
    workers.append(fresh)
    expected = {"contents": seen["contents"], "mapped": 1, "published": 0, "caught_up": 1}
    assert fresh.recall() == expected
    # A retract by another process is gone from the very next recall, by a delta too.
    assert writer.ask(f"retract {LATER}") == "ok"
    after = reader.recall()
    assert after["contents"] == sorted(["Drinks green tea at noon", PRIVATE])
    assert (after["published"], after["caught_up"]) == (1, 2)
    assert PRIVATE.encode() in folder_bytes(tmp_path)
    # The writer erases; the other two had mapped a snapshot holding the erased content.
    assert writer.ask(f"erase {PRIVATE}") == "ok"
    assert PRIVATE.encode() not in folder_bytes(tmp_path)
    for process in (reader, fresh):
        assert process.recall()["contents"] == ["Drinks green tea at noon"]
    assert PRIVATE.encode() not in folder_bytes(tmp_path)
