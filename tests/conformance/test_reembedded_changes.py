"""Re-embedding in the record change feed, on every backend: ``VectorWriter.add_vectors`` puts
one ``re-embedded`` change per vector it stored in the same transaction (the version it names,
no content), seen by ``scope_changes``, ``last_sequence`` and a store-wide ``changes_after``; a
call that stores nothing (a rerun, a ref that is no live head) adds none; erasure leaves such
a change as it leaves every other change, ids only, followed by the record's ``erased`` one."""

from __future__ import annotations

import pytest

from cairn.changes import RecordPatch, Retract, Revise
from cairn.models import EmbedderId
from cairn.ports import RecordChange, RecordChangeFeed, StoreChangeFeed, Stores, VectorWriter
from tests.conformance.samples import OTHER_ACTOR, SCOPE, create, vector

NEXT = EmbedderId(model_id="next-embedder", dims=3)
THIRD = EmbedderId(model_id="third-embedder", dims=2)


@pytest.fixture
def writer(stores: Stores) -> VectorWriter:
    records = stores.records
    assert isinstance(records, VectorWriter), f"{type(records).__name__} cannot re-embed"
    return records


@pytest.fixture
def feed(stores: Stores, backend_name: str) -> RecordChangeFeed:
    if stores.changes is None:
        pytest.skip(f"backend {backend_name!r} has no RecordChangeFeed (capability missing)")
    return stores.changes


def _seen(changes: tuple[RecordChange, ...]) -> list[tuple[str, int, str]]:
    return [(c.record_id, c.version, c.kind) for c in changes]


def test_each_vector_stored_is_one_re_embedded_change_at_its_version(
    stores: Stores, writer: VectorWriter, feed: RecordChangeFeed
) -> None:
    tea = create(stores, "Drinks green tea")
    (tea2,) = stores.records.apply(
        SCOPE, [Revise(record_id=tea.record_id, patch=RecordPatch(content="Drinks black tea"))]
    )
    dog = create(stores, "Has a dog named Milo")
    before = feed.last_sequence(SCOPE)

    stored = writer.add_vectors(
        SCOPE,
        [(tea2.ref, vector(1, 0, 0, embedder=NEXT)), (dog.ref, vector(0, 1, 0, embedder=NEXT))],
    )

    later = feed.scope_changes(SCOPE, before)
    assert stored == 2
    assert sorted(_seen(later)) == sorted(
        [(tea.record_id, 2, "re-embedded"), (dog.record_id, 1, "re-embedded")]
    )
    assert [c.sequence for c in later] == sorted({c.sequence for c in later})
    assert min(c.sequence for c in later) > before
    assert feed.last_sequence(SCOPE) == later[-1].sequence
    for change in later:
        assert "tea" not in change.model_dump_json()
        assert "Milo" not in change.model_dump_json()
    assert feed.last_sequence(OTHER_ACTOR) == 0  # only its own scope's sequence moves


def test_a_store_wide_feed_lists_the_re_embedded_change(
    stores: Stores, writer: VectorWriter, feed: RecordChangeFeed, backend_name: str
) -> None:
    if not isinstance(feed, StoreChangeFeed):
        pytest.skip(f"backend {backend_name!r} keeps a sequence per scope, not one per store")
    tea = create(stores, "Drinks green tea")
    writer.add_vectors(SCOPE, [(tea.ref, vector(1, 0, 0, embedder=NEXT))])

    listed = feed.changes_after(0, memory_id=SCOPE.memory_id)

    assert _seen(listed) == [(tea.record_id, 1, "created"), (tea.record_id, 1, "re-embedded")]


def test_a_rerun_that_stores_nothing_adds_no_change(
    stores: Stores, writer: VectorWriter, feed: RecordChangeFeed
) -> None:
    tea = create(stores, "Drinks green tea")
    writer.add_vectors(SCOPE, [(tea.ref, vector(1, 0, 0, embedder=NEXT))])
    after_first = feed.scope_changes(SCOPE)

    assert writer.add_vectors(SCOPE, [(tea.ref, vector(0, 0, 1, embedder=NEXT))]) == 0

    assert feed.scope_changes(SCOPE) == after_first
    assert feed.last_sequence(SCOPE) == after_first[-1].sequence


def test_a_ref_skipped_is_no_change_and_only_the_stored_are(
    stores: Stores, writer: VectorWriter, feed: RecordChangeFeed
) -> None:
    moved = create(stores, "Lives in Porto")
    stores.records.apply(
        SCOPE, [Revise(record_id=moved.record_id, patch=RecordPatch(content="Lives in Braga"))]
    )
    gone = create(stores, "Owns a bike")
    stores.records.apply(SCOPE, [Retract(record_id=gone.record_id, reason="sold it")])
    kept = create(stores, "Plays the cello")
    before = feed.last_sequence(SCOPE)

    stored = writer.add_vectors(
        SCOPE,
        [
            (moved.ref, vector(1, 0, 0, embedder=NEXT)),  # no longer the head
            (gone.ref, vector(0, 1, 0, embedder=NEXT)),  # retracted
            (kept.ref, vector(0, 0, 1, embedder=NEXT)),
        ],
    )

    assert stored == 1
    assert _seen(feed.scope_changes(SCOPE, before)) == [(kept.record_id, 1, "re-embedded")]


def test_a_version_re_embedded_twice_is_two_changes_with_their_own_ids(
    stores: Stores, writer: VectorWriter, feed: RecordChangeFeed
) -> None:
    tea = create(stores, "Drinks green tea")
    writer.add_vectors(SCOPE, [(tea.ref, vector(1, 0, 0, embedder=NEXT))])
    writer.add_vectors(SCOPE, [(tea.ref, vector(1, 0, embedder=THIRD))])

    changes = feed.scope_changes(SCOPE)
    again = feed.scope_changes(SCOPE)

    assert _seen(changes)[1:] == [(tea.record_id, 1, "re-embedded")] * 2
    assert len({c.event_id for c in changes}) == len(changes) == 3
    assert [c.event_id for c in changes] == [c.event_id for c in again]


def test_erasure_leaves_the_change_ids_only_and_follows_it(
    stores: Stores, writer: VectorWriter, feed: RecordChangeFeed
) -> None:
    tea = create(stores, "Drinks green tea")
    other = create(stores, "Has a dog named Milo")
    writer.add_vectors(
        SCOPE,
        [(tea.ref, vector(1, 0, 0, embedder=NEXT)), (other.ref, vector(0, 1, 0, embedder=NEXT))],
    )
    before = feed.last_sequence(SCOPE)

    stores.records.erase(SCOPE, tea.record_id)
    stores.records.erase_scope(SCOPE)

    changes = feed.scope_changes(SCOPE)
    erasures = feed.scope_changes(SCOPE, before)
    assert {c.kind for c in erasures} == {"erased"}
    assert {c.record_id for c in erasures} == {tea.record_id, other.record_id}
    assert sorted(_seen(changes)[:2]) == sorted(
        [(tea.record_id, 1, "created"), (other.record_id, 1, "created")]
    )
    assert sorted(_seen(changes)[2:4]) == sorted(
        [(tea.record_id, 1, "re-embedded"), (other.record_id, 1, "re-embedded")]
    )
    for change in changes:
        dumped = change.model_dump_json()
        assert "tea" not in dumped
        assert "Milo" not in dumped
    # Nothing left to re-embed, so no change either.
    assert writer.add_vectors(SCOPE, [(tea.ref, vector(0, 0, 1, embedder=NEXT))]) == 0
    assert feed.scope_changes(SCOPE, feed.last_sequence(SCOPE)) == ()
