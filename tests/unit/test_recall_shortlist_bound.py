"""The shortlist's recency bound holds within an hour: rows last seen in the same hour share one
bound (the recency of the end of that hour), which must be at least each row's own score.

Twelve records say the same words, confirmed minutes apart inside one clock hour, so their
relevance ties and only recency (then record id) orders them. With a shortlist of one row the
index must widen past every row of that hour before it may stop; a bound taken at the start of
the hour, or any bound below a row's own recency, stops early and shows an older record.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cairn.changes import Create, NewRecord, Vector
from cairn.models import Scope, Source, SourceKind
from cairn.recall import RecallPolicy, RecallQuery, Recollection, recall
from cairn.recall.index import EmbeddedRecallIndex, RecallIndex, TransientRecallIndex
from cairn.recall.scan import ScanningRecallIndex
from cairn.testing import FixedClock, HashingEmbedder, InMemoryBackend

SCOPE = Scope(memory_id="mem-bound", actor_id="user-1")
EMBEDDER = HashingEmbedder(dims=32)
HOUR = datetime(2025, 8, 20, 9, tzinfo=UTC)  # the start of a clock hour
RECORDS = 12
# Seen minutes apart inside the hour, not in order of writing: the newest is not the last id.
MINUTES = [(i * 7) % 55 for i in range(RECORDS)]


def _recall(
    backend: InMemoryBackend, index: RecallIndex, top_k: int, now: datetime
) -> Recollection:
    return recall(
        SCOPE,
        RecallQuery(text="tea kyoto", top_k=top_k),
        stores=backend.stores(),
        embedder=EMBEDDER,
        clock=FixedClock(now),
        policy=RecallPolicy(recency_weight=0.3, context_weight=0.0, dedup_cosine=1.0),
        journal=False,
        index=index,
    )


def _seen(found: Recollection) -> tuple[object, ...]:
    return found.block, tuple((e.version.record_id, e.score) for e in found.entries)


@pytest.mark.parametrize("later", [timedelta(minutes=58), timedelta(days=3, minutes=1)])
def test_rows_of_one_hour_are_ranked_as_the_scan_ranks_them(later: timedelta) -> None:
    backend = InMemoryBackend(FixedClock(HOUR))
    stores = backend.stores()
    vector = Vector(embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed(["tea kyoto"])[0]))
    for i, minutes in enumerate(MINUTES):
        record = NewRecord(
            namespace=f"/facts/{SCOPE.actor_id}/",
            content=f"tea in kyoto number {i}",
            sources=(Source(kind=SourceKind.USER, session_id=f"s-{i}"),),
            seen_at=HOUR + timedelta(minutes=minutes),
            vector=vector,
        )
        stores.records.apply(SCOPE, [Create(record=record)])
    now = HOUR + later
    newest = max(range(RECORDS), key=lambda i: MINUTES[i])
    for top_k in (1, 2, 3):
        scanned = _recall(backend, ScanningRecallIndex(stores.records), top_k, now)
        assert scanned.entries[0].version.content.endswith(f"number {newest}")
        for index in (
            TransientRecallIndex(stores.records, shortlist=1),
            EmbeddedRecallIndex(stores.records, backend.generations(), shortlist=1),
        ):
            assert _seen(_recall(backend, index, top_k, now)) == _seen(scanned)
