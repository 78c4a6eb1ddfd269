"""Cosines: unit vectors, and each row's cosine with the query, the one pass over a scope's
vectors every recall makes.

``np.vecdot`` computes one vector dot product per row (the same ``dot`` a pair of vectors
gets), not BLAS ``gemv``, which blocks rows so that a row's last bits change with the matrix's
shape. So a row's value never depends on which other rows share the matrix, which is what lets
a recall index answer over a cached matrix exactly as a scan over just the filtered rows does.

A large matrix is scored in two halves at once, one on a helper thread (``np.vecdot`` releases
the GIL): each row's dot is the same computation either way, so the bits do not change, and
the pass is memory-bound, so two cores read it faster than one (measured quiet on 2 cores at
100,000 x 384: 11.7 ms on one thread, 8.8 ms in two halves; at 10,000 rows the hand-off costs
about what it saves, hence ``SPLIT_ROWS``). With one usable CPU it stays one pass.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

__all__ = ["SPLIT_ROWS", "row_cosines", "unit", "unit_rows"]

FloatVector = npt.NDArray[np.float32]

SPLIT_ROWS = 32_768

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
    half = rows // 2
    out: FloatVector = np.empty(rows, dtype=np.result_type(matrix.dtype, query.dtype))
    later = _helper_thread().submit(np.vecdot, matrix[half:], query, out=out[half:])
    np.vecdot(matrix[:half], query, out=out[:half])
    later.result()
    return out


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
