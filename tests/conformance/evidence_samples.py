"""Shared pieces of the evidence and consumption conformance tests: staged rollouts."""

from __future__ import annotations

from cairn.clock import FixedClock
from cairn.models import Scope
from cairn.ports import RolloutStore
from cairn.rollout.index import Rollout, RolloutState, new_evidence_id
from tests.conformance.rollout_samples import append_turns, policy


def evidence_rollout(scope: Scope, clock: FixedClock, *, session_id: str = "s1") -> Rollout:
    """A staged evidence rollout of ``scope`` (what a completed run leaves), not yet stored;
    the clock moves on by 1 ms so the next one sorts after it."""
    now = clock.now()
    rollout_id = new_evidence_id(now)
    clock.advance(milliseconds=1)
    return Rollout(
        rollout_id=rollout_id,
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        session_id=session_id,
        trigger="run_completed",
        state=RolloutState.STAGED,
        staging_key=f"rollouts/test/{rollout_id}",
        claimed_at=now,
        updated_at=now,
    )


def staged_evidence(
    rollouts: RolloutStore, scope: Scope, clock: FixedClock, count: int = 1
) -> list[Rollout]:
    """``count`` evidence rollouts of ``scope``, stored, oldest first."""
    return [rollouts.add_staged(scope, evidence_rollout(scope, clock)) for _ in range(count)]


def staged_extraction(rollouts: RolloutStore, scope: Scope, clock: FixedClock) -> Rollout:
    """An extraction rollout released by a message trigger and staged."""
    appended = append_turns(rollouts, scope, 1, clock=clock, policy=policy(message_count=1))
    claim = appended[0].claim
    assert claim is not None
    return rollouts.mark(
        scope,
        claim.rollout_id,
        RolloutState.STAGED,
        now=clock.now(),
        staging_key=f"rollouts/test/{claim.rollout_id}",
    )
