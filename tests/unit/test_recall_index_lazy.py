"""A warm recall over the recall index parses only the versions its block shows: ranking and
dedup read the record id, confidence, last confirmation, digest and trust from the snapshot.

(Context expansion still parses the few hits that lend, to read their threads; the test turns
it off so that what it counts is the shortlist's.)"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import RecordVersion, Scope, Source, SourceKind
from cairn.ports import Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.candidates import Candidate, epoch_micros
from cairn.recall.index import shortlisted
from cairn.recall.index.shortlisted import exact_micros
from cairn.recall.query import DEFAULT_POLICY
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import HashingEmbedder

SCOPE = Scope(memory_id="m1", actor_id="a1")
EMBEDDER = HashingEmbedder(dims=32)
NOW = datetime(2026, 6, 1, tzinfo=UTC)
NO_CONTEXT = DEFAULT_POLICY.model_copy(update={"context_weight": 0.0})


def remember(stores: Stores, content: str) -> None:
    record = NewRecord(
        namespace="/facts/a1/",
        content=content,
        sources=(Source(kind=SourceKind.USER),),
        vector=Vector(embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed([content])[0])),
    )
    stores.records.apply(SCOPE, [Create(record=record)])


def build_index(stores: Stores) -> None:
    """One recall, so that the scope's index is built before what a test counts."""
    recall(
        SCOPE, RecallQuery(text="friend"), stores=stores, embedder=EMBEDDER, clock=FixedClock(NOW)
    )


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The record ids of the versions parsed from stored JSON while the test runs."""
    ids: list[str] = []
    original = RecordVersion.model_validate_json.__func__  # type: ignore[attr-defined]

    def counted(cls: type[RecordVersion], *args: Any, **kwargs: Any) -> RecordVersion:
        version: RecordVersion = original(cls, *args, **kwargs)
        ids.append(version.record_id)
        return version

    monkeypatch.setattr(RecordVersion, "model_validate_json", classmethod(counted))
    return ids


def test_a_warm_recall_parses_only_the_entries_it_shows(tmp_path: Path, parsed: list[str]) -> None:
    with SQLiteBackend(tmp_path / "cairn.db", FixedClock(NOW)) as backend:
        stores = backend.stores()
        for _ in range(12):  # exact repeats: dedup drops them by digest, below the first shown
            remember(stores, "Prefers green tea in the morning")
        for i in range(20):
            remember(stores, f"Drinks green tea with friend number {i}")
        query = RecallQuery(text="green tea in the morning", top_k=4)
        build_index(stores)
        parsed.clear()
        found = recall(
            SCOPE, query, stores=stores, embedder=EMBEDDER, clock=FixedClock(NOW), policy=NO_CONTEXT
        )
        shown = {entry.version.record_id for entry in found.entries}
        assert len(shown) == 4
        assert found.counts.deduplicated >= 11  # the repeats were ranked, then dropped
        assert set(parsed) <= shown


def test_a_warm_recall_makes_candidates_only_for_the_rows_dedup_visits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[str] = []

    def counted(*args: Any, **kwargs: Any) -> Candidate:
        candidate = Candidate(*args, **kwargs)
        made.append(candidate.record_id)
        return candidate

    with SQLiteBackend(tmp_path / "cairn.db", FixedClock(NOW)) as backend:
        stores = backend.stores()
        for i in range(40):  # distinct, so the first shortlist ranks many more than it shows
            remember(stores, f"Drinks green tea with friend number {i}")
        build_index(stores)
        monkeypatch.setattr(shortlisted, "Candidate", counted)
        found = recall(
            SCOPE,
            RecallQuery(text="green tea with a friend", top_k=2),
            stores=stores,
            embedder=EMBEDDER,
            clock=FixedClock(NOW),
            policy=NO_CONTEXT,
        )
        assert len(found.entries) == 2
        # Ranked: the first shortlist's 16 rows; made: the two shown and what dedup dropped.
        assert len(made) == 2 + found.counts.deduplicated
        assert {entry.version.record_id for entry in found.entries} <= set(made)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2105, 12, 31)))
def test_a_snapshot_timestamp_gives_back_its_exact_microseconds(when: datetime) -> None:
    aware = when.replace(tzinfo=UTC)
    assert exact_micros(aware.timestamp()) == epoch_micros(aware)


def test_past_two_to_the_32_seconds_a_timestamp_is_not_trusted_for_microseconds() -> None:
    late = datetime(2107, 1, 1, tzinfo=UTC) + timedelta(microseconds=3)
    assert exact_micros(late.timestamp()) is None
