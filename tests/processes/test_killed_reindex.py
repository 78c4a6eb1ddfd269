"""``cairn reindex`` killed halfway (SIGKILL, a real process) and run again finishes the job
without doubling anything: every live head ends with exactly one vector of the ONNX embedder,
the versions are byte for byte what they were, and the rerun embeds only what was missing."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.processes.hashed_store import SCOPE, fillers, write_hashed_store

RECORDS = 320  # ten batches of 32: seconds of embedding, so the kill lands mid-run
ONNX_KEY = "all-MiniLM-L6-v2-onnx-int8@384"


def reindex(store: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(  # noqa: S603  # our own interpreter and module
        [sys.executable, "-m", "cairn", "--store", str(store), "reindex"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),  # PYTHONPATH included: the sources under test
    )


def onnx_vectors(store: Path) -> int:
    with sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True) as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM vectors WHERE embedder_key = ?", (ONNX_KEY,)
        ).fetchone()
    return int(count)


def versions(store: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT * FROM record_versions ORDER BY 1, 2, 3, 4").fetchall()


def test_a_killed_reindex_finishes_on_the_next_run_without_doubling(tmp_path: Path) -> None:
    store = tmp_path / "cairn.db"
    write_hashed_store(store, fillers(RECORDS))
    written = versions(store)

    killed = reindex(store)
    deadline = time.monotonic() + 120
    while onnx_vectors(store) == 0 and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    done_before = onnx_vectors(store)
    assert killed.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert 0 < done_before < RECORDS  # stopped halfway: some batches stored, not all

    rerun = reindex(store)
    out, err = rerun.communicate(timeout=300)

    assert rerun.returncode == 0, err
    counts = re.search(r"(\d+) of (\d+) live record\(s\) re-embedded, (\d+) had a vector", out)
    assert counts is not None, out
    stored, live, had = map(int, counts.groups())
    assert (live, had) == (RECORDS, done_before)
    assert stored == RECORDS - done_before
    with sqlite3.connect(store) as conn:
        per_head = conn.execute(
            "SELECT count(x.record_id) FROM record_heads AS h"
            " JOIN record_versions AS v USING (memory_id, actor_id, record_id, version)"
            " LEFT JOIN vectors AS x ON x.memory_id = v.memory_id AND x.actor_id = v.actor_id"
            " AND x.record_id = v.record_id AND x.content_digest = v.content_digest"
            " AND x.embedder_key = ? WHERE h.actor_id = ? GROUP BY h.record_id",
            (ONNX_KEY, SCOPE.actor_id),
        ).fetchall()
    assert per_head == [(1,)] * RECORDS
    assert versions(store) == written
