"""A store's index rows carry each head's threads exactly as ``cairn.recall.expansion.threads``
gives them from its version, on every backend that reads index rows in bulk: a record's source
sessions and its part_of / discussed_in targets, and none for a record distilled by extraction
(a source cites a rollout), though that source names a session. The recall index walks a
thread's rows from these, so a distilled record must be in none, as the scan has it."""

from __future__ import annotations

import pytest

from cairn.changes import Create, NewRecord
from cairn.models import Edge, EdgeKind, Source, SourceKind
from cairn.ports import IndexRowReader, Stores
from cairn.recall.expansion import threads
from cairn.recall.index.embedded import bulk_reads
from tests.conformance.samples import FACTS, SCOPE


def _record(content: str, sources: list[Source], edges: tuple[Edge, ...] = ()) -> NewRecord:
    return NewRecord(namespace=FACTS, content=content, sources=tuple(sources), edges=edges)


def test_index_rows_carry_the_threads_of_their_versions(stores: Stores) -> None:
    if not bulk_reads(stores.records):
        pytest.skip("this backend reads index rows page by page (no IndexRowReader)")
    turn = Source(kind=SourceKind.USER, session_id="s1")
    distilled = Source(kind=SourceKind.MODEL, session_id="s1", rollout_id="r1")
    topic = (
        Edge(kind=EdgeKind.DISCUSSED_IN, target="trip"),
        Edge(kind=EdgeKind.RELATES_TO, target="x"),
    )
    written = stores.records.apply(
        SCOPE,
        [
            Create(record=_record("A turn of session one", [turn])),
            Create(
                record=_record(
                    "Two sessions", [turn, Source(kind=SourceKind.USER, session_id="s2")]
                )
            ),
            Create(record=_record("A fact distilled from it", [distilled], topic)),
            Create(record=_record("Part of the trip", [Source(kind=SourceKind.USER)], topic)),
        ],
    )
    records = stores.records
    assert isinstance(records, IndexRowReader)
    rows = {row.record_id: row for row in records.index_rows(SCOPE, None)}
    for version in written:
        assert rows[version.record_id].threads == threads(version), version.content
    assert rows[written[2].record_id].threads == frozenset()
