"""Evidence rollouts (what a completed run leaves for consolidation) share the rollout index:
stored staged, listed by kind, moved and erased like any other rollout."""

from __future__ import annotations

import pytest

from cairn.clock import FixedClock
from cairn.errors import InvalidInputError
from cairn.ports import Stores
from cairn.rollout.index import RolloutState
from tests.conformance.evidence_samples import evidence_rollout, staged_evidence, staged_extraction
from tests.conformance.rollout_samples import require_rollouts
from tests.conformance.samples import OTHER_ACTOR, SCOPE


def test_a_staged_evidence_rollout_is_stored_as_given(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    rollout = evidence_rollout(SCOPE, clock)

    stored = rollouts.add_staged(SCOPE, rollout)

    assert stored == rollout
    assert rollouts.get(SCOPE, rollout.rollout_id) == rollout
    assert stored.kind == "evidence"


def test_staging_the_same_evidence_again_keeps_what_was_stored(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    first = rollouts.add_staged(SCOPE, evidence_rollout(SCOPE, clock))
    announced = rollouts.mark(SCOPE, first.rollout_id, RolloutState.ANNOUNCED, now=clock.now())
    clock.advance(seconds=5)

    restaged = rollouts.add_staged(
        SCOPE, first.model_copy(update={"updated_at": clock.now(), "staging_key": "other"})
    )

    assert restaged == announced
    assert rollouts.get(SCOPE, first.rollout_id) == announced


def test_pending_rollouts_are_listed_by_kind_oldest_first(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    extraction = staged_extraction(rollouts, SCOPE, clock)
    evidence = staged_evidence(rollouts, SCOPE, clock, 3)
    staged_evidence(rollouts, OTHER_ACTOR, clock)

    listed = rollouts.list_pending(SCOPE, kind="evidence")
    assert [r.rollout_id for r in listed] == [r.rollout_id for r in evidence]
    assert [r.rollout_id for r in rollouts.list_pending(SCOPE, kind="evidence", limit=2)] == [
        r.rollout_id for r in evidence[:2]
    ]
    assert [r.rollout_id for r in rollouts.list_pending(SCOPE, kind="extraction")] == [
        extraction.rollout_id
    ]
    everything = {r.rollout_id for r in rollouts.list_pending(SCOPE)}
    assert everything == {extraction.rollout_id, *(r.rollout_id for r in evidence)}


def test_evidence_that_is_not_a_staged_evidence_rollout_of_the_scope_is_refused(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    rollout = evidence_rollout(SCOPE, clock)

    with pytest.raises(InvalidInputError):
        rollouts.add_staged(OTHER_ACTOR, rollout)
    with pytest.raises(InvalidInputError):
        rollouts.add_staged(SCOPE, rollout.model_copy(update={"state": RolloutState.CLAIMED}))
    extraction = staged_extraction(rollouts, SCOPE, clock)
    with pytest.raises(InvalidInputError):
        rollouts.add_staged(
            SCOPE, extraction.model_copy(update={"rollout_id": "ro-20260101T000000000000-0"})
        )

    assert rollouts.list_pending(SCOPE, kind="evidence") == ()


def test_evidence_rollouts_move_and_are_erased_like_any_rollout(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    (evidence,) = staged_evidence(rollouts, SCOPE, clock)

    failed = rollouts.mark(
        SCOPE, evidence.rollout_id, RolloutState.FAILED, now=clock.now(), reason="model refused"
    )
    assert failed.failure == "model refused"
    assert [r.rollout_id for r in rollouts.list_pending(SCOPE, kind="evidence")] == [
        evidence.rollout_id
    ]

    assert rollouts.erase_scope(SCOPE) == 1
    assert rollouts.list_pending(SCOPE) == ()
