"""What the sweep's wake-ups ask of the rollout index: ``next_due`` names the earliest idle
deadline or rollout due time of any scope (and nothing once all is consumed), and an append
says when it started a session's pending batch (``Appended.idle_due_at``)."""

from __future__ import annotations

from datetime import timedelta

from cairn.clock import FixedClock
from cairn.ports import Stores
from cairn.rollout.index import REDELIVER_AFTER, STALL_AFTER, RolloutState
from tests.conformance.rollout_samples import append_turns, later, policy, require_rollouts
from tests.conformance.samples import OTHER_ACTOR, SCOPE


def test_nothing_is_due_in_an_empty_index_nor_once_every_rollout_is_consumed(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    assert rollouts.next_due() is None
    (appended,) = append_turns(rollouts, SCOPE, 1, clock=clock, policy=policy(message_count=1))
    assert appended.claim is not None
    rid = appended.claim.rollout_id
    assert rollouts.next_due() == appended.claim.claimed_at + STALL_AFTER

    rollouts.mark(SCOPE, rid, RolloutState.STAGED, now=clock.now(), staging_key="k")
    announced = rollouts.mark(SCOPE, rid, RolloutState.ANNOUNCED, now=clock.now())
    assert rollouts.next_due() == announced.updated_at + REDELIVER_AFTER
    rollouts.mark(SCOPE, rid, RolloutState.CONSUMED, now=clock.now())

    assert rollouts.next_due() is None


def test_the_earliest_idle_deadline_of_any_scope_is_next_and_moves_with_its_session(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    (first,) = append_turns(
        rollouts, SCOPE, 1, clock=clock, policy=policy(idle_timeout_seconds=600)
    )
    later(clock, 60)
    (other,) = append_turns(
        rollouts, OTHER_ACTOR, 1, clock=clock, policy=policy(idle_timeout_seconds=120)
    )
    assert first.idle_due_at == first.event.created_at + timedelta(seconds=600)
    assert other.idle_due_at is not None
    assert rollouts.next_due() == other.idle_due_at  # the other actor's, though it came later

    later(clock, 120)
    (claim,) = rollouts.claim_idle(clock.now())
    assert claim.actor_id == OTHER_ACTOR.actor_id
    assert rollouts.next_due() == min(first.idle_due_at, claim.claimed_at + STALL_AFTER)


def test_only_the_event_that_starts_a_pending_batch_reports_its_idle_deadline(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    counted = policy(message_count=2, idle_timeout_seconds=300)
    first, second, third = append_turns(rollouts, SCOPE, 3, clock=clock, policy=counted)

    assert first.idle_due_at == first.event.created_at + timedelta(seconds=300)
    assert second.idle_due_at is None  # it moved the deadline, and fired the count trigger
    assert second.claim is not None
    assert third.idle_due_at == third.event.created_at + timedelta(seconds=300)  # a new batch
    assert append_turns(rollouts, SCOPE, 1, clock=clock, policy=None)[0].idle_due_at is None
