"""Supersede keeps the old row and links both ways; retract is soft; neither is listed as live."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cairn.changes import Change, FoldIn, RecordPatch, Retract, Revise, Supersede
from cairn.errors import InvalidChangeError
from cairn.models import Edge, EdgeKind, RecordVersion, Status
from cairn.ports import Stores
from tests.conformance.samples import SCOPE, create, listed_ids, new_fact


def supersede(stores: Stores, old: RecordVersion, content: str) -> RecordVersion:
    replacement = new_fact(content)
    stores.records.apply(SCOPE, [Supersede(record_id=old.record_id, replacement=replacement)])
    return stores.records.get(SCOPE, replacement.record_id)


def test_supersede_keeps_the_old_row_and_links_both_ways(stores: Stores) -> None:
    old = create(stores, "Works remotely")
    replacement = new_fact("Works from the Berlin office")

    written = stores.records.apply(
        SCOPE, [Supersede(record_id=old.record_id, replacement=replacement)]
    )

    old_head = stores.records.get(SCOPE, old.record_id)
    new = stores.records.get(SCOPE, replacement.record_id)
    assert written == (old_head, new)
    assert old_head.version == 2
    assert old_head.status is Status.SUPERSEDED
    assert old_head.superseded_by == new.record_id
    assert old_head.content == "Works remotely"
    assert new.version == 1
    assert new.status is Status.ACTIVE
    assert new.supersedes == old.record_id
    assert Edge(kind=EdgeKind.SUPERSEDES, target=old.record_id) in new.edges
    assert stores.records.history(SCOPE, old.record_id) == (old, old_head)


def test_retract_is_soft_and_keeps_content_readable(stores: Stores) -> None:
    created = create(stores, "Is vegetarian")

    (retracted,) = stores.records.apply(
        SCOPE, [Retract(record_id=created.record_id, reason="user said it was a joke")]
    )

    head = stores.records.get(SCOPE, created.record_id)
    assert head == retracted
    assert head.version == 2
    assert head.status is Status.RETRACTED
    assert head.content == "Is vegetarian"
    assert head.metadata["retract_reason"] == "user said it was a joke"
    assert stores.records.history(SCOPE, created.record_id) == (created, head)


def test_superseded_and_retracted_records_are_listed_only_when_asked(stores: Stores) -> None:
    old = create(stores, "Has a Honda")
    new = supersede(stores, old, "Has a Toyota")
    gone = create(stores, "Is learning Dutch")
    stores.records.apply(SCOPE, [Retract(record_id=gone.record_id)])
    kept = create(stores, "Has two kids")

    assert set(listed_ids(stores)) == {new.record_id, kept.record_id}
    everything = stores.records.list_records(SCOPE, include_inactive=True).items
    statuses = {v.record_id: v.status for v in everything}
    assert statuses == {
        old.record_id: Status.SUPERSEDED,
        new.record_id: Status.ACTIVE,
        gone.record_id: Status.RETRACTED,
        kept.record_id: Status.ACTIVE,
    }


@pytest.mark.parametrize(
    "change_for",
    [
        lambda rid: Revise(record_id=rid, patch=RecordPatch(content="edited")),
        lambda rid: FoldIn(record_id=rid),
        lambda rid: Retract(record_id=rid),
        lambda rid: Supersede(record_id=rid, replacement=new_fact("replacement")),
    ],
    ids=["revise", "fold_in", "retract", "supersede"],
)
@pytest.mark.parametrize("inactive_status", [Status.RETRACTED, Status.SUPERSEDED])
def test_a_change_to_an_inactive_record_is_refused_and_writes_nothing(
    stores: Stores, change_for: Callable[[str], Change], inactive_status: Status
) -> None:
    created = create(stores, "Collects stamps")
    if inactive_status is Status.RETRACTED:
        stores.records.apply(SCOPE, [Retract(record_id=created.record_id)])
    else:
        supersede(stores, created, "Collects coins")
    before = stores.records.history(SCOPE, created.record_id)
    listed_before = stores.records.list_records(SCOPE, include_inactive=True)
    change = change_for(created.record_id)

    with pytest.raises(InvalidChangeError):
        stores.records.apply(SCOPE, [change])

    assert stores.records.history(SCOPE, created.record_id) == before
    assert stores.records.list_records(SCOPE, include_inactive=True) == listed_before
