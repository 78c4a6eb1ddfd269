"""A snapshot brought up to date without a rebuild: a base snapshot, minus its rows that
changed, plus the changed records' current heads, merged in record-id order.

``merged(base, changed, rows)`` is the snapshot ``build_snapshot`` would make of the scope's
live heads now, given ``base`` (a snapshot of them as they were), the record ids whose heads
may have changed since (``changed``) and the rows of those that are live heads now (``rows``):
every row of ``base`` whose record id is in ``changed`` is left out (a tombstone), and each
row of ``rows`` is put where its record id sorts. What recall reads of every row is made
afresh as arrays (lengths, codes, confidence, recency, trust, and the unit matrix, in the
merged order: a gather of the base's rows, O(rows x dims) bytes copied, no parse); what it
reads of a few rows (record ids, contents, tokens, versions, one term's postings, one
thread's members) is read from the base or the new rows when asked, the base's row numbers
mapped to the merged ones. So the merged snapshot ranks exactly as one built from the store
(``tests/unit/test_recall_index_exact.py`` compares them with a scan after random writes).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from cairn.ports import IndexRow
from cairn.recall.expansion import Thread
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot, ThreadRows
from cairn.recall.keywords import tokenize

# Heap bytes a new row costs beyond its arrays (its IndexRow, tokens, postings entries).
_DELTA_ROW_BYTES = 2_000


class _Merged(Sequence[Any]):
    """One per-row field of the merged rows: ``source[i] >= 0`` is that base row, else new
    row ``-1 - source[i]``."""

    def __init__(self, source: IntArray, base: Sequence[Any], new: Sequence[Any]) -> None:
        self._source, self._base, self._new = source, base, new

    def __len__(self) -> int:
        return len(self._source)

    @overload
    def __getitem__(self, row: int) -> Any: ...
    @overload
    def __getitem__(self, row: slice) -> Sequence[Any]: ...
    def __getitem__(self, row: int | slice) -> Any:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        at = int(self._source[row])
        return self._base[at] if at >= 0 else self._new[-1 - at]


class _Postings(Mapping[str, tuple[IntArray, FloatArray]]):
    """The base's postings with its row numbers mapped (tombstones dropped), plus the new
    rows' own, ascending by merged row; each term merged when first asked."""

    def __init__(
        self,
        base: Mapping[str, tuple[IntArray, FloatArray]],
        remap: IntArray,
        new: dict[str, tuple[list[int], list[float]]],
    ) -> None:
        self._base, self._remap, self._new = base, remap, new
        self._made: dict[str, tuple[IntArray, FloatArray]] = {}

    def __getitem__(self, term: str) -> tuple[IntArray, FloatArray]:
        found = self._made.get(term)
        if found is not None:
            return found
        rows, tf = np.zeros(0, np.int64), np.zeros(0, np.float64)
        held = self._base.get(term)
        if held is not None:
            mapped = self._remap[held[0]]
            keep = mapped >= 0
            rows, tf = mapped[keep], held[1][keep]
        added = self._new.get(term)
        if added is not None:
            rows = np.concatenate([rows, np.asarray(added[0], dtype=np.int64)])
            tf = np.concatenate([tf, np.asarray(added[1], dtype=np.float64)])
            order = np.argsort(rows, kind="stable")
            rows, tf = rows[order], tf[order]
        if not len(rows):
            raise KeyError(term)
        return self._made.setdefault(term, (rows, tf))

    def __iter__(self) -> Iterator[str]:
        seen = set(self._new)
        yield from self._new
        for term in self._base:
            if term not in seen:
                yield term

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Threads(Mapping[Thread, ThreadRows]):
    """Each thread's merged rows in (first_seen_at, record id) order, made when asked."""

    def __init__(
        self,
        base: Mapping[Thread, ThreadRows],
        remap: IntArray,
        new: dict[Thread, list[tuple[Any, str, int]]],
    ) -> None:
        self._base, self._remap, self._new = base, remap, new
        self._made: dict[Thread, ThreadRows] = {}

    def __getitem__(self, thread: Thread) -> ThreadRows:
        found = self._made.get(thread)
        if found is not None:
            return found
        members: list[tuple[Any, str, int]] = list(self._new.get(thread, ()))
        if thread in self._base:
            held = self._base[thread]
            for row, position in zip(held.rows.tolist(), held.positions, strict=True):
                mapped = int(self._remap[row])
                if mapped >= 0:
                    members.append((position[0], position[1], mapped))
        if not members:
            raise KeyError(thread)
        members.sort(key=lambda m: (m[0], m[1]))
        made = ThreadRows(
            rows=np.array([m[2] for m in members], dtype=np.int64),
            positions=tuple((m[0], m[1]) for m in members),
        )
        return self._made.setdefault(thread, made)

    def __iter__(self) -> Iterator[Thread]:
        seen = set(self._new)
        yield from self._new
        for thread in self._base:
            if thread not in seen:
                yield thread

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _codes(names: tuple[str, ...], values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    known = {name: i for i, name in enumerate(names)}
    codes = [known.setdefault(value, len(known)) for value in values]
    return tuple(known), np.asarray(codes, dtype=np.int64)


def _pick(source: IntArray, base: npt.NDArray[Any], new: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``base[source[i]]`` where ``source[i] >= 0``, else ``new[-1 - source[i]]``."""
    out = np.empty(len(source), dtype=base.dtype)
    from_base = source >= 0
    out[from_base] = base[source[from_base]]
    out[~from_base] = new[-1 - source[~from_base]]
    return out


def merged(base: Snapshot, changed: Sequence[str], rows: Sequence[IndexRow]) -> Snapshot:
    """``base`` without the rows of ``changed`` record ids, with ``rows`` (the live heads of
    those ids now, any order), in record-id order; see the module docstring."""
    rows = sorted(rows, key=lambda row: row.record_id)
    record_ids = base.record_ids
    dead = np.zeros(base.size, dtype=bool)
    for record_id in changed:  # the base is in record-id order: one bisection each
        at = bisect.bisect_left(record_ids, record_id)
        if at < base.size and record_ids[at] == record_id:
            dead[at] = True
    kept = np.flatnonzero(~dead).astype(np.int64)
    spots = [bisect.bisect_left(record_ids, row.record_id) for row in rows]
    into = np.searchsorted(kept, np.asarray(spots, dtype=np.int64))
    source = np.insert(kept, into, -1 - np.arange(len(rows), dtype=np.int64))
    remap = np.full(base.size, -1, dtype=np.int64)
    from_base = source >= 0
    remap[source[from_base]] = np.flatnonzero(from_base)
    at_row = np.flatnonzero(~from_base)  # where each new row landed (they stay in order)
    tokens = [tuple(tokenize(row.searchable)) for row in rows]
    namespaces, new_namespaces = _codes(base.namespaces, [row.namespace for row in rows])
    strategies, new_strategies = _codes(base.strategies, [row.strategy for row in rows])
    postings: dict[str, tuple[list[int], list[float]]] = {}
    threads: dict[Thread, list[tuple[Any, str, int]]] = {}
    for j, row in enumerate(rows):
        for term, count in Counter(tokens[j]).items():
            entry = postings.setdefault(term, ([], []))
            entry[0].append(int(at_row[j]))
            entry[1].append(float(count))
        for thread in row.threads:
            threads.setdefault(thread, []).append(
                (row.first_seen_at, row.record_id, int(at_row[j]))
            )
    vector_rows, matrix = _matrix(base, source, rows)
    snapshot = Snapshot(
        embedder=base.embedder,
        record_ids=_Merged(source, base.record_ids, [row.record_id for row in rows]),
        contents=_Merged(source, base.contents, [row.content for row in rows]),
        tokens=_Merged(source, base.tokens, tokens),
        lengths=_pick(source, base.lengths, np.array([len(t) for t in tokens], np.float64)),
        postings=_Postings(base.postings, remap, postings),
        namespaces=namespaces,
        namespace_codes=_pick(source, base.namespace_codes, new_namespaces),
        strategies=strategies,
        strategy_codes=_pick(source, base.strategy_codes, new_strategies),
        confidence=_pick(source, base.confidence, np.array([r.confidence for r in rows])),
        last_seen=_pick(
            source, base.last_seen, np.array([r.last_seen_at.timestamp() for r in rows])
        ),
        trusted=_pick(source, base.trusted, np.array([r.trusted for r in rows], dtype=bool)),
        thread_rows=_Threads(base.thread_rows, remap, threads),
        vector_rows=vector_rows,
        matrix=matrix,
        loaders=_Merged(source, base.loaders, [row.load for row in rows]),
        intact=base.intact,
    )
    arrays: list[npt.NDArray[Any]] = [snapshot.lengths, snapshot.namespace_codes, matrix]
    arrays += [snapshot.strategy_codes, snapshot.confidence, snapshot.last_seen]
    arrays += [snapshot.trusted, vector_rows, source]
    held = base.nbytes() + remap.nbytes + sum(a.nbytes for a in arrays)
    snapshot.held_bytes = held + len(rows) * _DELTA_ROW_BYTES
    return snapshot


def _matrix(
    base: Snapshot, source: IntArray, rows: Sequence[IndexRow]
) -> tuple[IntArray, npt.NDArray[np.float32]]:
    """The merged rows' matrix positions (-1: no vector) and their unit rows, in merged order
    (so a merged snapshot whose every row has a vector is aligned, as a built one is)."""
    embedder = base.embedder
    dims = embedder.dims if embedder is not None else 0
    new_vector = np.array(
        [embedder is not None and r.vector is not None and np.size(r.vector) == dims for r in rows],
        dtype=bool,
    )
    from_base = source >= 0
    has = np.empty(len(source), dtype=bool)
    has[from_base] = base.vector_rows[source[from_base]] >= 0
    has[~from_base] = new_vector[-1 - source[~from_base]]
    vector_rows = np.full(len(source), -1, dtype=np.int64)
    with_vector = np.flatnonzero(has)
    vector_rows[with_vector] = np.arange(len(with_vector))
    matrix = np.empty((len(with_vector), dims), dtype=np.float32)
    if not len(with_vector):
        return vector_rows, matrix
    at = source[with_vector]
    old = at >= 0
    # One pass over the base's matrix into the new one (a new row's slot is filled below).
    if old.any():
        picked = np.where(old, base.vector_rows[np.where(old, at, 0)], 0)
        np.take(base.matrix, picked, axis=0, out=matrix)
    if not old.all():
        new_rows = (-1 - at[~old]).tolist()
        fresh = np.stack(
            [np.asarray(rows[j].vector, dtype=np.float32).reshape(-1) for j in new_rows]
        )
        norms = np.linalg.norm(fresh, axis=1, keepdims=True)
        np.divide(fresh, np.where(norms > 0, norms, 1), out=fresh)
        matrix[~old] = fresh
    return vector_rows, matrix
