"""Vectors belong to one exact version and one embedder identity; they are never compared across."""

from __future__ import annotations

import numpy as np
import pytest

from cairn.changes import FoldIn, RecordPatch, Revise
from cairn.models import EmbedderId
from cairn.ports import Stores
from tests.conformance.samples import EMBEDDER, SCOPE, create, vector

VALUES = (0.125, -0.5, 0.75, 0.3333333)


def test_a_vector_comes_back_for_its_version_and_embedder(stores: Stores) -> None:
    created = create(stores, "Likes mountains", embedding=vector(*VALUES))

    found = stores.records.vectors(SCOPE, [created.ref], EMBEDDER)

    assert created.embedding == EMBEDDER
    assert list(found) == [created.ref]
    assert found[created.ref].dtype == np.float32
    assert found[created.ref].shape == (EMBEDDER.dims,)
    np.testing.assert_allclose(found[created.ref], VALUES, rtol=1e-6)


def test_vectors_of_many_versions_come_back_keyed_by_ref(stores: Stores) -> None:
    first = create(stores, "Likes rivers", embedding=vector(1, 0, 0, 0))
    second = create(stores, "Likes lakes", embedding=vector(0, 1, 0, 0))
    bare = create(stores, "Likes deserts")

    found = stores.records.vectors(SCOPE, [first.ref, second.ref, bare.ref], EMBEDDER)

    assert set(found) == {first.ref, second.ref}
    np.testing.assert_allclose(found[first.ref], (1, 0, 0, 0))
    np.testing.assert_allclose(found[second.ref], (0, 1, 0, 0))


@pytest.mark.parametrize(
    "other",
    [
        EmbedderId(model_id="another-embedder", dims=EMBEDDER.dims),
        EmbedderId(model_id=EMBEDDER.model_id, dims=EMBEDDER.dims * 2),
    ],
    ids=["other-model", "other-dims"],
)
def test_a_vector_is_never_returned_for_another_embedder(stores: Stores, other: EmbedderId) -> None:
    created = create(stores, "Likes forests", embedding=vector(*VALUES))

    assert stores.records.vectors(SCOPE, [created.ref], other) == {}


def test_a_content_revision_without_a_vector_drops_the_embedding(stores: Stores) -> None:
    created = create(stores, "Commutes by bike", embedding=vector(*VALUES))

    (revised,) = stores.records.apply(
        SCOPE, [Revise(record_id=created.record_id, patch=RecordPatch(content="Commutes by train"))]
    )

    assert revised.embedding is None
    assert stores.records.get(SCOPE, created.record_id).embedding is None
    assert stores.records.vectors(SCOPE, [revised.ref], EMBEDDER) == {}


def test_a_content_revision_with_a_vector_stores_the_new_one(stores: Stores) -> None:
    created = create(stores, "Commutes by bike", embedding=vector(1, 0, 0, 0))

    (revised,) = stores.records.apply(
        SCOPE,
        [
            Revise(
                record_id=created.record_id,
                patch=RecordPatch(content="Commutes by train"),
                vector=vector(0, 0, 0, 1),
            )
        ],
    )

    found = stores.records.vectors(SCOPE, [created.ref, revised.ref], EMBEDDER)
    assert revised.embedding == EMBEDDER
    np.testing.assert_allclose(found[revised.ref], (0, 0, 0, 1))


def test_a_revision_that_keeps_the_content_keeps_the_vector(stores: Stores) -> None:
    created = create(stores, "Commutes by bike", embedding=vector(*VALUES))

    (revised,) = stores.records.apply(
        SCOPE, [Revise(record_id=created.record_id, patch=RecordPatch(importance=0.9))]
    )

    found = stores.records.vectors(SCOPE, [revised.ref], EMBEDDER)
    assert revised.embedding == EMBEDDER
    np.testing.assert_allclose(found[revised.ref], VALUES, rtol=1e-6)


def test_a_fold_in_keeps_the_vector_for_the_new_head(stores: Stores) -> None:
    created = create(stores, "Commutes by bike", embedding=vector(*VALUES))

    (folded,) = stores.records.apply(SCOPE, [FoldIn(record_id=created.record_id)])

    found = stores.records.vectors(SCOPE, [folded.ref], EMBEDDER)
    assert folded.embedding == EMBEDDER
    np.testing.assert_allclose(found[folded.ref], VALUES, rtol=1e-6)


def test_an_unknown_version_has_no_vector(stores: Stores) -> None:
    created = create(stores, "Commutes by bike", embedding=vector(*VALUES))
    later = created.ref.model_copy(update={"version": 5})

    assert stores.records.vectors(SCOPE, [later], EMBEDDER) == {}
