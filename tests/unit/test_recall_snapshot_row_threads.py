"""A snapshot's ``row_threads``: every row's threads are ``threads`` of its version, and the row
is a member of each in ``thread_rows``, whichever way the snapshot was made (built from rows,
mapped from streamed or compacted sections, merged by a delta, decoded from an index object).
Context expansion reads a lender's threads there instead of parsing its version."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cairn.changes import Create, NewRecord, Retract, Vector
from cairn.clock import FixedClock
from cairn.models import Edge, EdgeKind, Scope, Source, SourceKind
from cairn.ports import IndexRow, Stores
from cairn.recall.expansion import threads
from cairn.recall.index.compact import sections_without
from cairn.recall.index.delta import Merge
from cairn.recall.index.mapped import mapped_snapshot
from cairn.recall.index.object_codec import decode, encode
from cairn.recall.index.rows import row_stream
from cairn.recall.index.snapshot import Snapshot, build_snapshot
from cairn.recall.index.streamed import build_sections
from cairn.store.sqlite import SQLiteBackend
from tests.unit.snapshot_support import EMBEDDER, SCOPE

_CLOCK = FixedClock()


def _record(i: int) -> NewRecord:
    """Records of several sessions, some in a thread by an edge, some distilled (no thread)."""
    sources = [Source(kind=SourceKind.USER, session_id=f"s{i % 3}")]
    if i % 4 == 1:
        sources.append(Source(kind=SourceKind.USER, session_id=f"t{i % 2}"))
    if i % 5 == 4:
        sources = [Source(kind=SourceKind.MODEL, session_id="s0", rollout_id="r1")]
    edges = (Edge(kind=EdgeKind.PART_OF, target=f"topic-{i % 2}"),) if i % 3 == 2 else ()
    content = f"Note {i} about tea and the shop"
    return NewRecord(
        record_id=f"mem-{i:012x}{0:024x}",  # in the order of i
        namespace=f"/n{i % 2}/",
        content=content,
        sources=tuple(sources),
        edges=edges,
        vector=Vector(embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed([content])[0])),
    )


def _rows(stores: Stores, scope: Scope = SCOPE) -> list[IndexRow]:
    with row_stream(stores.records, scope, EMBEDDER.identity, bulk=True) as (_, stream):
        return list(stream)


def _assert_row_threads(snapshot: Snapshot) -> None:
    assert len(snapshot.row_threads) == snapshot.size
    for row in range(snapshot.size):
        held = snapshot.row_threads[row]
        assert sorted(held) == sorted(threads(snapshot.version(row)))
        assert len(set(held)) == len(held)
        for thread in held:
            assert row in snapshot.thread_rows[thread].rows.tolist()
    members = {t: set(snapshot.thread_rows[t].rows.tolist()) for t in snapshot.thread_rows}
    for thread, rows in members.items():
        assert all(thread in snapshot.row_threads[row] for row in rows)


def test_every_way_of_making_a_snapshot_gives_each_row_its_versions_threads(
    tmp_path: Path,
) -> None:
    with SQLiteBackend(tmp_path / "cairn.db", _CLOCK) as backend:
        stores = backend.stores()
        written = stores.records.apply(SCOPE, [Create(record=_record(i)) for i in range(14)])
        rows = _rows(stores)
        built = build_snapshot(rows, EMBEDDER.identity)
        _assert_row_threads(built)
        sections = build_sections(rows, EMBEDDER.identity, len(rows))
        mapped = mapped_snapshot(sections, EMBEDDER.identity, 0)
        _assert_row_threads(mapped)
        keep = np.array([i % 3 != 1 for i in range(len(rows))])
        _assert_row_threads(mapped_snapshot(sections_without(sections, keep), EMBEDDER.identity, 0))
        decoded = decode(encode(rows, "g1", EMBEDDER.identity), EMBEDDER.identity)
        _assert_row_threads(build_snapshot(decoded.rows, EMBEDDER.identity))

        # A delta over each base: one record retracted, two new ones, one of them appended.
        gone = written[4].record_id
        stores.records.apply(SCOPE, [Retract(record_id=gone, reason="test")])
        later = stores.records.apply(SCOPE, [Create(record=_record(i)) for i in (20, 21)])
        fresh = {row.record_id: row for row in _rows(stores)}
        changed = [gone, *(v.record_id for v in later)]
        for base in (built, mapped):
            merge = Merge.over(base, changed, [fresh[v.record_id] for v in later])
            _assert_row_threads(merge.snapshot)
            assert gone not in list(merge.snapshot.record_ids)
        stores.records.apply(SCOPE, [Create(record=_record(23))])
        appended = merge.appended([_rows(stores)[-1]])
        assert appended is not None
        _assert_row_threads(appended.snapshot)


def test_a_mapped_snapshot_tells_a_row_with_no_thread_and_refuses_a_row_out_of_range(
    tmp_path: Path,
) -> None:
    with SQLiteBackend(tmp_path / "cairn.db", _CLOCK) as backend:
        stores = backend.stores()
        stores.records.apply(SCOPE, [Create(record=_record(i)) for i in (4, 1)])
        rows = _rows(stores)
    mapped = mapped_snapshot(build_sections(rows, EMBEDDER.identity, len(rows)), None, 0)
    by_id = {mapped.record_ids[r]: r for r in range(mapped.size)}
    distilled = next(row.record_id for row in rows if not row.threads)
    assert mapped.row_threads[by_id[distilled]] == ()
    assert mapped.row_threads[-1] == mapped.row_threads[mapped.size - 1]
    for outside in (mapped.size, -mapped.size - 1):
        try:
            mapped.row_threads[outside]
        except IndexError:
            continue
        raise AssertionError(f"row {outside} was answered")
