"""A recall index build reports how far it has come, on every backend, and changes nothing.

A store that reads index rows in bulk (``IndexRowReader``, an optional capability: the memory
backend has none and is skipped) calls ``progress`` with (rows read, rows in all), never
backwards, last with the two equal; the rows are the same as a read without a listener. A
recall inside ``reporting`` hears the build's two passes as one count of twice the live heads,
ending whole, and answers exactly as a recall outside it.
"""

from __future__ import annotations

import pytest

from cairn.changes import MAX_CHANGES_PER_APPLY, Create, NewRecord, Retract
from cairn.clock import FixedClock
from cairn.ports import PROGRESS_EVERY, IndexRowReader, Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.index.embedded import bulk_reads
from cairn.recall.index.progress import reporting
from cairn.testing import HashingEmbedder
from tests.conformance.samples import FACTS, SCOPE

EMBEDDER = HashingEmbedder(dims=16)
# More than two reports' worth, with a retracted head that the count must leave out. DynamoDB's
# reader cannot count ahead and reports once, at the end: a few dozen rows show that (moto
# writes a couple of hundred records a second, so 2,000 would take minutes).
MANY = 2 * PROGRESS_EVERY + 37
FEW_ON = {"dynamodb": 37}


def _fill(stores: Stores, count: int) -> None:
    for first in range(0, count, MAX_CHANGES_PER_APPLY):
        changes = []
        for i in range(first, min(count, first + MAX_CHANGES_PER_APPLY)):
            record = NewRecord.model_validate(
                {"namespace": FACTS, "content": f"fact {i}", "sources": [{"kind": "user"}]}
            )
            changes.append(Create(record=record))
        stores.records.apply(SCOPE, changes)
    first = stores.records.list_records(SCOPE, limit=1).items[0]
    stores.records.apply(SCOPE, [Retract(record_id=first.record_id)])


@pytest.fixture
def count(backend_name: str) -> int:
    return FEW_ON.get(backend_name, MANY)


@pytest.fixture
def filled(stores: Stores, count: int) -> Stores:
    if not bulk_reads(stores.records):
        pytest.skip("this backend reads index rows page by page (no IndexRowReader)")
    _fill(stores, count)
    return stores


def _rising_to_the_end(heard: list[tuple[int, int]], total: int) -> None:
    assert heard, "progress was never reported"
    assert heard[-1] == (total, total)
    done = [d for d, _ in heard]
    assert done == sorted(done)
    assert all(t == total for _, t in heard)


def test_a_bulk_read_reports_rows_read_up_to_all_of_them_and_reads_the_same_rows(
    filled: Stores, count: int
) -> None:
    reader = filled.records
    assert isinstance(reader, IndexRowReader)
    heard: list[tuple[int, int]] = []
    rows = reader.index_rows(SCOPE, EMBEDDER.identity, lambda d, t: heard.append((d, t)))
    quiet = reader.index_rows(SCOPE, EMBEDDER.identity)
    assert [r.record_id for r in rows] == [r.record_id for r in quiet]
    assert len(rows) == count - 1  # the retracted head is not read
    _rising_to_the_end(heard, count - 1)
    # As it goes (every PROGRESS_EVERY rows), or once at the end for a reader that cannot
    # count ahead.
    assert len(heard) == 1 or len(heard) > (count - 1) // PROGRESS_EVERY


def test_a_recall_that_builds_the_index_reports_both_passes_and_answers_the_same(
    filled: Stores, count: int, clock: FixedClock
) -> None:
    query = RecallQuery(text="fact 21", top_k=3)
    heard: list[tuple[int, int]] = []
    with reporting(lambda d, t: heard.append((d, t))):
        told = recall(SCOPE, query, stores=filled, embedder=EMBEDDER, clock=clock)
    _rising_to_the_end(heard, 2 * (count - 1))
    assert len(heard) > (count - 1) // PROGRESS_EVERY  # as the passes go, not only at the end
    again: list[tuple[int, int]] = []
    with reporting(lambda d, t: again.append((d, t))):
        cached = recall(SCOPE, query, stores=filled, embedder=EMBEDDER, clock=clock)
    assert again == []  # nothing built: the snapshot is current
    quiet = recall(SCOPE, query, stores=filled, embedder=EMBEDDER, clock=clock)
    assert told.block == cached.block == quiet.block
