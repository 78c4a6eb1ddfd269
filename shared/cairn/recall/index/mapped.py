"""A snapshot whose arrays are views of a mapped file, its per-row strings read on demand.

What a recall needs for every row (codes, confidence, recency, postings, the matrix) are
arrays over the mapping, used as they are; what it needs only for the rows it ranks or shows
(record ids, contents, tokens, versions, a thread's members in time order) is decoded from the
mapping when asked and not before, so mapping a 100k-row scope costs its header, its names
and a CRC pass, not a parse per row.

A file overwritten with zeros while mapped (an erase in another process destroying it,
``cairn.store.snapshot_folder``, which zeroes the magic first, in a write of its own) reads as
zeros: a version that no longer parses raises ``SnapshotGoneError``, and a search that ran
while the zeroing began finds its snapshot no longer ``intact`` (the magic gone) when it ends;
either way the recall index answers that recall again from a fresh snapshot, so the answer is
the store's before the erase or after it, never one ranked over half-zeroed arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from cairn.models import EmbedderId, RecordVersion
from cairn.ports import RowLoader
from cairn.recall.expansion import Thread
from cairn.recall.index.snapshot import (
    EPOCH,
    MICROSECOND,
    FloatArray,
    IntArray,
    Snapshot,
    ThreadRows,
)

if TYPE_CHECKING:
    from cairn.recall.index.streamed import Sections

TEXT_FIELDS = 3  # record id, content, version JSON
_RECORD_ID, _CONTENT, _DATA = range(TEXT_FIELDS)
# Bytes a mapped row costs in the heap at most (a parsed version kept, its strings decoded).
_MAPPED_ROW_BYTES = 64


def _whole() -> bool:
    return True


class SnapshotGoneError(RuntimeError):
    """The mapped file changed under a recall (an erase destroyed it): answer again."""


class _Texts:
    """The per-row strings of the blob."""

    def __init__(self, text: npt.NDArray[np.uint8], offsets: IntArray) -> None:
        self._text = text
        self._offsets = offsets

    def get(self, row: int, field: int) -> str:
        at = row * TEXT_FIELDS + field
        start, end = int(self._offsets[at]), int(self._offsets[at + 1])
        return self._text[start:end].tobytes().decode("utf-8", errors="replace")


class _Column(Sequence[Any]):
    """One field of every row, decoded when first read and kept (a warm recall reads the same
    few rows' tokens again and again)."""

    def __init__(self, size: int, read: Any) -> None:
        self._size = size
        self._read = read
        self._kept: dict[int, Any] = {}

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, row: int) -> Any: ...
    @overload
    def __getitem__(self, row: slice) -> Sequence[Any]: ...
    def __getitem__(self, row: int | slice) -> Any:
        if isinstance(row, slice):
            return [self._read(i) for i in range(*row.indices(self._size))]
        if row < 0:
            row += self._size
        if not 0 <= row < self._size:
            raise IndexError(row)
        found = self._kept.get(row)
        if found is None:
            found = self._kept.setdefault(row, self._read(row))
        return found

    def many(self, rows: Sequence[int]) -> list[Any]:
        """``[self[row] for row in rows]`` for rows in range, in one call (a shortlist's)."""
        if rows and not (min(rows) >= 0 and max(rows) < self._size):
            raise IndexError(f"rows outside 0..{self._size - 1}")
        kept, read = self._kept, self._read
        found: list[Any] = []
        for row in rows:
            value = kept.get(row)
            if value is None:
                value = kept.setdefault(row, read(row))
            found.append(value)
        return found


class _Postings(Mapping[str, tuple[IntArray, FloatArray]]):
    def __init__(self, terms: list[str], rows: IntArray, tf: FloatArray, starts: IntArray) -> None:
        self._number = {term: i for i, term in enumerate(terms)}
        self._rows, self._tf, self._starts = rows, tf, starts

    def __getitem__(self, term: str) -> tuple[IntArray, FloatArray]:
        i = self._number[term]
        start, end = int(self._starts[i]), int(self._starts[i + 1])
        return self._rows[start:end], self._tf[start:end]

    def __iter__(self) -> Iterator[str]:
        return iter(self._number)

    def __len__(self) -> int:
        return len(self._number)


class _Positions(Sequence[tuple[datetime, str]]):
    """A thread's members' (first_seen_at, record id), each decoded when read."""

    def __init__(self, members: list[int], first_seen: IntArray, texts: _Texts) -> None:
        self._members, self._first_seen, self._texts = members, first_seen, texts

    def __len__(self) -> int:
        return len(self._members)

    @overload
    def __getitem__(self, at: int) -> tuple[datetime, str]: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[tuple[datetime, str]]: ...
    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(len(self)))]
        row = self._members[at]
        when = EPOCH + int(self._first_seen[row]) * MICROSECOND
        return when, self._texts.get(row, _RECORD_ID)


class _Threads(Mapping[Thread, ThreadRows]):
    """Each thread's rows, with their (first_seen_at, record id) positions read when asked."""

    def __init__(
        self,
        threads: list[Thread],
        rows: IntArray,
        starts: IntArray,
        first_seen: IntArray,
        texts: _Texts,
    ) -> None:
        self._number = {thread: i for i, thread in enumerate(threads)}
        self._rows, self._starts, self._texts = rows, starts, texts
        self._first_seen = first_seen
        self._built: dict[Thread, ThreadRows] = {}

    def __getitem__(self, thread: Thread) -> ThreadRows:
        found = self._built.get(thread)
        if found is None:
            i = self._number[thread]
            members = self._rows[int(self._starts[i]) : int(self._starts[i + 1])]
            positions = _Positions(members.tolist(), self._first_seen, self._texts)
            made = ThreadRows(members, positions, self._first_seen[members])
            found = self._built.setdefault(thread, made)
        return found

    def __iter__(self) -> Iterator[Thread]:
        return iter(self._number)

    def __len__(self) -> int:
        return len(self._number)


class _RowThreads(Sequence[tuple[Thread, ...]]):
    """Each row's threads, read from the thread sections backwards: which threads' members
    a row is among, inverted for every row at once when a row is first asked (one sort of the
    members: about 0.4 ms at 10k rows, 5 at 100k), so expansion never parses a lender for its
    threads."""

    def __init__(self, size: int, threads: list[Thread], rows: IntArray, starts: IntArray) -> None:
        self._size, self._threads, self._rows, self._starts = size, threads, rows, starts
        self._inverted: tuple[IntArray, IntArray] | None = None

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, row: int) -> tuple[Thread, ...]: ...
    @overload
    def __getitem__(self, row: slice) -> Sequence[tuple[Thread, ...]]: ...
    def __getitem__(self, row: int | slice) -> Any:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(self._size))]
        if row < 0:
            row += self._size
        if not 0 <= row < self._size:
            raise IndexError(row)
        if self._inverted is None:  # which thread each member entry is, grouped by row
            order = np.argsort(self._rows)  # a row's threads in any order: they are a set
            owner = np.repeat(np.arange(len(self._threads)), np.diff(self._starts))[order]
            bounds = np.zeros(self._size + 1, dtype=np.int64)
            np.cumsum(np.bincount(self._rows, minlength=self._size), out=bounds[1:])
            self._inverted = owner, bounds
        owner, bounds = self._inverted
        numbers = owner[int(bounds[row]) : int(bounds[row + 1])].tolist()
        return tuple(self._threads[t] for t in numbers)


def _loader(texts: _Texts, row: int) -> RowLoader:
    def load() -> RecordVersion:
        try:
            return RecordVersion.model_validate_json(texts.get(row, _DATA))
        except ValidationError as exc:
            raise SnapshotGoneError("the snapshot file changed under this recall") from exc

    return load


def mapped_snapshot(
    sections: Sections,
    embedder: EmbedderId | None,
    held_bytes: int,
    intact: Callable[[], bool] = _whole,
) -> Snapshot:
    """The snapshot over ``sections``: a checked file's (``snapshot_file``), or arrays just
    built (``streamed``)."""
    size, arrays, names, matrix = sections.size, sections.arrays, sections.names, sections.matrix
    texts = _Texts(arrays["text"], arrays["text_offsets"])
    terms = [str(term) for term in names["terms"]]
    token_ids, token_starts = arrays["token_ids"], arrays["token_starts"]

    def tokens(row: int) -> tuple[str, ...]:
        ids = token_ids[int(token_starts[row]) : int(token_starts[row + 1])]
        return tuple(terms[i] for i in ids.tolist())

    threads: list[Thread] = [(str(kind), str(target)) for kind, target in names["threads"]]
    return Snapshot(
        embedder=embedder,
        record_ids=_Column(size, lambda row: texts.get(row, _RECORD_ID)),
        contents=_Column(size, lambda row: texts.get(row, _CONTENT)),
        tokens=_Column(size, tokens),
        lengths=arrays["lengths"],
        postings=_Postings(
            terms, arrays["posting_rows"], arrays["posting_tf"], arrays["posting_starts"]
        ),
        namespaces=tuple(str(ns) for ns in names["namespaces"]),
        namespace_codes=arrays["namespace_codes"],
        strategies=tuple(str(s) for s in names["strategies"]),
        strategy_codes=arrays["strategy_codes"],
        confidence=arrays["confidence"],
        last_seen=arrays["last_seen"],
        trusted=arrays["trusted"],
        thread_rows=_Threads(
            threads, arrays["thread_rows"], arrays["thread_starts"], arrays["first_seen_us"], texts
        ),
        row_threads=_RowThreads(size, threads, arrays["thread_rows"], arrays["thread_starts"]),
        vector_rows=arrays["vector_rows"],
        matrix=matrix,
        loaders=_Column(size, lambda row: _loader(texts, row)),
        held_bytes=held_bytes + size * _MAPPED_ROW_BYTES,
        intact=intact,
    )
