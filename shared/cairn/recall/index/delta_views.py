"""What a merged snapshot (``cairn.recall.index.delta``) reads of a few rows, read when asked:
a per-row field, one term's postings, one thread's members.

Each is a view over the base snapshot and the new rows' lists. Those lists may grow after the
view is made (a later merge appends rows in place, ``delta.Merge``): a view reads only the rows
it was made with (``source`` and ``limit``), so an older snapshot answers as it did.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

from cairn.ports import RowLoader
from cairn.recall.expansion import Thread
from cairn.recall.index.snapshot import FloatArray, IntArray, Snapshot, ThreadRows, epoch_micros

# One new row's entry in a thread: (first_seen_at, record id, merged row).
Member = tuple[Any, str, int]


class Merged(Sequence[Any]):
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


class BaseVersions(Sequence[RowLoader]):
    """The base's rows as loaders that parse through the base (``Snapshot.version``), so a
    version parsed once is kept across every merge over that base."""

    def __init__(self, base: Snapshot) -> None:
        self._base = base

    def __len__(self) -> int:
        return self._base.size

    @overload
    def __getitem__(self, row: int) -> RowLoader: ...
    @overload
    def __getitem__(self, row: slice) -> Sequence[RowLoader]: ...
    def __getitem__(self, row: int | slice) -> RowLoader | Sequence[RowLoader]:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        version = self._base.version
        return lambda: version(row)


class Postings(Mapping[str, tuple[IntArray, FloatArray]]):
    """The base's postings with its row numbers mapped (rows left out dropped), plus the new
    rows' own below ``limit`` (each term's list ascends by merged row), merged when asked."""

    def __init__(
        self,
        base: Mapping[str, tuple[IntArray, FloatArray]],
        remap: IntArray,
        new: Mapping[str, tuple[list[int], list[float]]],
        limit: int,
    ) -> None:
        self._base, self._remap, self._new, self._limit = base, remap, new, limit
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
            end = bisect.bisect_left(added[0], self._limit)
            rows = np.concatenate([rows, np.asarray(added[0][:end], dtype=np.int64)])
            tf = np.concatenate([tf, np.asarray(added[1][:end], dtype=np.float64)])
            order = np.argsort(rows, kind="stable")
            rows, tf = rows[order], tf[order]
        if not len(rows):
            raise KeyError(term)
        return self._made.setdefault(term, (rows, tf))

    def __iter__(self) -> Iterator[str]:
        for term in self._new:
            if term in self:
                yield term
        for term in self._base:
            if term not in self._new and term in self:
                yield term

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Threads(Mapping[Thread, ThreadRows]):
    """Each thread's merged rows in (first_seen_at, record id) order, made when asked."""

    def __init__(
        self,
        base: Mapping[Thread, ThreadRows],
        remap: IntArray,
        new: Mapping[Thread, list[Member]],
        limit: int,
    ) -> None:
        self._base, self._remap, self._new, self._limit = base, remap, new, limit
        self._made: dict[Thread, ThreadRows] = {}

    def __getitem__(self, thread: Thread) -> ThreadRows:
        found = self._made.get(thread)
        if found is not None:
            return found
        members = [m for m in self._new.get(thread, ()) if m[2] < self._limit]
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
            first_seen_us=np.array([epoch_micros(m[0]) for m in members], dtype=np.int64),
        )
        return self._made.setdefault(thread, made)

    def __iter__(self) -> Iterator[Thread]:
        for thread in self._new:
            if thread in self:
                yield thread
        for thread in self._base:
            if thread not in self._new and thread in self:
                yield thread

    def __len__(self) -> int:
        return sum(1 for _ in self)
