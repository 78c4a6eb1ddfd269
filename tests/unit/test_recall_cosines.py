"""The row pass shared with a helper thread gives every row the bits one pass gives it, in this
process and in a forked child (where the parent's helper thread does not exist), and never
waits for a helper that has not started."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

from cairn.recall import cosines
from cairn.recall.cosines import CHUNK_ROWS, SPLIT_ROWS, row_cosines


def _bits(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).tobytes()


@pytest.mark.parametrize(
    "rows", [SPLIT_ROWS - 1, SPLIT_ROWS, SPLIT_ROWS + 7, 5 * CHUNK_ROWS, 5 * CHUNK_ROWS + 1]
)
def test_a_split_pass_gives_each_row_the_bits_of_one_pass(rows: int) -> None:
    rng = np.random.default_rng(rows)
    matrix = rng.standard_normal((rows, 384), dtype=np.float32)
    query = rng.standard_normal(384, dtype=np.float32)
    one_pass = np.vecdot(matrix, query)
    assert row_cosines(matrix, query).dtype == np.float32
    assert _bits(row_cosines(matrix, query)) == _bits(one_pass)
    # A row's value does not depend on the rows beside it, split or not.
    chosen = rng.choice(rows, size=100, replace=False)
    assert _bits(row_cosines(matrix, query)[chosen]) == _bits(row_cosines(matrix[chosen], query))


def test_a_large_pass_uses_the_helper_thread_when_two_cpus_are_usable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(cosines, "_usable_cpus", lambda: 2)
    matrix = np.ones((SPLIT_ROWS, 8), dtype=np.float32)
    submitted: list[object] = []
    real = cosines._helper_thread

    def spy() -> object:
        helper = real()
        submitted.append(helper)
        return helper

    monkeypatch.setattr(cosines, "_helper_thread", spy)
    assert row_cosines(matrix, np.ones(8, dtype=np.float32)).tolist() == [8.0] * SPLIT_ROWS
    assert len(submitted) == 1
    monkeypatch.setattr(cosines, "_usable_cpus", lambda: 1)
    row_cosines(matrix, np.ones(8, dtype=np.float32))
    assert len(submitted) == 1  # one CPU: one pass, no hand-off


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_scores_a_large_matrix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cosines, "_usable_cpus", lambda: 2)
    matrix = np.ones((SPLIT_ROWS + 1, 8), dtype=np.float32)
    query = np.ones(8, dtype=np.float32)
    row_cosines(matrix, query)  # the parent's helper thread exists now
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        ok = row_cosines(matrix, query).tolist() == [8.0] * (SPLIT_ROWS + 1)
        sys.stdout.flush()
        os._exit(0 if ok else 1)
    deadline = time.monotonic() + 60  # a child waiting on a thread it does not have hangs
    while (done := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        pytest.fail("the forked child never finished its row pass")
    assert os.waitstatus_to_exitcode(done[1]) == 0


def test_a_helper_that_has_not_started_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # Another recall holds the helper thread: this pass scores every chunk itself, withdraws
    # the helper's turn and returns while the helper is still busy.
    monkeypatch.setattr(cosines, "_usable_cpus", lambda: 2)
    release = threading.Event()
    busy = cosines._helper_thread().submit(release.wait, 60)
    try:
        rng = np.random.default_rng(7)
        matrix = rng.standard_normal((3 * CHUNK_ROWS + 5, 384), dtype=np.float32)
        query = rng.standard_normal(384, dtype=np.float32)
        assert _bits(row_cosines(matrix, query)) == _bits(np.vecdot(matrix, query))
        assert not busy.done()  # returned without the helper
    finally:
        release.set()
        busy.result(timeout=60)
