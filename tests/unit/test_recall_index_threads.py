"""The recall index over a store's rows walks each thread as the scan does: a record distilled
from a rollout is in no thread (as ``cairn.recall.expansion.threads`` has it), and a lender
whose thread is partly out of the recall's view steps over the members in view only."""

from __future__ import annotations

from pathlib import Path

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import Source, SourceKind
from cairn.ports import IndexRow, Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.index.rows import row_stream
from cairn.recall.scan import ScanningRecallIndex
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


def test_a_lender_whose_thread_is_partly_out_of_view_lends_its_neighbours_in_view(
    tmp_path: Path,
) -> None:
    """A session told in two namespaces, recalled under one: the lender's neighbours are the
    members in view beside it, counted among those only, as the scan walks them."""
    clock = FixedClock()
    told = [
        ("/other/a1/", "Booked the flight to Porto"),
        ("/other/a1/", "Packed the blue suitcase"),
        ("/facts/a1/", "The hotel is near the river"),
        ("/other/a1/", "Checked the weather in Porto"),
        ("/facts/a1/", "what about the aubergine diagnosis tea"),
        ("/other/a1/", "Called a taxi to the airport"),
        ("/facts/a1/", "Dinner was grilled sardines"),
        ("/facts/a1/", "Walked along the river at night"),
    ]
    with SQLiteBackend(tmp_path / "cairn.db", clock) as backend:
        stores = backend.stores()
        for namespace, content in told:
            record = NewRecord(
                namespace=namespace,
                content=content,
                sources=(Source(kind=SourceKind.USER, session_id="s1"),),
                vector=Vector(
                    embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed([content])[0])
                ),
            )
            stores.records.apply(SCOPE, [Create(record=record)])
            clock.advance(seconds=30)
        query = RecallQuery(text="what about the aubergine diagnosis tea", top_k=5)
        for namespace in ("/facts/", None):
            scoped = query.model_copy(update={"namespace_prefix": namespace})
            found = recall(
                SCOPE, scoped, stores=stores, embedder=EMBEDDER, clock=clock, journal=False
            )
            scan = recall(
                SCOPE,
                scoped,
                stores=stores,
                embedder=EMBEDDER,
                clock=clock,
                journal=False,
                index=ScanningRecallIndex(stores.records),
            )
            assert seen(found) == seen(scan)
            assert found.counts.contextual > 0
