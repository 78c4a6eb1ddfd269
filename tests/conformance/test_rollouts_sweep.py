"""What the scheduled sweep asks of the rollout index: idle sessions are claimed once, stalled
and unconsumed rollouts come due, and all of it survives reopening the store."""

from __future__ import annotations

from pathlib import Path

from cairn.clock import FixedClock
from cairn.ports import Stores
from cairn.rollout.index import REDELIVER_AFTER, STALL_AFTER, EventRef, RolloutState
from tests.conformance.backends import open_backend
from tests.conformance.rollout_samples import append_turns, later, policy, require_rollouts
from tests.conformance.samples import OTHER_ACTOR, SCOPE


def test_an_idle_session_is_claimed_once_when_its_timeout_passes(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    appended = append_turns(rollouts, SCOPE, 2, clock=clock, policy=policy(idle_timeout_seconds=60))

    later(clock, 59)
    assert rollouts.claim_idle(clock.now()) == ()
    later(clock, 1)
    claims = rollouts.claim_idle(clock.now())

    assert len(claims) == 1
    claim = claims[0]
    assert claim.trigger == "idle_timeout"
    assert claim.events == tuple(
        EventRef.model_validate(a.event, from_attributes=True) for a in appended
    )
    assert rollouts.get(SCOPE, claim.rollout_id) == claim
    assert rollouts.claim_idle(clock.now()) == ()
    counters = rollouts.counters(SCOPE, "s1")
    assert counters is not None
    assert counters.pending == ()
    assert counters.messages == 0


def test_a_new_message_postpones_the_idle_claim(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    idle = policy(idle_timeout_seconds=60)
    append_turns(rollouts, SCOPE, 1, clock=clock, policy=idle)
    later(clock, 45)
    append_turns(rollouts, SCOPE, 1, clock=clock, policy=idle)
    later(clock, 45)

    assert rollouts.claim_idle(clock.now()) == ()
    later(clock, 15)
    (claim,) = rollouts.claim_idle(clock.now())
    assert len(claim.events) == 2


def test_idle_sessions_of_every_scope_are_found_and_claims_respect_the_limit(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    idle = policy(idle_timeout_seconds=10)
    append_turns(rollouts, SCOPE, 1, clock=clock, policy=idle, session_id="s1")
    append_turns(rollouts, SCOPE, 1, clock=clock, policy=idle, session_id="s2")
    append_turns(rollouts, OTHER_ACTOR, 1, clock=clock, policy=idle, session_id="s1")
    later(clock, 10)

    first = rollouts.claim_idle(clock.now(), limit=2)
    rest = rollouts.claim_idle(clock.now())

    assert len(first) == 2
    assert len(rest) == 1
    claimed = {(c.actor_id, c.session_id) for c in first + rest}
    assert claimed == {("a1", "s1"), ("a1", "s2"), ("a2", "s1")}


def test_a_session_without_an_idle_timeout_is_never_claimed_by_the_sweep(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    append_turns(rollouts, SCOPE, 1, clock=clock, policy=policy(message_count=5))
    later(clock, 86_400)

    assert rollouts.claim_idle(clock.now()) == ()


def test_stalled_and_unconsumed_rollouts_come_due_and_consumed_ones_never(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claims = [
        a.claim
        for a in append_turns(rollouts, SCOPE, 3, clock=clock, policy=policy(message_count=1))
    ]
    stalled, announced, consumed = (c.rollout_id for c in claims if c is not None)
    for rid in (announced, consumed):
        rollouts.mark(SCOPE, rid, RolloutState.STAGED, now=clock.now(), staging_key=f"k/{rid}")
        rollouts.mark(SCOPE, rid, RolloutState.ANNOUNCED, now=clock.now())
    rollouts.mark(SCOPE, consumed, RolloutState.CONSUMED, now=clock.now())

    assert rollouts.list_due(clock.now()) == ()
    later(clock, STALL_AFTER.total_seconds())
    assert [r.rollout_id for r in rollouts.list_due(clock.now())] == [stalled]
    later(clock, REDELIVER_AFTER.total_seconds())
    assert [r.rollout_id for r in rollouts.list_due(clock.now())] == [stalled, announced]
    assert [r.rollout_id for r in rollouts.list_due(clock.now(), limit=1)] == [stalled]


def test_a_re_announced_rollout_is_due_again_only_after_the_redelivery_delay(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claim = append_turns(rollouts, SCOPE, 1, clock=clock, policy=policy(message_count=1))[0].claim
    assert claim is not None
    rid = claim.rollout_id
    rollouts.mark(SCOPE, rid, RolloutState.STAGED, now=clock.now(), staging_key="k")
    rollouts.mark(SCOPE, rid, RolloutState.ANNOUNCED, now=clock.now())
    later(clock, REDELIVER_AFTER.total_seconds())

    again = rollouts.mark(SCOPE, rid, RolloutState.ANNOUNCED, now=clock.now())

    assert again.announcements == 2
    assert rollouts.list_due(clock.now()) == ()
    later(clock, REDELIVER_AFTER.total_seconds())
    assert rollouts.list_due(clock.now()) == (again,)


def test_counters_and_rollouts_survive_reopening_the_store(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    first = open_backend(persistent_backend, clock, tmp_path)
    rollouts = require_rollouts(first, persistent_backend)
    idle = policy(message_count=2, idle_timeout_seconds=30)
    claim = append_turns(rollouts, SCOPE, 3, clock=clock, policy=idle)[1].claim
    assert claim is not None
    rollouts.mark(SCOPE, claim.rollout_id, RolloutState.STAGED, now=clock.now(), staging_key="k")
    staged = rollouts.get(SCOPE, claim.rollout_id)
    counters = rollouts.counters(SCOPE, "s1")
    first.close()

    second = open_backend(persistent_backend, clock, tmp_path)
    try:
        reopened = require_rollouts(second, persistent_backend)
        assert reopened.get(SCOPE, claim.rollout_id) == staged
        assert reopened.counters(SCOPE, "s1") == counters
        later(clock, 30)
        (idle_claim,) = reopened.claim_idle(clock.now())
        assert reopened.list_pending(SCOPE) == (staged, idle_claim)
    finally:
        second.close()
