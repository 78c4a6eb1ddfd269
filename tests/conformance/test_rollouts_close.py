"""What a session's close asks of the rollout index: its pending messages are claimed at once,
whatever its triggers, once, in its own scope only (``RolloutStore.claim_session``)."""

from __future__ import annotations

from cairn.clock import FixedClock
from cairn.ports import Stores
from cairn.rollout.index import EventRef
from tests.conformance.rollout_samples import append_turns, later, policy, require_rollouts
from tests.conformance.samples import OTHER_ACTOR, SCOPE


def test_a_closed_session_is_claimed_at_once_whatever_its_triggers(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    appended = append_turns(
        rollouts, SCOPE, 3, clock=clock, policy=policy(message_count=6, idle_timeout_seconds=600)
    )

    claim = rollouts.claim_session(SCOPE, "s1", clock.now())

    assert claim is not None
    assert claim.trigger == "session_closed"
    assert claim.events == tuple(
        EventRef.model_validate(a.event, from_attributes=True) for a in appended
    )
    assert rollouts.get(SCOPE, claim.rollout_id) == claim
    counters = rollouts.counters(SCOPE, "s1")
    assert counters is not None
    assert (counters.pending, counters.messages, counters.idle_due_at) == ((), 0, None)


def test_closing_twice_claims_once_and_the_sweep_finds_nothing_left(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    append_turns(rollouts, SCOPE, 2, clock=clock, policy=policy(idle_timeout_seconds=60))

    first = rollouts.claim_session(SCOPE, "s1", clock.now())
    again = rollouts.claim_session(SCOPE, "s1", clock.now())
    later(clock, 61)

    assert first is not None
    assert again is None
    assert rollouts.claim_idle(clock.now()) == ()
    assert [r.rollout_id for r in rollouts.list_pending(SCOPE)] == [first.rollout_id]


def test_closing_claims_only_that_session_of_that_scope(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    idle = policy(idle_timeout_seconds=60)
    append_turns(rollouts, SCOPE, 1, clock=clock, policy=idle, session_id="s1")
    append_turns(rollouts, SCOPE, 1, clock=clock, policy=idle, session_id="s2")
    append_turns(rollouts, OTHER_ACTOR, 1, clock=clock, policy=idle, session_id="s1")

    claim = rollouts.claim_session(SCOPE, "s1", clock.now())
    later(clock, 60)
    swept = rollouts.claim_idle(clock.now())

    assert claim is not None
    assert {(c.actor_id, c.session_id) for c in swept} == {("a1", "s2"), ("a2", "s1")}


def test_a_session_with_nothing_pending_or_never_counted_claims_nothing(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    append_turns(rollouts, SCOPE, 2, clock=clock, policy=policy(message_count=2))  # fired
    append_turns(rollouts, SCOPE, 1, clock=clock, policy=None, session_id="uncounted")

    assert rollouts.claim_session(SCOPE, "s1", clock.now()) is None
    assert rollouts.claim_session(SCOPE, "uncounted", clock.now()) is None
    assert rollouts.claim_session(SCOPE, "never", clock.now()) is None
    assert rollouts.claim_session(OTHER_ACTOR, "s1", clock.now()) is None
