"""Re-embedding (``VectorWriter.add_vectors``): more vectors for versions a store holds, under
another embedder, without a new version and without touching content, trust or history.

Every backend has the capability (DynamoDB keeps the second embedder's vector on the head item).
"""

from __future__ import annotations

import numpy as np
import pytest

from cairn.changes import RecordPatch, Retract, Revise
from cairn.models import EmbedderId, RecordVersion
from cairn.ports import IndexRowReader, Stores, VectorWriter
from tests.conformance.samples import EMBEDDER, OTHER_ACTOR, SCOPE, create, vector

NEXT = EmbedderId(model_id="next-embedder", dims=3)


@pytest.fixture
def writer(stores: Stores) -> VectorWriter:
    records = stores.records
    assert isinstance(records, VectorWriter), f"{type(records).__name__} cannot re-embed"
    return records


def _generation(stores: Stores) -> int:
    assert stores.generations is not None
    return stores.generations.generation(SCOPE)


def _as_stored(stores: Stores, version: RecordVersion) -> str:
    return stores.records.get_version(SCOPE, version.record_id, version.version).model_dump_json()


def test_a_vector_of_another_embedder_is_found_beside_the_first(
    stores: Stores, writer: VectorWriter
) -> None:
    created = create(stores, "Drinks green tea", embedding=vector(1, 0, 0, 0))
    before = _as_stored(stores, created)

    stored = writer.add_vectors(SCOPE, [(created.ref, vector(0, 1, 0, embedder=NEXT))])

    assert stored == 1
    found = stores.records.vectors(SCOPE, [created.ref], NEXT)
    np.testing.assert_allclose(found[created.ref], (0, 1, 0))
    first = stores.records.vectors(SCOPE, [created.ref], EMBEDDER)
    np.testing.assert_allclose(first[created.ref], (1, 0, 0, 0))
    # Derived data: the version, its trust, content and history are exactly as they were.
    assert _as_stored(stores, created) == before
    assert stores.records.history(SCOPE, created.record_id) == (created,)


def test_a_version_written_without_a_vector_can_be_given_one(
    stores: Stores, writer: VectorWriter
) -> None:
    bare = create(stores, "Works in Lisbon")

    assert writer.add_vectors(SCOPE, [(bare.ref, vector(0, 0, 1, embedder=NEXT))]) == 1

    assert set(stores.records.vectors(SCOPE, [bare.ref], NEXT)) == {bare.ref}
    assert stores.records.get(SCOPE, bare.record_id).embedding is None


def test_a_rerun_stores_nothing_twice_and_keeps_the_generation(
    stores: Stores, writer: VectorWriter
) -> None:
    created = create(stores, "Allergic to peanuts")
    writer.add_vectors(SCOPE, [(created.ref, vector(1, 0, 0, embedder=NEXT))])
    generation = _generation(stores)

    again = writer.add_vectors(SCOPE, [(created.ref, vector(0, 0, 1, embedder=NEXT))])

    assert again == 0
    assert _generation(stores) == generation
    found = stores.records.vectors(SCOPE, [created.ref], NEXT)
    np.testing.assert_allclose(found[created.ref], (1, 0, 0))  # the first one stays


def test_storing_moves_the_generation_so_a_recall_index_rebuilds(
    stores: Stores, writer: VectorWriter
) -> None:
    created = create(stores, "Runs on Sundays")
    generation = _generation(stores)

    writer.add_vectors(SCOPE, [(created.ref, vector(1, 0, 0, embedder=NEXT))])

    assert _generation(stores) != generation


def test_a_ref_that_is_not_a_live_head_is_skipped(stores: Stores, writer: VectorWriter) -> None:
    moved = create(stores, "Lives in Porto")
    (revised,) = stores.records.apply(
        SCOPE, [Revise(record_id=moved.record_id, patch=RecordPatch(content="Lives in Braga"))]
    )
    gone = create(stores, "Owns a bike")
    stores.records.apply(SCOPE, [Retract(record_id=gone.record_id, reason="sold it")])
    generation = _generation(stores)

    stored = writer.add_vectors(
        SCOPE,
        [
            (moved.ref, vector(1, 0, 0, embedder=NEXT)),  # superseded by ``revised``
            (gone.ref, vector(0, 1, 0, embedder=NEXT)),  # retracted
        ],
    )

    assert stored == 0
    assert _generation(stores) == generation
    assert stores.records.vectors(SCOPE, [moved.ref, revised.ref, gone.ref], NEXT) == {}


def test_vectors_stay_in_their_scope(stores: Stores, writer: VectorWriter) -> None:
    mine = create(stores, "Prefers window seats")

    assert writer.add_vectors(OTHER_ACTOR, [(mine.ref, vector(1, 0, 0, embedder=NEXT))]) == 0

    assert stores.records.vectors(SCOPE, [mine.ref], NEXT) == {}


def test_the_index_rows_carry_the_new_vector(stores: Stores, writer: VectorWriter) -> None:
    records = stores.records
    if not isinstance(records, IndexRowReader):
        pytest.skip(f"{type(records).__name__} hands the recall index no rows of its own")
    created = create(stores, "Speaks Portuguese", embedding=vector(1, 0, 0, 0))
    writer.add_vectors(SCOPE, [(created.ref, vector(0, 0, 1, embedder=NEXT))])

    (row,) = records.index_rows(SCOPE, NEXT)
    (first,) = records.index_rows(SCOPE, EMBEDDER)

    assert row.vector is not None
    np.testing.assert_allclose(row.vector, (0, 0, 1))
    assert first.vector is not None
    np.testing.assert_allclose(first.vector, (1, 0, 0, 0))


def test_erasing_the_record_destroys_every_embedders_vector(
    stores: Stores, writer: VectorWriter
) -> None:
    created = create(stores, "Was born in 1990", embedding=vector(1, 0, 0, 0))
    writer.add_vectors(SCOPE, [(created.ref, vector(0, 1, 0, embedder=NEXT))])

    stores.records.erase(SCOPE, created.record_id)

    assert stores.records.vectors(SCOPE, [created.ref], NEXT) == {}
    assert stores.records.vectors(SCOPE, [created.ref], EMBEDDER) == {}


def test_a_later_version_with_other_words_never_gets_the_old_words_vector(
    stores: Stores, writer: VectorWriter
) -> None:
    created = create(stores, "Commutes by bike")
    writer.add_vectors(SCOPE, [(created.ref, vector(1, 0, 0, embedder=NEXT))])

    (revised,) = stores.records.apply(
        SCOPE, [Revise(record_id=created.record_id, patch=RecordPatch(content="Commutes by car"))]
    )

    assert stores.records.vectors(SCOPE, [revised.ref], NEXT) == {}
    assert writer.add_vectors(SCOPE, [(revised.ref, vector(0, 1, 0, embedder=NEXT))]) == 1
    np.testing.assert_allclose(
        stores.records.vectors(SCOPE, [revised.ref], NEXT)[revised.ref], (0, 1, 0)
    )
