"""A scope's live heads as a recall index reads them: arrays, postings and one unit matrix.

A snapshot is derived and rebuildable, never the truth: it is built from what the record store
returns (``list_records`` and ``vectors``) and thrown away when the store's generation moves.
Rows are in record-id order, so a tie broken by record id is a tie broken by row number.

What each row keeps is what ranking needs for every row (namespace and strategy for the
filters, keyword postings, confidence and last confirmation for the score bound, the row's
threads for context expansion) and, for the few rows a recall shows, the version itself: a
parsed ``RecordVersion``, or the JSON its store wrote, parsed on first use
(``cairn.ports.RowLoader``).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from cairn.models import EmbedderId, RecordVersion, Trust, content_digest, namespace_matches
from cairn.ports import PROGRESS_EVERY, BuildProgress, IndexRow, RowLoader
from cairn.recall.candidates import searchable_text
from cairn.recall.expansion import Thread, threads
from cairn.recall.keywords import tokenize

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
# Bytes a row costs beyond its arrays: its record id, a loader or version, its token tuple.
_ROW_OVERHEAD_BYTES = 600
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def epoch_micros(at: datetime) -> int:
    """``at`` in whole microseconds since the epoch (exact: a datetime holds microseconds)."""
    return (at - EPOCH) // MICROSECOND


def row_of(version: RecordVersion, vector: npt.NDArray[np.float32] | None) -> IndexRow:
    """The index row of a parsed version (its vector in the snapshot's space, or none)."""
    return IndexRow(
        record_id=version.record_id,
        namespace=version.namespace,
        strategy=version.strategy,
        searchable=searchable_text(version),
        content=version.content,
        confidence=version.confidence,
        first_seen_at=version.first_seen_at,
        last_seen_at=version.last_seen_at,
        threads=threads(version),
        trusted=version.trust is Trust.TRUSTED,
        load=lambda: version,
        vector=vector,
    )


def _always() -> bool:
    return True


@dataclass(frozen=True, slots=True)
class ThreadRows:
    """One thread's rows in (first_seen_at, record id) order, with those positions and each
    row's ``first_seen_at`` as ``epoch_micros`` (what context expansion walks by: a mapped
    snapshot decodes a position's record id only when it is read)."""

    rows: IntArray
    positions: Sequence[tuple[datetime, str]]
    first_seen_us: IntArray


@dataclass(eq=False)
class Snapshot:
    """The index of one scope's live heads, for one embedding space (or none)."""

    embedder: EmbedderId | None
    # Built: tuples and dicts. Mapped from a persisted file (``cairn.recall.index.mapped``):
    # sequences and mappings that decode a row's strings when it is read.
    record_ids: Sequence[str]
    contents: Sequence[str]
    tokens: Sequence[tuple[str, ...]]
    lengths: FloatArray
    postings: Mapping[str, tuple[IntArray, FloatArray]]
    namespaces: tuple[str, ...]
    namespace_codes: IntArray
    strategies: tuple[str, ...]
    strategy_codes: IntArray
    confidence: FloatArray
    last_seen: FloatArray
    trusted: npt.NDArray[np.bool_]
    thread_rows: Mapping[Thread, ThreadRows]
    # Each row's threads (``cairn.recall.expansion.threads`` of its version): the threads of
    # ``thread_rows`` the row is a member of.
    row_threads: Sequence[Collection[Thread]]
    vector_rows: IntArray
    matrix: npt.NDArray[np.float32]
    loaders: Sequence[RowLoader]
    # What a mapped snapshot holds (its file, mapped, and a little per row); None: estimated.
    held_bytes: int | None = None
    # Whether what the snapshot maps is still whole (``cairn.recall.index.mapped``); a built
    # snapshot always is.
    intact: Callable[[], bool] = _always
    _loaded: dict[int, RecordVersion] = field(default_factory=dict)
    _digests: dict[int, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def size(self) -> int:
        return len(self.record_ids)

    def version(self, row: int) -> RecordVersion:
        """The version of ``row``, parsed once and kept."""
        found = self._loaded.get(row)
        if found is None:
            found = self.loaders[row]()
            with self._lock:
                self._loaded[row] = found
        return found

    def content_digest(self, row: int) -> str:
        """The content digest of ``row``'s version, from its content (a version's digest is
        its content's, checked whenever one is parsed), worked out once and kept."""
        found = self._digests.get(row)
        if found is None:
            found = self._digests[row] = content_digest(self.contents[row])
        return found

    def view(self, namespace_prefix: str | None, strategy: str | None) -> IntArray:
        """Rows under the namespace prefix (segment boundaries) with that strategy, in order."""
        keep = np.ones(self.size, dtype=bool)
        if namespace_prefix:
            wanted = [
                i for i, ns in enumerate(self.namespaces) if namespace_matches(ns, namespace_prefix)
            ]
            keep &= np.isin(self.namespace_codes, wanted)
        if strategy is not None:
            codes = [i for i, s in enumerate(self.strategies) if s == strategy]
            keep &= np.isin(self.strategy_codes, codes)
        return np.flatnonzero(keep).astype(np.int64)

    def nbytes(self) -> int:
        """What the snapshot holds, estimated: its arrays exactly, its rows at a flat rate."""
        if self.held_bytes is not None:
            return self.held_bytes
        arrays: list[npt.NDArray[np.generic]] = [self.lengths, self.namespace_codes]
        arrays += [self.strategy_codes, self.confidence, self.last_seen, self.vector_rows]
        arrays.append(self.matrix)
        posting = 16 * sum(len(rows) for rows, _ in self.postings.values())
        posting += 200 * len(self.postings)  # the term, its dict slot and two array views
        threaded = sum(t.rows.nbytes + 64 * len(t.positions) for t in self.thread_rows.values())
        text = sum(len(c) for c in self.contents)
        rows = self.size * _ROW_OVERHEAD_BYTES
        return sum(a.nbytes for a in arrays) + posting + threaded + text + rows


def build_snapshot(
    rows: Sequence[IndexRow],
    embedder: EmbedderId | None,
    progress: BuildProgress | None = None,
) -> Snapshot:
    """The snapshot of ``rows`` (already in record-id order, every one a live head).

    A vector whose width is not ``embedder.dims`` is left out, as recall's scan leaves it out.
    ``progress`` hears (rows tokenised, rows) as the per-row pass goes, and (rows, rows) once
    the snapshot is whole.
    """
    tokens = _tokens(rows, progress)
    postings = _postings(tokens)
    namespaces, namespace_codes = _codes([row.namespace for row in rows])
    strategies, strategy_codes = _codes([row.strategy for row in rows])
    vector_rows, matrix = _unit_matrix(rows, embedder)
    snapshot = Snapshot(
        embedder=embedder,
        record_ids=tuple(row.record_id for row in rows),
        contents=tuple(row.content for row in rows),
        tokens=tokens,
        lengths=np.array([len(t) for t in tokens], dtype=np.float64),
        postings=postings,
        namespaces=namespaces,
        namespace_codes=namespace_codes,
        strategies=strategies,
        strategy_codes=strategy_codes,
        confidence=np.array([row.confidence for row in rows], dtype=np.float64),
        last_seen=np.array([row.last_seen_at.timestamp() for row in rows], dtype=np.float64),
        trusted=np.array([row.trusted for row in rows], dtype=bool),
        thread_rows=_thread_rows(rows),
        row_threads=tuple(row.threads for row in rows),
        vector_rows=vector_rows,
        matrix=matrix,
        loaders=tuple(row.load for row in rows),
    )
    if progress is not None:
        progress(len(rows), len(rows))
    return snapshot


def _tokens(
    rows: Sequence[IndexRow], progress: BuildProgress | None
) -> tuple[tuple[str, ...], ...]:
    """Each row's searchable words; the one pass of the build that is Python per row."""
    if progress is None:
        return tuple(tuple(tokenize(row.searchable)) for row in rows)
    tokens: list[tuple[str, ...]] = []
    for row in rows:
        tokens.append(tuple(tokenize(row.searchable)))
        if len(tokens) % PROGRESS_EVERY == 0 and len(tokens) < len(rows):
            progress(len(tokens), len(rows))
    return tuple(tokens)


def _unit_matrix(
    rows: Sequence[IndexRow], embedder: EmbedderId | None
) -> tuple[IntArray, npt.NDArray[np.float32]]:
    """Each row's position in the matrix (-1: none) and the matrix of unit rows.

    Filled in place and normalised in place, so the scope's vectors are held once, not three
    times; the values are bit for bit ``unit_rows`` of the stacked vectors (the same norms,
    the same division).
    """
    dims = embedder.dims if embedder is not None else 0
    with_vector: list[int] = []
    vectors: list[npt.NDArray[np.float32]] = []
    if embedder is not None:
        for i, row in enumerate(rows):
            if row.vector is not None and np.size(row.vector) == dims:
                with_vector.append(i)
                vectors.append(row.vector)
    vector_rows = np.full(len(rows), -1, dtype=np.int64)
    vector_rows[with_vector] = np.arange(len(with_vector))
    # One C-level copy of every row (each flattened, cast to float32 as an assignment casts)
    # instead of a Python loop of row assignments: about 30 ms less in a 10k-row build.
    flat = np.empty(len(vectors) * dims, dtype=np.float32)
    if vectors:
        np.concatenate(vectors, axis=None, out=flat)
    matrix = flat.reshape(len(vectors), dims)
    if vectors:
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, np.where(norms > 0, norms, 1), out=matrix)
    return vector_rows, matrix


def _postings(tokens: Sequence[Sequence[str]]) -> dict[str, tuple[IntArray, FloatArray]]:
    """term -> (rows holding it, ascending; its count in each of those rows).

    Built as one sorted array of (term, row) pairs, so the per-token work in Python is one
    dictionary lookup; each term's postings are slices of two shared arrays.
    """
    vocabulary: dict[str, int] = {}
    term_ids = [vocabulary.setdefault(term, len(vocabulary)) for doc in tokens for term in doc]
    if not term_ids:
        return {}
    rows = np.repeat(np.arange(len(tokens), dtype=np.int64), [len(doc) for doc in tokens])
    pairs, counts = np.unique(
        np.asarray(term_ids, dtype=np.int64) * len(tokens) + rows, return_counts=True
    )
    terms, posted = np.divmod(pairs, len(tokens))
    starts = np.searchsorted(terms, np.arange(len(vocabulary) + 1))
    tf = counts.astype(np.float64)
    return {
        term: (posted[starts[i] : starts[i + 1]], tf[starts[i] : starts[i + 1]])
        for term, i in vocabulary.items()
    }


def _codes(values: Sequence[str]) -> tuple[tuple[str, ...], IntArray]:
    distinct: dict[str, int] = {}
    codes = np.array([distinct.setdefault(v, len(distinct)) for v in values], dtype=np.int64)
    return tuple(distinct), codes


def _thread_rows(rows: Sequence[IndexRow]) -> dict[Thread, ThreadRows]:
    members: dict[Thread, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        for thread in row.threads:
            members[thread].append(i)
    found: dict[Thread, ThreadRows] = {}
    for thread, indices in members.items():
        indices.sort(key=lambda i: (rows[i].first_seen_at, rows[i].record_id))
        positions = tuple((rows[i].first_seen_at, rows[i].record_id) for i in indices)
        found[thread] = ThreadRows(
            rows=np.array(indices, dtype=np.int64),
            positions=positions,
            first_seen_us=np.array([epoch_micros(at) for at, _ in positions], dtype=np.int64),
        )
    return found
