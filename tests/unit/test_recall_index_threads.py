"""A store's index rows put a record distilled from a rollout in no thread, as
``cairn.recall.expansion.threads`` does, so the recall index over them walks each thread's
rows as the scan does."""

from __future__ import annotations

from pathlib import Path

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import Source, SourceKind
from cairn.ports import IndexRow, Stores
from cairn.recall.index.rows import row_stream
from cairn.store.sqlite import SQLiteBackend
from tests.unit.snapshot_support import EMBEDDER, SCOPE, asked, scanned, seen


def _rows(stores: Stores) -> list[IndexRow]:
    with row_stream(stores.records, SCOPE, EMBEDDER.identity, bulk=True) as (_, stream):
        return list(stream)


def test_a_distilled_record_in_a_sessions_turns_is_no_neighbour_in_a_stores_index(
    tmp_path: Path,
) -> None:
    """A store's index rows (``stored_threads``) put a record distilled from a rollout in no
    thread, as ``threads`` does, so it neither lends nor borrows, nor stands between turns."""
    clock = FixedClock()
    told = [
        ("I went to the market on monday", None),
        ("The weather was cold", None),
        ("The user likes aubergine", "r1"),
        ("Then we drank some tea", None),
        ("what about the aubergine diagnosis tea", None),
        ("Afterwards a long walk", None),
        ("Bought bread", None),
    ]
    with SQLiteBackend(tmp_path / "cairn.db", clock) as backend:
        stores = backend.stores()
        for content, rollout in told:
            kind = SourceKind.MODEL if rollout else SourceKind.USER
            record = NewRecord(
                namespace="/facts/a1/",
                content=content,
                sources=(Source(kind=kind, session_id="s1", rollout_id=rollout),),
                vector=Vector(
                    embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed([content])[0])
                ),
            )
            stores.records.apply(SCOPE, [Create(record=record)])
            clock.advance(seconds=30)
        rows = _rows(stores)
        assert [row.threads for row in rows if row.content == "The user likes aubergine"] == [
            frozenset()
        ]
        assert seen(asked(stores, clock)) == scanned(stores, clock)
