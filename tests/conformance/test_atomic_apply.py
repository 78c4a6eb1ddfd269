"""``apply`` is all or nothing, checked against the snapshot versions the planner saw."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cairn.changes import (
    MAX_CHANGES_PER_APPLY,
    Change,
    Create,
    FoldIn,
    RecordPatch,
    Retract,
    Revise,
    Supersede,
)
from cairn.errors import (
    InvalidChangeError,
    InvalidInputError,
    RecordNotFoundError,
    SnapshotConflictError,
)
from cairn.models import Page, RecordVersion
from cairn.ports import Stores
from tests.conformance.samples import SCOPE, create, new_fact

Trio = tuple[RecordVersion, RecordVersion, RecordVersion]


def three_records(stores: Stores) -> Trio:
    return (
        create(stores, "Likes sushi"),
        create(stores, "Hates olives"),
        create(stores, "Owns a kayak"),
    )


def state(stores: Stores, records: Trio) -> tuple[object, ...]:
    """Everything a failed apply must leave as it was."""
    histories = tuple(stores.records.history(SCOPE, r.record_id) for r in records)
    listed: Page[RecordVersion] = stores.records.list_records(SCOPE, include_inactive=True)
    return (*histories, listed)


def valid_batch(records: Trio) -> list[Change]:
    first, second, third = records
    return [
        Create(record=new_fact("Plays chess")),
        Revise(record_id=first.record_id, patch=RecordPatch(content="Loves sushi")),
        FoldIn(record_id=second.record_id),
        Supersede(record_id=third.record_id, replacement=new_fact("Owns a canoe")),
    ]


def test_a_batch_with_one_unknown_target_writes_nothing(stores: Stores) -> None:
    records = three_records(stores)
    before = state(stores, records)
    missing = new_fact("never written").record_id

    with pytest.raises(RecordNotFoundError):
        stores.records.apply(SCOPE, [*valid_batch(records), Retract(record_id=missing)])

    assert state(stores, records) == before


def test_a_batch_with_one_change_to_a_retracted_record_writes_nothing(stores: Stores) -> None:
    records = three_records(stores)
    gone = create(stores, "Was a smoker")
    stores.records.apply(SCOPE, [Retract(record_id=gone.record_id)])
    before = state(stores, records)

    with pytest.raises(InvalidChangeError):
        stores.records.apply(
            SCOPE,
            [*valid_batch(records), Revise(record_id=gone.record_id, patch=RecordPatch(body="x"))],
        )

    assert state(stores, records) == before
    assert len(stores.records.history(SCOPE, gone.record_id)) == 2


def test_a_stale_snapshot_conflicts_and_writes_nothing(stores: Stores) -> None:
    records = three_records(stores)
    first = records[0]
    stores.records.apply(SCOPE, [FoldIn(record_id=first.record_id)])  # head moves to v2
    before = state(stores, records)
    snapshot = {r.record_id: 1 for r in records}

    with pytest.raises(SnapshotConflictError) as raised:
        stores.records.apply(SCOPE, valid_batch(records), snapshot=snapshot)

    assert [moved[0] for moved in raised.value.moved] == [first.record_id]
    assert state(stores, records) == before


def test_a_snapshot_of_a_record_outside_the_scope_conflicts(stores: Stores) -> None:
    records = three_records(stores)
    before = state(stores, records)
    snapshot = {records[0].record_id: 1, new_fact("elsewhere").record_id: 1}

    with pytest.raises(SnapshotConflictError):
        stores.records.apply(SCOPE, valid_batch(records), snapshot=snapshot)

    assert state(stores, records) == before


def test_a_current_snapshot_applies_the_whole_batch(stores: Stores) -> None:
    records = three_records(stores)
    first, second, third = records
    batch = valid_batch(records)
    snapshot = {r.record_id: r.version for r in records}

    written = stores.records.apply(SCOPE, batch, snapshot=snapshot)

    created = batch[0]
    replacement = batch[3]
    assert isinstance(created, Create)
    assert isinstance(replacement, Supersede)
    assert [(v.record_id, v.version) for v in written] == [
        (created.record.record_id, 1),
        (first.record_id, 2),
        (second.record_id, 2),
        (third.record_id, 2),
        (replacement.replacement.record_id, 1),
    ]
    for version in written:
        assert stores.records.get(SCOPE, version.record_id) == version
    assert stores.records.get(SCOPE, first.record_id).content == "Loves sushi"


def test_more_than_the_atomic_limit_of_changes_is_refused(stores: Stores) -> None:
    batch: list[Change] = [
        Create(record=new_fact(f"Fact number {i}")) for i in range(MAX_CHANGES_PER_APPLY + 1)
    ]

    with pytest.raises(InvalidInputError):
        stores.records.apply(SCOPE, batch)

    assert stores.records.list_records(SCOPE, include_inactive=True).items == ()


def test_the_atomic_limit_itself_is_accepted(stores: Stores) -> None:
    batch: list[Change] = [
        Create(record=new_fact(f"Fact number {i}")) for i in range(MAX_CHANGES_PER_APPLY)
    ]

    assert len(stores.records.apply(SCOPE, batch)) == MAX_CHANGES_PER_APPLY
    assert len(stores.records.list_records(SCOPE).items) == MAX_CHANGES_PER_APPLY


TwoChanges = Callable[[str], list[Change]]


@pytest.mark.parametrize(
    "changes_for",
    [
        lambda rid: [Revise(record_id=rid, patch=RecordPatch(body="a")), Retract(record_id=rid)],
        lambda rid: [FoldIn(record_id=rid), FoldIn(record_id=rid)],
        lambda rid: [
            Supersede(record_id=rid, replacement=new_fact("b")),
            Revise(record_id=rid, patch=RecordPatch(body="c")),
        ],
    ],
    ids=["revise+retract", "fold_in twice", "supersede+revise"],
)
def test_one_record_named_by_two_changes_is_refused(
    stores: Stores, changes_for: TwoChanges
) -> None:
    records = three_records(stores)
    before = state(stores, records)

    with pytest.raises(InvalidChangeError):
        stores.records.apply(
            SCOPE, [Create(record=new_fact("Extra")), *changes_for(records[0].record_id)]
        )

    assert state(stores, records) == before
