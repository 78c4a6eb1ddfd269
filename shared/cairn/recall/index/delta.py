"""A snapshot brought up to date without a rebuild: a base snapshot, minus its rows that
changed, plus the changed records' current heads, merged in record-id order.

``Merge.over(base, changed, rows)`` is the snapshot ``build_snapshot`` would make of the
scope's live heads now, given ``base`` (a snapshot of them as they were), the record ids whose
heads may have changed since (``changed``) and the rows of those that are live heads now
(``rows``): every row of ``base`` whose record id is in ``changed`` is left out,
and each row of ``rows`` is put where its record id sorts. What recall reads of every row is
made afresh as arrays (lengths, codes, confidence, recency, trust, and the unit matrix, in the
merged order: a gather of the base's rows, O(rows x dims) bytes copied, no parse); what it
reads of a few rows (record ids, contents, tokens, versions, one term's postings, one thread's
members) is read from the base or the new rows when asked (``delta_views``).

``Merge.appended(rows)`` is the common case after that: records new to the scope whose ids
sort after every row (record ids are time-ordered, so a new record's usually does) are written
into the spare rows the arrays were allocated with, and the new snapshot views one more row
of each; nothing of the scope's existing rows is copied. Either way the snapshot ranks exactly
as one built from the store (``tests/unit/test_recall_index_exact.py`` compares them with a
scan after random writes).
"""

from __future__ import annotations

import bisect
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.ports import IndexRow
from cairn.recall.expansion import Thread
from cairn.recall.index.delta_matrix import gather, has_vector, unit, with_vector
from cairn.recall.index.delta_views import BaseVersions, Member, Merged, Postings, Threads
from cairn.recall.index.snapshot import IntArray, Snapshot
from cairn.recall.keywords import tokenize

# Heap bytes a new row costs beyond its arrays (its IndexRow, tokens, postings entries).
_DELTA_ROW_BYTES = 2_000
_SPARE_SHARE = 0.05  # spare rows allocated beyond a merge's, for appends (and at least 64)
_COLUMNS = {
    "lengths": np.float64,
    "namespace_codes": np.int64,
    "strategy_codes": np.int64,
    "confidence": np.float64,
    "last_seen": np.float64,
    "trusted": np.bool_,
    "vector_rows": np.int64,
    "source": np.int64,
}


class _Columns:
    """Every per-row array and the matrix of a line of merges, with spare rows at the end.

    A snapshot views the first ``size`` rows (``vectors`` matrix rows); an append writes past
    them, so the snapshots already made never see it. Only the merge that reaches the current
    end may append (``claim``), so two catch-ups from one merge never write the same rows."""

    def __init__(self, rows: int, vectors: int, dims: int) -> None:
        spare = max(64, int(rows * _SPARE_SHARE))
        self.arrays: dict[str, npt.NDArray[Any]] = {
            name: np.empty(rows + spare, dtype=kind) for name, kind in _COLUMNS.items()
        }
        self.matrix = np.empty((vectors + spare, dims), dtype=np.float32)
        self.size, self.vectors = rows, vectors
        self._lock = threading.Lock()

    def claim(self, size: int, vectors: int, rows: int, added_vectors: int) -> bool:
        """Reserve ``rows`` rows after ``size`` (and matrix rows after ``vectors``): false
        when another merge has appended past there or there is no room left."""
        with self._lock:
            if (self.size, self.vectors) != (size, vectors):
                return False
            room = len(self.arrays["source"]) - size >= rows
            if not room or len(self.matrix) - vectors < added_vectors:
                return False
            self.size, self.vectors = size + rows, vectors + added_vectors
            return True

    def view(self, size: int, vectors: int) -> dict[str, npt.NDArray[Any]]:
        return {
            **{name: array[:size] for name, array in self.arrays.items()},
            "matrix": self.matrix[:vectors],
        }


@dataclass(frozen=True, slots=True)
class _New:
    """The new rows of a line of merges, in merged order, and their terms and threads (lists
    shared along the line: each snapshot reads the rows below its size)."""

    rows: list[IndexRow]
    tokens: list[tuple[str, ...]]
    postings: dict[str, tuple[list[int], list[float]]]
    threads: dict[Thread, list[Member]]

    def add(self, row: IndexRow, tokens: tuple[str, ...], at: int) -> None:
        self.rows.append(row)
        self.tokens.append(tokens)
        for term, count in Counter(tokens).items():
            entry = self.postings.setdefault(term, ([], []))
            entry[0].append(at)
            entry[1].append(float(count))
        for thread in row.threads:
            self.threads.setdefault(thread, []).append((row.first_seen_at, row.record_id, at))


@dataclass(frozen=True)
class Merge:
    """A merged snapshot, and what an append after it extends in place."""

    snapshot: Snapshot
    base: Snapshot
    remap: IntArray  # base row -> merged row (-1: left out)
    new: _New
    columns: _Columns
    namespaces: tuple[str, ...]
    strategies: tuple[str, ...]

    @classmethod
    def over(cls, base: Snapshot, changed: Sequence[str], rows: Sequence[IndexRow]) -> Merge:
        """``base`` without the rows of ``changed`` record ids, with ``rows`` (the live heads
        of those ids now, any order), in record-id order; see the module docstring."""
        rows = sorted(rows, key=lambda row: row.record_id)
        record_ids = base.record_ids
        dead = np.zeros(base.size, dtype=bool)
        for record_id in changed:  # the base is in record-id order: one bisection each
            at = bisect.bisect_left(record_ids, record_id)
            if at < base.size and record_ids[at] == record_id:
                dead[at] = True
        kept = np.flatnonzero(~dead).astype(np.int64)
        spots = np.asarray([bisect.bisect_left(record_ids, r.record_id) for r in rows], np.int64)
        source = np.insert(kept, np.searchsorted(kept, spots), -1 - np.arange(len(rows)))
        remap = np.full(base.size, -1, dtype=np.int64)
        from_base = source >= 0
        remap[source[from_base]] = np.flatnonzero(from_base)
        new = _New([], [], {}, {})
        for j, at in enumerate(np.flatnonzero(~from_base).tolist()):
            new.add(rows[j], tuple(tokenize(rows[j].searchable)), at)
        fields = _fields(base, rows, new.tokens)
        namespaces, fields["namespace_codes"] = _codes(base.namespaces, fields["namespace_codes"])
        strategies, fields["strategy_codes"] = _codes(base.strategies, fields["strategy_codes"])
        vectored = with_vector(base, source, rows)
        dims = base.embedder.dims if base.embedder is not None else 0
        columns = _Columns(len(source), len(vectored), dims)
        for name, values in fields.items():
            _pick(source, getattr(base, name), values, columns.arrays[name][: len(source)])
        columns.arrays["source"][: len(source)] = source
        vector_rows = columns.arrays["vector_rows"][: len(source)]
        vector_rows.fill(-1)
        vector_rows[vectored] = np.arange(len(vectored))
        gather(base, source[vectored], rows, columns.matrix[: len(vectored)])
        line = _Line(base, remap, new, columns, namespaces, strategies)
        return line.viewing(len(source), len(vectored))

    def appended(self, rows: Sequence[IndexRow]) -> Merge | None:
        """This merge with ``rows`` (records new to the scope, whose ids sort after every row
        of it) after its rows, written in place; ``None`` when that cannot be done (an id
        that does not sort last, no spare room, or another append got there first)."""
        rows = sorted(rows, key=lambda row: row.record_id)
        size, held = self.snapshot.size, self.snapshot.matrix.shape[0]
        if not rows or (size and rows[0].record_id <= self.snapshot.record_ids[size - 1]):
            return None
        has = has_vector(self.base, rows)
        if not self.columns.claim(size, held, len(rows), int(has.sum())):
            return None
        arrays, tokens = self.columns.arrays, [tuple(tokenize(r.searchable)) for r in rows]
        fields = _fields(self.base, rows, tokens)
        namespaces, fields["namespace_codes"] = _codes(self.namespaces, fields["namespace_codes"])
        strategies, fields["strategy_codes"] = _codes(self.strategies, fields["strategy_codes"])
        end = size + len(rows)
        for name, values in fields.items():
            arrays[name][size:end] = values
        first = len(self.new.rows)
        arrays["source"][size:end] = -1 - np.arange(first, first + len(rows))
        vector_rows = np.full(len(rows), -1, dtype=np.int64)
        vector_rows[has] = np.arange(held, held + int(has.sum()))
        arrays["vector_rows"][size:end] = vector_rows
        if has.any():
            fresh = unit([r for r, h in zip(rows, has.tolist(), strict=True) if h])
            self.columns.matrix[held : held + len(fresh)] = fresh
        for k, row in enumerate(rows):
            self.new.add(row, tokens[k], size + k)
        line = _Line(self.base, self.remap, self.new, self.columns, namespaces, strategies)
        return line.viewing(end, held + int(has.sum()))


@dataclass(frozen=True)
class _Line:
    """What the merges over one base share: its remap, new rows and columns."""

    base: Snapshot
    remap: IntArray
    new: _New
    columns: _Columns
    namespaces: tuple[str, ...]
    strategies: tuple[str, ...]

    def viewing(self, size: int, vectors: int) -> Merge:
        """The merge whose snapshot views ``size`` rows and ``vectors`` matrix rows."""
        base, view = self.base, self.columns.view(size, vectors)
        source, new = view["source"], self.new
        snapshot = Snapshot(
            embedder=base.embedder,
            record_ids=Merged(source, base.record_ids, [r.record_id for r in new.rows]),
            contents=Merged(source, base.contents, [r.content for r in new.rows]),
            tokens=Merged(source, base.tokens, new.tokens),
            lengths=view["lengths"],
            postings=Postings(base.postings, self.remap, new.postings, size),
            namespaces=self.namespaces,
            namespace_codes=view["namespace_codes"],
            strategies=self.strategies,
            strategy_codes=view["strategy_codes"],
            confidence=view["confidence"],
            last_seen=view["last_seen"],
            trusted=view["trusted"],
            thread_rows=Threads(base.thread_rows, self.remap, new.threads, size),
            row_threads=Merged(source, base.row_threads, [r.threads for r in new.rows]),
            vector_rows=view["vector_rows"],
            matrix=view["matrix"],
            loaders=Merged(source, BaseVersions(base), [r.load for r in new.rows]),
            intact=base.intact,
        )
        held = sum(a.nbytes for a in self.columns.arrays.values()) + self.columns.matrix.nbytes
        held += base.nbytes() + self.remap.nbytes + len(new.rows) * _DELTA_ROW_BYTES
        snapshot.held_bytes = held
        return Merge(
            snapshot, base, self.remap, new, self.columns, self.namespaces, self.strategies
        )


def _fields(
    base: Snapshot, rows: Sequence[IndexRow], tokens: Sequence[tuple[str, ...]]
) -> dict[str, Any]:
    """The new rows' per-row values, named as the snapshot's arrays (codes as names)."""
    return {
        "lengths": np.array([len(t) for t in tokens], dtype=np.float64),
        "namespace_codes": [row.namespace for row in rows],
        "strategy_codes": [row.strategy for row in rows],
        "confidence": np.array([row.confidence for row in rows], dtype=np.float64),
        "last_seen": np.array([row.last_seen_at.timestamp() for row in rows], dtype=np.float64),
        "trusted": np.array([row.trusted for row in rows], dtype=bool),
    }


def _codes(names: tuple[str, ...], values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    known = {name: i for i, name in enumerate(names)}
    codes = [known.setdefault(value, len(known)) for value in values]
    return tuple(known), np.asarray(codes, dtype=np.int64)


def _pick(
    source: IntArray, base: npt.NDArray[Any], new: npt.NDArray[Any], out: npt.NDArray[Any]
) -> None:
    """``out[i] = base[source[i]]`` where ``source[i] >= 0``, else ``new[-1 - source[i]]``."""
    from_base = source >= 0
    out[from_base] = base[source[from_base]]
    out[~from_base] = new[-1 - source[~from_base]]
