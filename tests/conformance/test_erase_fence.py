"""Erase and retract win over every write planned before them (issue 17, class 7).

A planner reads ``RecordStore.erasures(scope)`` before it reads what its plan is built from and
passes it to ``apply(..., erasures=...)``. An erase, an erase_scope or a retract that committed
in the scope since then moves the count, and the apply raises ``ErasedMeanwhileError`` and
writes nothing, checked in the apply's own transaction. The record directory's placements obey
the same fence (``RecordDirectory.place(..., erasures=...)``).
"""

from __future__ import annotations

import pytest

from cairn.changes import Create, FoldIn, Retract
from cairn.erasure_fence import place_fenced
from cairn.errors import ConflictError, ErasedMeanwhileError, InvalidInputError, RecordNotFoundError
from cairn.ports import RecordPlacement, Stores
from tests.conformance.samples import OTHER_ACTOR, SCOPE, create, listed_ids, new_fact

SECRET = "The user's passport number is X1234567"  # noqa: S105 - a test fact


def test_a_fresh_scope_has_no_erasures_and_a_plain_write_moves_nothing(stores: Stores) -> None:
    assert stores.records.erasures(SCOPE) == 0
    create(stores, "The user likes tea")
    stores.records.apply(SCOPE, [FoldIn(record_id=listed_ids(stores)[0])])
    assert stores.records.erasures(SCOPE) == 0


def test_erase_erase_scope_and_retract_each_move_the_count(stores: Stores) -> None:
    first = create(stores, "The user likes tea")
    second = create(stores, "The user likes jazz")
    counts = [stores.records.erasures(SCOPE)]
    stores.records.apply(SCOPE, [Retract(record_id=first.record_id)])
    counts.append(stores.records.erasures(SCOPE))
    stores.records.erase(SCOPE, second.record_id)
    counts.append(stores.records.erasures(SCOPE))
    stores.records.erase_scope(SCOPE)
    counts.append(stores.records.erasures(SCOPE))
    assert counts == sorted(set(counts))  # strictly increasing
    assert stores.records.erasures(OTHER_ACTOR) == 0  # per scope


def test_an_apply_planned_before_an_erase_scope_writes_nothing(stores: Stores) -> None:
    create(stores, "The user likes tea")
    read = stores.records.erasures(SCOPE)
    stores.records.erase_scope(SCOPE)  # lands between the planner's read and its apply

    with pytest.raises(ErasedMeanwhileError) as raised:
        stores.records.apply(SCOPE, [Create(record=new_fact(SECRET))], erasures=read)

    assert isinstance(raised.value, ConflictError)
    assert raised.value.retryable
    assert listed_ids(stores, include_inactive=True) == []
    again = stores.records.erasures(SCOPE)
    (written,) = stores.records.apply(SCOPE, [Create(record=new_fact(SECRET))], erasures=again)
    assert listed_ids(stores) == [written.record_id]  # a plan read after the erase goes in


def test_an_erase_of_one_record_fences_even_a_write_that_touches_other_records(
    stores: Stores,
) -> None:
    erased = create(stores, SECRET)
    kept = create(stores, "The user likes tea")
    read = stores.records.erasures(SCOPE)
    stores.records.erase(SCOPE, erased.record_id)

    with pytest.raises(ErasedMeanwhileError):
        stores.records.apply(
            SCOPE,
            [FoldIn(record_id=kept.record_id), Create(record=new_fact(SECRET))],
            snapshot={kept.record_id: kept.version},
            erasures=read,
        )

    assert listed_ids(stores) == [kept.record_id]
    assert stores.records.get(SCOPE, kept.record_id).version == kept.version


def test_a_retract_fences_a_plan_read_before_it(stores: Stores) -> None:
    forgotten = create(stores, SECRET)
    read = stores.records.erasures(SCOPE)
    stores.records.apply(SCOPE, [Retract(record_id=forgotten.record_id)])

    with pytest.raises(ErasedMeanwhileError):
        stores.records.apply(SCOPE, [Create(record=new_fact(SECRET))], erasures=read)

    assert listed_ids(stores) == []


def test_an_erase_in_another_scope_fences_nothing_here(stores: Stores) -> None:
    other = create(stores, SECRET, scope=OTHER_ACTOR)
    read = stores.records.erasures(SCOPE)
    stores.records.erase(OTHER_ACTOR, other.record_id)

    (written,) = stores.records.apply(SCOPE, [Create(record=new_fact("tea"))], erasures=read)

    assert listed_ids(stores) == [written.record_id]


def test_a_retracting_apply_checked_against_a_stale_count_writes_nothing(stores: Stores) -> None:
    one = create(stores, "The user likes tea")
    two = create(stores, "The user likes jazz")
    read = stores.records.erasures(SCOPE)
    stores.records.erase(SCOPE, two.record_id)

    with pytest.raises(ErasedMeanwhileError):
        stores.records.apply(SCOPE, [Retract(record_id=one.record_id)], erasures=read)

    assert stores.records.get(SCOPE, one.record_id).status.value == "active"


ID_PLACEDBEFORE, ID_HERE, ID_A, ID_B = (f"mem-{n:036d}" for n in range(1, 5))


def _placement(record_id: str, actor: str = SCOPE.actor_id) -> RecordPlacement:
    return RecordPlacement(record_id=record_id, actor_id=actor, namespace=f"/facts/{actor}/")


def test_a_placement_fenced_by_a_stale_count_places_nothing(stores: Stores) -> None:
    directory = stores.directory
    if directory is None:
        pytest.skip("this backend keeps no record directory")
    record = create(stores, SECRET)
    read = stores.records.erasures(SCOPE)
    directory.place(SCOPE.memory_id, [_placement(ID_PLACEDBEFORE)], erasures=read)
    stores.records.erase_scope(SCOPE)  # lands between the planner's apply and its placement

    with pytest.raises(ErasedMeanwhileError):
        directory.place(SCOPE.memory_id, [_placement(record.record_id)], erasures=read)

    with pytest.raises(RecordNotFoundError):
        directory.locate(SCOPE.memory_id, record.record_id)
    assert directory.locate(SCOPE.memory_id, ID_PLACEDBEFORE).actor_id == SCOPE.actor_id
    fresh = stores.records.erasures(SCOPE)
    directory.place(SCOPE.memory_id, [_placement(record.record_id)], erasures=fresh)
    assert directory.locate(SCOPE.memory_id, record.record_id).actor_id == SCOPE.actor_id


def test_an_erasure_in_another_scope_fences_no_placement_here(stores: Stores) -> None:
    directory = stores.directory
    if directory is None:
        pytest.skip("this backend keeps no record directory")
    read = stores.records.erasures(SCOPE)
    create(stores, "The other actor likes jazz", scope=OTHER_ACTOR)
    stores.records.erase_scope(OTHER_ACTOR)
    directory.place(SCOPE.memory_id, [_placement(ID_HERE)], erasures=read)
    assert directory.locate(SCOPE.memory_id, ID_HERE).actor_id == SCOPE.actor_id


def test_fenced_placements_of_several_actors_are_refused(stores: Stores) -> None:
    directory = stores.directory
    if directory is None:
        pytest.skip("this backend keeps no record directory")
    both = [_placement(ID_A), _placement(ID_B, OTHER_ACTOR.actor_id)]
    with pytest.raises(InvalidInputError, match="one actor"):
        directory.place(SCOPE.memory_id, both, erasures=0)
    with pytest.raises(RecordNotFoundError):
        directory.locate(SCOPE.memory_id, ID_A)


def test_place_fenced_after_an_erasure_places_exactly_the_records_that_survived_it(
    stores: Stores,
) -> None:
    if stores.directory is None:
        pytest.skip("this backend keeps no record directory")
    read = stores.records.erasures(SCOPE)
    kept, erased = create(stores, "The user likes tea"), create(stores, SECRET)
    stores.records.erase(SCOPE, erased.record_id)  # after the plan's read, before its placement

    place_fenced(stores, SCOPE, [kept, erased], read)

    assert stores.directory.locate(SCOPE.memory_id, kept.record_id).actor_id == SCOPE.actor_id
    with pytest.raises(RecordNotFoundError):
        stores.directory.locate(SCOPE.memory_id, erased.record_id)
