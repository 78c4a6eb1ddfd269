"""A snapshot's sections built in one pass over its rows, each row dropped once it is read.

``build_snapshot`` holds every row (its fields, its stored JSON, its vector bytes) while it
builds, and the matrix beside them: at 100k rows the first build was the process's peak. This
builds the same index into the flat arrays a persisted file holds (``snapshot_file``): each row
read from the store's cursor is tokenised, its vector copied into a matrix allocated once for
``count`` rows, its strings appended to one UTF-8 blob, and nothing of the row is kept. The
snapshot over those arrays (``mapped.mapped_snapshot``) ranks exactly as the built one: the
same tokens, vocabulary order, postings (the same ``np.unique`` over the same pairs), codes,
thread order and unit rows (each row's norm is its own reduction, chunked or not).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.models import EmbedderId
from cairn.ports import PROGRESS_EVERY, BuildProgress, IndexRow
from cairn.recall.expansion import Thread
from cairn.recall.index.snapshot import EPOCH, MICROSECOND
from cairn.recall.keywords import tokenize

_CHUNK = 1024  # rows whose vectors are copied into the matrix in one C-level call


@dataclass
class Sections:
    """A snapshot as flat arrays (named as the file's sections) and its names."""

    size: int
    arrays: dict[str, npt.NDArray[Any]]
    names: dict[str, Any]
    matrix: npt.NDArray[np.float32]


class _Matrix:
    """Vectors copied into one float32 buffer of ``capacity`` rows, a chunk at a time."""

    def __init__(self, capacity: int, dims: int) -> None:
        self.flat = np.empty(capacity * dims, dtype=np.float32)
        self.dims = dims
        self.count = 0
        self._pending: list[npt.NDArray[np.float32]] = []

    def add(self, vector: npt.NDArray[np.float32]) -> int:
        if self.count + len(self._pending) >= len(self.flat) // max(1, self.dims):
            self._grow()
        self._pending.append(vector)
        if len(self._pending) == _CHUNK:
            self.flush()
        return self.count + len(self._pending) - 1

    def flush(self) -> None:
        if self._pending:
            start, end = self.count * self.dims, (self.count + len(self._pending)) * self.dims
            np.concatenate(self._pending, axis=None, out=self.flat[start:end])
            self.count += len(self._pending)
            self._pending = []

    def _grow(self) -> None:  # only when the store held more rows than it counted
        self.flush()
        grown = np.empty(max(len(self.flat) * 2, _CHUNK * self.dims), dtype=np.float32)
        grown[: len(self.flat)] = self.flat
        self.flat = grown

    def unit(self) -> npt.NDArray[np.float32]:
        self.flush()
        matrix = self.flat[: self.count * self.dims].reshape(self.count, self.dims)
        if self.count:
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            np.divide(matrix, np.where(norms > 0, norms, 1), out=matrix)
        return matrix


def build_sections(
    rows: Iterable[IndexRow],
    embedder: EmbedderId | None,
    count: int,
    progress: BuildProgress | None = None,
) -> Sections:
    """The sections of ``rows`` (record-id order, live heads; about ``count`` of them);
    ``progress`` hears (rows built, rows in all) every ``PROGRESS_EVERY`` rows and at the end."""
    dims = embedder.dims if embedder is not None else 0
    matrix = _Matrix(count if embedder is not None else 0, dims)
    vocabulary: dict[str, int] = {}
    namespaces: dict[str, int] = {}
    strategies: dict[str, int] = {}
    members: dict[Thread, list[int]] = {}
    columns: dict[str, list[Any]] = {name: [] for name in _COLUMNS}
    token_ids, lengths, text, offsets = array("q"), array("q"), bytearray(), array("q", [0])
    record_ids: list[str] = []
    for i, row in enumerate(rows):
        tokens = tokenize(row.searchable)
        token_ids.extend(vocabulary.setdefault(t, len(vocabulary)) for t in tokens)
        lengths.append(len(tokens))
        columns["namespace_codes"].append(namespaces.setdefault(row.namespace, len(namespaces)))
        columns["strategy_codes"].append(strategies.setdefault(row.strategy, len(strategies)))
        columns["confidence"].append(row.confidence)
        columns["last_seen"].append(row.last_seen_at.timestamp())
        columns["trusted"].append(row.trusted)
        columns["first_seen_us"].append((row.first_seen_at - EPOCH) // MICROSECOND)
        vector = row.vector
        has = embedder is not None and vector is not None and np.size(vector) == dims
        columns["vector_rows"].append(matrix.add(vector) if has else -1)  # type: ignore[arg-type]
        for thread in row.threads:
            members.setdefault(thread, []).append(i)
        data = row.data if row.data is not None else row.load().model_dump_json()
        for value in (row.record_id, row.content, data):
            text += value.encode("utf-8")
            offsets.append(len(text))
        record_ids.append(row.record_id)
        if progress is not None and (i + 1) % PROGRESS_EVERY == 0:
            progress(i + 1, max(count, i + 1))
    size = len(record_ids)
    if progress is not None:
        progress(size, size)
    ids = np.frombuffer(token_ids, dtype=np.int64) if token_ids else np.zeros(0, np.int64)
    starts = np.zeros(size + 1, dtype=np.int64)
    if size:
        np.cumsum(np.frombuffer(lengths, dtype=np.int64), out=starts[1:])
    posting_rows, posting_tf, posting_starts = _postings(ids, starts, size, len(vocabulary))
    first_seen = np.asarray(columns["first_seen_us"], dtype="<i8")
    threads = list(members)
    for thread in threads:
        members[thread].sort(key=lambda j: (int(first_seen[j]), record_ids[j]))
    thread_rows = [np.asarray(members[t], dtype="<i8") for t in threads]
    arrays: dict[str, npt.NDArray[Any]] = {
        "lengths": np.asarray(starts[1:] - starts[:-1], dtype="<f8"),
        **{name: np.asarray(columns[name], dtype=kind) for name, kind in _COLUMNS.items()},
        "posting_rows": posting_rows,
        "posting_tf": posting_tf,
        "posting_starts": posting_starts,
        "token_ids": ids.astype("<i4"),
        "token_starts": starts,
        "thread_rows": np.concatenate(thread_rows) if threads else np.zeros(0, "<i8"),
        "thread_starts": np.cumsum([0, *(len(m) for m in thread_rows)], dtype=np.int64),
        "text_offsets": np.frombuffer(offsets, dtype=np.int64),
        "text": np.frombuffer(text, dtype=np.uint8),
    }
    names = {
        "namespaces": list(namespaces),
        "strategies": list(strategies),
        "terms": list(vocabulary),
        "threads": [list(thread) for thread in threads],
    }
    return Sections(size=size, arrays=arrays, names=names, matrix=matrix.unit())


_COLUMNS: dict[str, Any] = {
    "namespace_codes": "<i8",
    "strategy_codes": "<i8",
    "confidence": "<f8",
    "last_seen": "<f8",
    "trusted": np.bool_,
    "vector_rows": "<i8",
    "first_seen_us": "<i8",
}


def _postings(
    ids: npt.NDArray[np.int64], starts: npt.NDArray[np.int64], size: int, terms: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """``snapshot._postings`` as three flat arrays: rows, counts, each term's start."""
    if not len(ids):
        return np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(terms + 1, np.int64)
    rows = np.repeat(np.arange(size, dtype=np.int64), np.diff(starts))
    pairs, counts = np.unique(ids * size + rows, return_counts=True)
    term_of, posted = np.divmod(pairs, size)
    term_starts = np.searchsorted(term_of, np.arange(terms + 1)).astype(np.int64)
    return posted.astype(np.int64), counts.astype(np.float64), term_starts
