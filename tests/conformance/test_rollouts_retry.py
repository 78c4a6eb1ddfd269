"""A failed rollout can be retried (StartMemoryExtractionJob): marked ``claimed`` again, it is
released like a fresh claim; no other rollout can be sent back to ``claimed``."""

from __future__ import annotations

from cairn.clock import FixedClock
from cairn.ports import Stores
from cairn.rollout.index import STALL_AFTER, RolloutState
from tests.conformance.rollout_samples import append_turns, policy, require_rollouts
from tests.conformance.samples import SCOPE


def test_a_failed_rollout_retried_is_claimed_afresh_and_due_for_the_sweep(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claim = append_turns(rollouts, SCOPE, 1, clock=clock, policy=policy(message_count=1))[0].claim
    assert claim is not None
    rid = claim.rollout_id
    rollouts.mark(SCOPE, rid, RolloutState.STAGED, now=clock.now(), staging_key="k/1")
    rollouts.mark(SCOPE, rid, RolloutState.ANNOUNCED, now=clock.now())
    rollouts.mark(SCOPE, rid, RolloutState.FAILED, now=clock.now(), reason="invalid output")
    clock.advance(seconds=5)

    retried = rollouts.mark(SCOPE, rid, RolloutState.CLAIMED, now=clock.now())

    assert (retried.state, retried.failure, retried.announcements) == (
        RolloutState.CLAIMED,
        None,
        0,
    )
    assert (retried.updated_at, retried.staging_key, retried.events) == (
        clock.now(),
        "k/1",
        claim.events,
    )
    assert rollouts.get(SCOPE, rid) == retried
    assert rollouts.list_pending(SCOPE) == (retried,)
    assert rollouts.list_due(clock.now() + STALL_AFTER, limit=10) == (retried,)


def test_only_a_failed_rollout_goes_back_to_claimed(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claims = [
        a.claim
        for a in append_turns(rollouts, SCOPE, 3, clock=clock, policy=policy(message_count=1))
    ]
    staged, announced, consumed = (c.rollout_id for c in claims if c is not None)
    for rid in (staged, announced, consumed):
        rollouts.mark(SCOPE, rid, RolloutState.STAGED, now=clock.now(), staging_key=rid)
    rollouts.mark(SCOPE, announced, RolloutState.ANNOUNCED, now=clock.now())
    rollouts.mark(SCOPE, consumed, RolloutState.CONSUMED, now=clock.now())
    before = {rid: rollouts.get(SCOPE, rid) for rid in (staged, announced, consumed)}
    clock.advance(seconds=5)

    for rid, rollout in before.items():
        assert rollouts.mark(SCOPE, rid, RolloutState.CLAIMED, now=clock.now()) == rollout
        assert rollouts.get(SCOPE, rid) == rollout
