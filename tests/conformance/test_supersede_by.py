"""``SupersedeBy``: a live record retired in favour of another live record, kept and linked."""

from __future__ import annotations

import pytest

from cairn.changes import Create, RecordPatch, Retract, Revise, SupersedeBy
from cairn.errors import InvalidChangeError, RecordNotFoundError, SnapshotConflictError
from cairn.models import Status
from cairn.ports import Stores
from tests.conformance.samples import OTHER_ACTOR, SCOPE, create, listed_ids, new_fact


def test_the_old_record_is_kept_superseded_and_linked_and_the_successor_is_untouched(
    stores: Stores,
) -> None:
    old = create(stores, "Prefers tea")
    new = create(stores, "Switched to coffee in March")

    (written,) = stores.records.apply(
        SCOPE,
        [
            SupersedeBy(
                record_id=old.record_id,
                successor_id=new.record_id,
                reason="a later statement reverses it",
                evidence=("ev-1", "ev-2"),
            )
        ],
        snapshot={old.record_id: old.version, new.record_id: new.version},
    )

    assert written.status is Status.SUPERSEDED
    assert written.superseded_by == new.record_id
    assert written.content == old.content
    assert written.metadata["supersede_reason"] == "a later statement reverses it"
    assert written.metadata["supersede_evidence"] == "ev-1 ev-2"
    assert stores.records.history(SCOPE, old.record_id)[0] == old
    assert stores.records.get(SCOPE, new.record_id) == new
    assert listed_ids(stores) == [new.record_id]


def test_several_records_can_be_merged_into_one_that_is_revised_in_the_same_batch(
    stores: Stores,
) -> None:
    keeper, first, second = (create(stores, f"Likes sushi {i}") for i in range(3))

    stores.records.apply(
        SCOPE,
        [
            Revise(record_id=keeper.record_id, patch=RecordPatch(content="Loves sushi")),
            SupersedeBy(record_id=first.record_id, successor_id=keeper.record_id),
            SupersedeBy(record_id=second.record_id, successor_id=keeper.record_id),
        ],
    )

    assert listed_ids(stores) == [keeper.record_id]
    assert stores.records.get(SCOPE, keeper.record_id).content == "Loves sushi"


def test_the_successor_may_be_created_by_the_same_batch(stores: Stores) -> None:
    old = create(stores, "Lives in Lisbon")
    successor = new_fact("Lives in Porto")

    stores.records.apply(
        SCOPE,
        [
            SupersedeBy(record_id=old.record_id, successor_id=successor.record_id),
            Create(record=successor),
        ],
    )

    assert listed_ids(stores) == [successor.record_id]
    assert stores.records.get(SCOPE, old.record_id).superseded_by == successor.record_id


def test_a_successor_that_is_not_live_unknown_or_retired_by_the_batch_is_refused(
    stores: Stores,
) -> None:
    old = create(stores, "Prefers tea")
    gone = create(stores, "Prefers coffee")
    stores.records.apply(SCOPE, [Retract(record_id=gone.record_id)])
    alive = create(stores, "Prefers water")
    theirs = create(stores, "Prefers juice", scope=OTHER_ACTOR)
    before = listed_ids(stores, include_inactive=True)

    with pytest.raises(InvalidChangeError):
        stores.records.apply(
            SCOPE, [SupersedeBy(record_id=old.record_id, successor_id=gone.record_id)]
        )
    with pytest.raises(RecordNotFoundError):
        stores.records.apply(
            SCOPE, [SupersedeBy(record_id=old.record_id, successor_id=theirs.record_id)]
        )
    with pytest.raises(InvalidChangeError):
        stores.records.apply(
            SCOPE,
            [
                SupersedeBy(record_id=old.record_id, successor_id=alive.record_id),
                Retract(record_id=alive.record_id),
            ],
        )

    assert listed_ids(stores, include_inactive=True) == before
    assert stores.records.get(SCOPE, old.record_id) == old


def test_a_successor_that_moved_after_the_plan_fails_the_snapshot(stores: Stores) -> None:
    old = create(stores, "Prefers tea")
    new = create(stores, "Prefers coffee")
    stores.records.apply(
        SCOPE, [Revise(record_id=new.record_id, patch=RecordPatch(content="Prefers espresso"))]
    )

    with pytest.raises(SnapshotConflictError):
        stores.records.apply(
            SCOPE,
            [SupersedeBy(record_id=old.record_id, successor_id=new.record_id)],
            snapshot={old.record_id: old.version, new.record_id: new.version},
        )

    assert stores.records.get(SCOPE, old.record_id) == old
