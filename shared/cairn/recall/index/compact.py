"""A persisted snapshot without the records an erase destroyed, made from its own arrays.

An erase must leave no content of the erased records in the snapshot files beside the store,
and rebuilding a file from the store costs 5.7 s at 100k records (quiet). The file's sections
already hold every other row, so ``compact_file`` (the folder's ``SnapshotCompactor``, run by
the erase after its commit: ``cairn.store.snapshot_folder``) writes them again without the
erased rows: the per-row arrays and the matrix gathered, term, namespace, strategy and thread
numbers given again in first-seen order (so no name only an erased row used is kept), the
postings made afresh from the tokens left (``streamed._postings``), the text blob gathered.
``sections_without`` gives exactly the sections ``build_sections`` makes of the rows left
(tests/unit/test_recall_snapshot_compact.py compares them array by array). The file keeps its
stamp and change feed position: a recall finds it behind the store and catches up from it
(``catch_up``), the erasure being then just a record that is gone, since the file no longer
holds it.
"""

from __future__ import annotations

import bisect
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cairn.recall.index.mapped import TEXT_FIELDS
from cairn.recall.index.snapshot_file import encode_stamped, load_sections, position_of
from cairn.recall.index.streamed import Sections, _postings

_STAMP = ("scope", "generation", "embedder", "dims")
IntArray = npt.NDArray[np.int64]


def compact_file(path: Path, record_ids: Collection[str]) -> Sequence[bytes | memoryview] | bool:
    """The file at ``path`` again without ``record_ids``' rows; ``True`` when it holds none of
    them (left as it is), ``False`` when it cannot be read whole (the caller destroys it)."""
    found = load_sections(path)
    if found is None:
        return False
    sections, header, intact = found
    ids = _RecordIds(sections)
    rows = [at for at in (ids.find(record_id) for record_id in record_ids) if at is not None]
    if not rows:
        return intact()
    keep = np.ones(sections.size, dtype=np.bool_)
    keep[rows] = False
    compacted = sections_without(sections, keep)
    if not intact():  # zeroed while read (another erase): what was gathered is not the file
        return False
    stamp = {key: header[key] for key in _STAMP}
    return encode_stamped(compacted, stamp, position_of(header))


class _RecordIds:
    """The record id of each row (the rows are in record-id order), decoded when compared."""

    def __init__(self, sections: Sections) -> None:
        self._text = sections.arrays["text"]
        self._offsets = sections.arrays["text_offsets"]
        self._size = sections.size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, row: int) -> str:
        start, end = self._offsets[row * TEXT_FIELDS], self._offsets[row * TEXT_FIELDS + 1]
        return bytes(self._text[int(start) : int(end)]).decode("utf-8")

    def find(self, record_id: str) -> int | None:
        at = bisect.bisect_left(self, record_id)
        return at if at < self._size and self[at] == record_id else None


def sections_without(sections: Sections, keep: npt.NDArray[np.bool_]) -> Sections:
    """``sections`` with only the rows ``keep`` marks, as ``build_sections`` makes them."""
    arrays, names = sections.arrays, sections.names
    rows = np.flatnonzero(keep)
    size = len(rows)
    counts = np.diff(arrays["token_starts"])
    old_ids = arrays["token_ids"][np.repeat(keep, counts)].astype(np.int64)
    starts = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts[rows], out=starts[1:])
    ids, terms = _renumbered(old_ids, names["terms"])
    posting_rows, posting_tf, posting_starts = _postings(ids, starts, size, len(terms))
    namespace_codes, namespaces = _renumbered(arrays["namespace_codes"][rows], names["namespaces"])
    strategy_codes, strategies = _renumbered(arrays["strategy_codes"][rows], names["strategies"])
    vector_rows = arrays["vector_rows"][rows]
    has = vector_rows >= 0
    matrix = np.ascontiguousarray(sections.matrix[vector_rows[has]])
    thread_rows, thread_starts, threads = _threads(arrays, names["threads"], keep, rows)
    fields = np.diff(arrays["text_offsets"]).reshape(-1, TEXT_FIELDS)
    offsets = np.zeros(size * TEXT_FIELDS + 1, dtype=np.int64)
    np.cumsum(fields[rows].reshape(-1), out=offsets[1:])
    text_keep = np.repeat(keep, fields.sum(axis=1))
    gathered: dict[str, npt.NDArray[Any]] = {
        "lengths": arrays["lengths"][rows],
        "namespace_codes": namespace_codes.astype("<i8"),
        "strategy_codes": strategy_codes.astype("<i8"),
        **{name: arrays[name][rows] for name in ("confidence", "last_seen", "trusted")},
        "vector_rows": np.where(has, np.cumsum(has) - 1, -1).astype("<i8"),
        "first_seen_us": arrays["first_seen_us"][rows],
        "posting_rows": posting_rows,
        "posting_tf": posting_tf,
        "posting_starts": posting_starts,
        "token_ids": ids.astype("<i4"),
        "token_starts": starts,
        "thread_rows": thread_rows,
        "thread_starts": thread_starts,
        "text_offsets": offsets,
        "text": arrays["text"][text_keep],
    }
    kept = {
        "namespaces": namespaces,
        "strategies": strategies,
        "terms": terms,
        "threads": threads,
    }
    return Sections(size=size, arrays=gathered, names=kept, matrix=matrix)


def _renumbered(codes: IntArray, names: list[Any]) -> tuple[IntArray, list[Any]]:
    """``codes`` numbered again by first appearance, and the names of those still used."""
    if not len(codes):
        return np.zeros(0, np.int64), []
    used, first = np.unique(codes, return_index=True)
    order = used[np.argsort(first, kind="stable")]
    number = np.full(len(names), -1, dtype=np.int64)
    number[order] = np.arange(len(order), dtype=np.int64)
    return number[codes], [names[int(i)] for i in order]


def _threads(
    arrays: dict[str, npt.NDArray[Any]],
    threads: list[Any],
    keep: npt.NDArray[np.bool_],
    rows: IntArray,
) -> tuple[IntArray, IntArray, list[Any]]:
    """Each thread's rows left, renumbered, in the order of their first row (as built)."""
    renumber = np.full(len(keep), -1, dtype=np.int64)
    renumber[rows] = np.arange(len(rows), dtype=np.int64)
    starts = arrays["thread_starts"]
    members: list[tuple[int, Any, IntArray]] = []
    for t, thread in enumerate(threads):
        left = renumber[arrays["thread_rows"][int(starts[t]) : int(starts[t + 1])]]
        left = left[left >= 0]
        if len(left):
            members.append((int(left.min()), thread, left.astype("<i8")))
    members.sort(key=lambda m: m[0])
    flat = np.concatenate([m[2] for m in members]) if members else np.zeros(0, "<i8")
    bounds = np.cumsum([0, *(len(m[2]) for m in members)], dtype=np.int64)
    return flat, bounds, [m[1] for m in members]
