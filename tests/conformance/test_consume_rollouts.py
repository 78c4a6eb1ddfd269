"""``apply(..., consume_rollouts=...)``: rollouts are consumed in the same transaction as the
changes they produced, or neither happens (DESIGN §4, atomic apply)."""

from __future__ import annotations

import pytest

from cairn.changes import (
    MAX_CHANGES_PER_APPLY,
    MAX_CONSUMED_ROLLOUTS,
    MAX_SNAPSHOT_RECORDS,
    Change,
    Create,
    RecordPatch,
    Retract,
    Revise,
    SupersedeBy,
)
from cairn.clock import FixedClock
from cairn.errors import (
    ConflictError,
    InvalidInputError,
    RolloutNotFoundError,
    SnapshotConflictError,
)
from cairn.ports import RolloutStore, Stores
from cairn.rollout.index import RolloutState
from tests.conformance.evidence_samples import staged_evidence, staged_extraction
from tests.conformance.rollout_samples import append_turns, policy, require_rollouts
from tests.conformance.samples import OTHER_ACTOR, SCOPE, create, listed_ids, new_fact


def _pending_ids(rollouts: RolloutStore) -> list[str]:
    return [r.rollout_id for r in rollouts.list_pending(SCOPE)]


def test_changes_and_the_rollouts_they_came_from_commit_together(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    old = create(stores, "Prefers tea")
    evidence = staged_evidence(rollouts, SCOPE, clock, 2)
    ids = [r.rollout_id for r in evidence]

    written = stores.records.apply(
        SCOPE,
        [Create(record=new_fact("Switched to coffee in March")), Retract(record_id=old.record_id)],
        snapshot={old.record_id: old.version},
        consume_rollouts=ids,
    )

    assert len(written) == 2
    assert stores.records.get(SCOPE, old.record_id).status.value == "retracted"
    assert [rollouts.get(SCOPE, rid).state for rid in ids] == [RolloutState.CONSUMED] * 2
    assert _pending_ids(rollouts) == []


def test_a_stale_snapshot_applies_nothing_and_leaves_the_rollouts_pending(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    seen = create(stores, "Prefers tea")
    evidence = staged_evidence(rollouts, SCOPE, clock, 2)
    # A concurrent writer moves the record after the planner read it.
    stores.records.apply(
        SCOPE, [Revise(record_id=seen.record_id, patch=RecordPatch(content="Loves green tea"))]
    )
    before = listed_ids(stores, include_inactive=True)

    with pytest.raises(SnapshotConflictError):
        stores.records.apply(
            SCOPE,
            [Create(record=new_fact("Drinks coffee")), Retract(record_id=seen.record_id)],
            snapshot={seen.record_id: seen.version},
            consume_rollouts=[r.rollout_id for r in evidence],
        )

    assert listed_ids(stores, include_inactive=True) == before
    assert stores.records.get(SCOPE, seen.record_id).version == seen.version + 1
    assert _pending_ids(rollouts) == [r.rollout_id for r in evidence]
    assert [rollouts.get(SCOPE, r.rollout_id).state for r in evidence] == [RolloutState.STAGED] * 2


def test_consuming_a_consumed_rollout_again_is_refused_and_applies_nothing(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    (evidence,) = staged_evidence(rollouts, SCOPE, clock)
    stores.records.apply(
        SCOPE, [Create(record=new_fact("Owns a kayak"))], consume_rollouts=[evidence.rollout_id]
    )
    before = listed_ids(stores)

    with pytest.raises(ConflictError) as refused:
        stores.records.apply(
            SCOPE,
            [Create(record=new_fact("Owns a kayak, again"))],
            consume_rollouts=[evidence.rollout_id],
        )

    assert not isinstance(refused.value, SnapshotConflictError)
    assert listed_ids(stores) == before
    assert rollouts.get(SCOPE, evidence.rollout_id).state is RolloutState.CONSUMED


def test_a_rollout_of_another_scope_is_not_found_and_nothing_is_applied(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    (theirs,) = staged_evidence(rollouts, OTHER_ACTOR, clock)

    with pytest.raises(RolloutNotFoundError):
        stores.records.apply(
            SCOPE, [Create(record=new_fact("Plays chess"))], consume_rollouts=[theirs.rollout_id]
        )

    assert listed_ids(stores) == []
    assert rollouts.get(OTHER_ACTOR, theirs.rollout_id).state is RolloutState.STAGED


def test_a_rollout_never_staged_cannot_be_consumed(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claim = append_turns(rollouts, SCOPE, 1, clock=clock, policy=policy(message_count=1))[0].claim
    assert claim is not None

    with pytest.raises(ConflictError):
        stores.records.apply(
            SCOPE, [Create(record=new_fact("Plays chess"))], consume_rollouts=[claim.rollout_id]
        )

    assert listed_ids(stores) == []
    assert rollouts.get(SCOPE, claim.rollout_id).state is RolloutState.CLAIMED


def test_too_many_or_repeated_rollouts_are_refused_before_anything_is_read(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    evidence = staged_evidence(rollouts, SCOPE, clock, MAX_CONSUMED_ROLLOUTS + 1)
    ids = [r.rollout_id for r in evidence]

    with pytest.raises(InvalidInputError):
        stores.records.apply(SCOPE, [], consume_rollouts=ids)
    with pytest.raises(InvalidInputError):
        stores.records.apply(SCOPE, [], consume_rollouts=[ids[0], ids[0]])

    assert _pending_ids(rollouts) == ids


def test_rollouts_can_be_consumed_with_no_changes_and_of_either_kind(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    extraction = staged_extraction(rollouts, SCOPE, clock)
    (evidence,) = staged_evidence(rollouts, SCOPE, clock)
    create(stores, "Drinks green tea")
    generation = stores.generations.generation(SCOPE) if stores.generations else None
    last = stores.changes.last_sequence(SCOPE) if stores.changes else None

    written = stores.records.apply(
        SCOPE, [], consume_rollouts=[extraction.rollout_id, evidence.rollout_id]
    )

    assert written == ()
    # No record written: no change in the feed, and the record generation stays, so a recall
    # index that catches up from the feed has nothing to rebuild for.
    assert (stores.generations.generation(SCOPE) if stores.generations else None) == generation
    assert (stores.changes.last_sequence(SCOPE) if stores.changes else None) == last
    assert _pending_ids(rollouts) == []
    consumed = rollouts.get(SCOPE, evidence.rollout_id)
    assert consumed.state is RolloutState.CONSUMED
    assert consumed.updated_at == clock.now()


def _largest_pass(stores: Stores, rollout_ids: list[str]) -> tuple[list[Change], dict[str, int]]:
    """A consolidation pass at every bound: 32 snapshot records, 16 changes (eight merged
    away, four retracted, four added), and the rollouts."""
    records = [create(stores, f"fact number {i}") for i in range(MAX_SNAPSHOT_RECORDS)]
    keeper = records[-1].record_id
    changes: list[Change] = [
        SupersedeBy(record_id=r.record_id, successor_id=keeper, evidence=tuple(rollout_ids))
        for r in records[:8]
    ]
    changes += [Retract(record_id=r.record_id, reason="no longer true") for r in records[8:12]]
    changes += [Create(record=new_fact(f"new fact {i}")) for i in range(4)]
    assert len(changes) == MAX_CHANGES_PER_APPLY
    return changes, {r.record_id: r.version for r in records}


def test_a_pass_at_every_bound_commits_in_one_apply(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    ids = [r.rollout_id for r in staged_evidence(rollouts, SCOPE, clock, MAX_CONSUMED_ROLLOUTS)]
    changes, snapshot = _largest_pass(stores, ids)

    written = stores.records.apply(SCOPE, changes, snapshot=snapshot, consume_rollouts=ids)

    assert len(written) == MAX_CHANGES_PER_APPLY
    assert len(listed_ids(stores)) == MAX_SNAPSHOT_RECORDS - 12 + 4
    assert _pending_ids(rollouts) == []
