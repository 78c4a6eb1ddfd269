"""Cosines: unit vectors, and each row's cosine with the query, the one pass over a scope's
vectors every recall makes.

``np.vecdot`` computes one vector dot product per row (the same ``dot`` a pair of vectors
gets), not BLAS ``gemv``, which blocks rows so that a row's last bits change with the matrix's
shape. So a row's value never depends on which other rows share the matrix, which is what lets
a recall index answer over a cached matrix exactly as a scan over just the filtered rows does.

A matrix of ``SPLIT_ROWS`` rows or more is scored in chunks of ``CHUNK_ROWS`` that this thread
and one helper thread take in turn (``np.vecdot`` releases the GIL): each row's dot is the same
computation either way, so the bits do not change, and the pass is memory-bound, so two cores
read it faster than one. The calling thread never waits for a helper that has not started
(another recall holds it, or no core is free): it scores every chunk itself and withdraws the
helper's turn, so a busy machine costs at most one chunk's wait over a single pass. With one
usable CPU it stays one pass.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from cairn.ports import FloatVector

__all__ = ["CHUNK_ROWS", "SPLIT_ROWS", "row_cosines", "unit", "unit_rows"]

# 2,048 x 384 float32 rows are 3 MiB, a fraction of a millisecond to score: small enough that
# the last chunk's wait is short, large enough that taking a turn costs next to nothing.
CHUNK_ROWS = 2_048
SPLIT_ROWS = 2 * CHUNK_ROWS  # at least one chunk each

_lock = threading.Lock()
_helper: tuple[int, ThreadPoolExecutor] | None = None  # (the pid it was made in, the thread)


def _usable_cpus() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _helper_thread() -> ThreadPoolExecutor:
    """One helper thread per process, made on first use; made again in a forked child, where
    the parent's thread does not exist."""
    global _helper
    with _lock:
        if _helper is None or _helper[0] != os.getpid():
            _helper = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="cairn-cosines"))
        return _helper[1]


def row_cosines(matrix: npt.NDArray[np.float32], query: FloatVector) -> FloatVector:
    """Each row's dot product with ``query``, one row at a time (module docstring)."""
    rows = len(matrix)
    if rows < SPLIT_ROWS or _usable_cpus() < 2:
        result: FloatVector = np.vecdot(matrix, query)
        return result
    out: FloatVector = np.empty(rows, dtype=np.result_type(matrix.dtype, query.dtype))
    # One iterator of chunk starts shared by both threads: a range iterator hands out each
    # start once (its ``next`` never releases the GIL).
    starts = iter(range(0, rows, CHUNK_ROWS))
    helping = _helper_thread().submit(_score_chunks, matrix, query, out, starts)
    _score_chunks(matrix, query, out, starts)
    if not helping.cancel():  # it started: wait for the chunk it is scoring
        helping.result()
    return out


def _score_chunks(
    matrix: npt.NDArray[np.float32], query: FloatVector, out: FloatVector, starts: Iterator[int]
) -> None:
    for start in starts:
        end = start + CHUNK_ROWS
        np.vecdot(matrix[start:end], query, out=out[start:end])


def unit(vector: npt.ArrayLike) -> FloatVector:
    """``vector`` scaled to length 1 as float32; a zero vector stays zero (cosine 0, not NaN)."""
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(array))
    return array / norm if norm > 0 else array


def unit_rows(matrix: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Each row scaled to length 1 as float32; zero rows stay zero."""
    array = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return (array / np.where(norms > 0, norms, 1)).astype(np.float32, copy=False)
