"""The recall index contract, on every backend: a recall through the backend's index (or, for a
backend without one, the index built afresh for each recall) answers exactly as a full scan of
the store, and every kind of committed write shows in the very next recall: create, revise,
fold-in, supersede, retract, erase, erase of the scope; a write through another handle on the
same store too. A store that persists its index (``Stores.index_snapshots``) answers a reopened
handle from the persisted snapshot, exactly as the scan. A record filter narrows the heads
before ranking: a record it accepts is found however many better-ranked records it rejects."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from cairn.changes import Create, FoldIn, NewRecord, RecordPatch, Retract, Revise, Supersede, Vector
from cairn.clock import FixedClock
from cairn.models import Edge, EdgeKind, RecordVersion, Source, SourceKind
from cairn.ports import Stores
from cairn.recall import RecallPolicy, RecallQuery, Recollection, recall
from cairn.recall.candidates import RecordFilter
from cairn.recall.index import EmbeddedRecallIndex, RecallIndex, index_of
from cairn.recall.scan import ScanningRecallIndex
from cairn.testing import HashingEmbedder
from tests.conformance.backends import open_backend
from tests.conformance.samples import FACTS, SCOPE

EMBEDDER = HashingEmbedder(dims=32)
CONTENTS = (
    "Prefers green tea in the morning",
    "Their sister Ana lives in Lisbon",
    "Has a dog named Milo",
    "Took up bouldering in May",
    "Prefers oat latte after lunch",
    "Visited Kyoto with Ana in spring",
    "Plays chess every Sunday",
    "Is allergic to peanuts",
)
# Paraphrase dedup off (only exact repeats collapse): every live record can be shown.
POLICY = RecallPolicy(relevance_floor=0.1, dedup_cosine=1.0, dedup_jaccard=1.0)
QUERIES = (
    RecallQuery(text="what tea does the user drink", top_k=3),
    RecallQuery(text="Ana Lisbon Kyoto", top_k=2),
    RecallQuery(text="dog", namespace_prefix=FACTS),
    RecallQuery(text="chess sunday", strategy="semantic", top_k=1),
    RecallQuery(text="zebra"),
)


def fact(content: str, i: int, *, namespace: str = FACTS, vector: bool = True) -> NewRecord:
    values = tuple(EMBEDDER.embed([content])[0]) if vector else None
    return NewRecord(
        namespace=namespace,
        strategy="semantic" if i % 2 else "custom",
        content=content,
        confidence=0.5 + 0.05 * i,
        edges=(Edge(kind=EdgeKind.PART_OF, target="trip"),) if i % 3 == 0 else (),
        sources=(Source(kind=SourceKind.USER if i % 4 else SourceKind.MODEL, session_id="s1"),),
        vector=Vector(embedder=EMBEDDER.identity, values=values) if values else None,
    )


def fill(stores: Stores, clock: FixedClock) -> list[str]:
    ids = []
    for i, content in enumerate(CONTENTS):
        clock.advance(seconds=60)
        namespace = FACTS if i % 3 else "/preferences/a1/"
        record = fact(content, i, namespace=namespace, vector=i != 5)
        (written,) = stores.records.apply(SCOPE, [Create(record=record)])
        ids.append(written.record_id)
    clock.advance(seconds=60)
    return ids


def asked(
    stores: Stores,
    clock: FixedClock,
    query: RecallQuery,
    index: RecallIndex | None = None,
    where: RecordFilter | None = None,
) -> Recollection:
    return recall(
        SCOPE,
        query,
        stores=stores,
        embedder=EMBEDDER,
        clock=clock,
        policy=POLICY,
        journal=False,
        index=index,
        where=where,
    )


def scanned(stores: Stores, clock: FixedClock, query: RecallQuery) -> Recollection:
    return asked(stores, clock, query, ScanningRecallIndex(stores.records))


def seen(found: Recollection) -> tuple[object, ...]:
    entries = tuple((e.version.ref, e.score, e.relevance, e.cosine) for e in found.entries)
    return found.block, entries, found.counts


def assert_same_as_a_scan(stores: Stores, clock: FixedClock) -> None:
    for query in QUERIES:
        assert seen(asked(stores, clock, query)) == seen(scanned(stores, clock, query))


def shown(stores: Stores, clock: FixedClock, text: str) -> set[str]:
    found = asked(stores, clock, RecallQuery(text=text, top_k=20))
    return {e.version.content for e in found.entries}


def test_recall_through_the_index_is_the_scan(stores: Stores, clock: FixedClock) -> None:
    fill(stores, clock)
    assert_same_as_a_scan(stores, clock)
    assert_same_as_a_scan(stores, clock)  # warm: a cached index answers the same
    past = RecallQuery(text="tea", as_of=clock.now() - timedelta(minutes=5))
    assert seen(asked(stores, clock, past)) == seen(scanned(stores, clock, past))


def test_every_kind_of_write_shows_in_the_next_recall(stores: Stores, clock: FixedClock) -> None:
    ids = fill(stores, clock)
    assert "Has a dog named Milo" in shown(stores, clock, "dog named Milo")
    writes = [
        Create(record=fact("Adopted a second dog named Rex", 9)),
        Revise(
            record_id=ids[2],
            patch=RecordPatch(content="Has a dog named Otto"),
            vector=Vector(
                embedder=EMBEDDER.identity,
                values=tuple(EMBEDDER.embed(["Has a dog named Otto"])[0]),
            ),
        ),
        FoldIn(record_id=ids[0]),
        Supersede(record_id=ids[6], replacement=fact("Plays chess on Saturdays now", 10)),
        Retract(record_id=ids[1]),
    ]
    for change in writes:
        clock.advance(seconds=60)
        stores.records.apply(SCOPE, [change])
        assert_same_as_a_scan(stores, clock)
    for now_shown in ("Adopted a second dog named Rex", "Has a dog named Otto"):
        assert now_shown in shown(stores, clock, now_shown)
    assert "Plays chess on Saturdays now" in shown(stores, clock, "chess on Saturdays")
    for gone in ("Has a dog named Milo", "Plays chess every Sunday", "Their sister Ana lives"):
        assert not any(c.startswith(gone) for c in shown(stores, clock, gone))
    stores.records.erase(SCOPE, ids[0])
    assert "Prefers green tea in the morning" not in shown(stores, clock, "green tea morning")
    assert_same_as_a_scan(stores, clock)
    stores.records.erase_scope(SCOPE)
    assert shown(stores, clock, "tea Ana dog chess") == set()
    assert_same_as_a_scan(stores, clock)


def test_a_write_through_another_handle_shows_in_the_next_recall(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    rex = "Adopted a second dog named Rex"
    first = open_backend(persistent_backend, clock, tmp_path)
    try:
        fill(first, clock)
        assert rex not in shown(first, clock, rex)
        second = open_backend(persistent_backend, clock, tmp_path)
        try:
            (written,) = second.records.apply(SCOPE, [Create(record=fact(rex, 9))])
            assert rex in shown(first, clock, rex)
            second.records.apply(SCOPE, [Retract(record_id=written.record_id)])
            assert rex not in shown(first, clock, rex)
        finally:
            second.close()
        assert_same_as_a_scan(first, clock)
    finally:
        first.close()


def test_a_reopened_store_answers_from_its_persisted_index_as_the_scan(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    first = open_backend(persistent_backend, clock, tmp_path)
    try:
        fill(first, clock)
        assert_same_as_a_scan(first, clock)  # builds the index, and persists it if it can
    finally:
        first.close()
    second = open_backend(persistent_backend, clock, tmp_path)
    try:
        assert_same_as_a_scan(second, clock)
        index = index_of(second)
        if second.index_snapshots is not None:
            assert isinstance(index, EmbeddedRecallIndex)
            assert index.persisted is not None
            assert (index.persisted.mapped, index.persisted.published) == (1, 0)
    finally:
        second.close()


@pytest.mark.parametrize("query", QUERIES[:2], ids=["tea", "names"])
def test_a_scope_without_records_recalls_nothing(
    stores: Stores, clock: FixedClock, query: RecallQuery
) -> None:
    found = asked(stores, clock, query)
    assert found.entries == ()
    assert seen(found) == seen(scanned(stores, clock, query))


def _tagged_blue(version: RecordVersion) -> bool:
    return version.metadata.get("colour") == "blue"


def test_a_filter_finds_a_match_ranked_below_a_hundred_better_records(
    stores: Stores, clock: FixedClock
) -> None:
    # 120 close matches for the query, then one weaker match, the only one tagged blue: ranked
    # over the whole scope it is 121st, so filtering the 100 best would never reach it.
    for i in range(120):
        record = fact(f"green tea every morning {i}", i % 8)
        stores.records.apply(SCOPE, [Create(record=record)])
    blue = fact("green tea on rare evenings with biscuits", 1).model_copy(
        update={"metadata": {"colour": "blue"}}
    )
    stores.records.apply(SCOPE, [Create(record=blue)])
    clock.advance(seconds=60)
    query = RecallQuery(text="green tea every morning", top_k=5)

    found = asked(stores, clock, query, where=_tagged_blue)
    scan = asked(stores, clock, query, ScanningRecallIndex(stores.records), where=_tagged_blue)

    assert [e.version.content for e in found.entries] == [blue.content]
    assert seen(found) == seen(scan)
    assert found.counts.candidates == 1  # the filter narrowed the collection, not the answer
    unfiltered = asked(stores, clock, RecallQuery(text=query.text, top_k=100))
    assert blue.content not in {e.version.content for e in unfiltered.entries}


def test_every_kind_of_write_shows_in_a_fresh_handle_as_the_scan(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    """Each handle recalls once, after the writes before it: on DynamoDB it finds the scope's
    index object one write behind and catches it up with the change feed."""
    writer = open_backend(persistent_backend, clock, tmp_path)
    try:
        ids = fill(writer, clock)
        assert_same_as_a_scan(writer, clock)  # the object (or persisted index), built once
        otto = Vector(
            embedder=EMBEDDER.identity, values=tuple(EMBEDDER.embed(["Has a dog named Otto"])[0])
        )
        writes = [
            Create(record=fact("Adopted a second dog named Rex", 9)),
            Revise(
                record_id=ids[2], patch=RecordPatch(content="Has a dog named Otto"), vector=otto
            ),
            FoldIn(record_id=ids[0]),
            Supersede(record_id=ids[6], replacement=fact("Plays chess on Saturdays now", 10)),
            Retract(record_id=ids[1]),
        ]
        for change in writes:
            clock.advance(seconds=60)
            writer.records.apply(SCOPE, [change])
            reader = open_backend(persistent_backend, clock, tmp_path)
            try:
                assert_same_as_a_scan(reader, clock)
                source = getattr(index_of(reader), "source", None)
                if source is not None:  # the object path: caught up, not read whole
                    assert (source.patched, source.rebuilt) == (1, 0)
            finally:
                reader.close()
        assert_same_as_a_scan(writer, clock)
    finally:
        writer.close()
