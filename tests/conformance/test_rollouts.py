"""The rollout index: counting is part of the append, a fired trigger claims exactly the
pending events, and a rollout moves claimed -> staged -> announced -> consumed idempotently."""

from __future__ import annotations

import pytest

from cairn.clock import FixedClock
from cairn.errors import ConflictError, RolloutNotFoundError
from cairn.models import Conversational, EventInput, Role
from cairn.ports import Stores
from cairn.rollout.index import MAX_BATCH_EVENTS, EventRef, RolloutState, estimate_tokens
from tests.conformance.rollout_samples import (
    STRATEGIES,
    append_turns,
    blob_only,
    policy,
    require_rollouts,
    turn,
)
from tests.conformance.samples import OTHER_ACTOR, SCOPE


def test_an_appended_event_is_counted_with_its_messages_and_tokens(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    two_messages = EventInput(
        session_id="s1",
        event_timestamp=clock.now(),
        payload=(
            Conversational(role=Role.USER, text="I moved to Lisbon"),
            Conversational(role=Role.ASSISTANT, text="Noted, Lisbon it is."),
        ),
    )
    appended = rollouts.append_counted(SCOPE, two_messages, policy=policy(message_count=5))

    assert appended.claim is None
    assert stores.events.get_event(SCOPE, "s1", appended.event.event_id) == appended.event
    counters = rollouts.counters(SCOPE, "s1")
    assert counters is not None
    assert counters.messages == 2
    assert counters.tokens == estimate_tokens("I moved to Lisbon") + estimate_tokens(
        "Noted, Lisbon it is."
    )
    assert counters.pending == (EventRef.model_validate(appended.event, from_attributes=True),)
    assert counters.last_event_at == clock.now()


def test_without_a_policy_the_event_is_stored_and_not_counted(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    appended = rollouts.append_counted(SCOPE, turn("hello", clock=clock), policy=None)

    assert stores.events.get_event(SCOPE, "s1", appended.event.event_id) == appended.event
    assert rollouts.counters(SCOPE, "s1") is None


def test_an_event_holding_only_blobs_is_stored_but_never_counted(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    appended = rollouts.append_counted(
        SCOPE, blob_only(clock=clock), policy=policy(message_count=1)
    )

    assert appended.claim is None
    assert stores.events.get_event(SCOPE, "s1", appended.event.event_id) == appended.event
    assert rollouts.counters(SCOPE, "s1") is None


def test_the_message_trigger_claims_exactly_the_pending_events_once(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    appended = append_turns(rollouts, SCOPE, 7, clock=clock, policy=policy(message_count=3))

    claims = [a.claim for a in appended]
    assert [c is not None for c in claims] == [False, False, True, False, False, True, False]
    first = claims[2]
    assert first is not None
    assert first.events == tuple(
        EventRef.model_validate(a.event, from_attributes=True) for a in appended[:3]
    )
    assert (first.trigger, first.state, first.strategy_ids) == (
        "message_count",
        RolloutState.CLAIMED,
        STRATEGIES,
    )
    assert rollouts.get(SCOPE, first.rollout_id) == first
    counters = rollouts.counters(SCOPE, "s1")
    assert counters is not None
    assert counters.messages == 1
    assert len(counters.pending) == 1


def test_the_token_trigger_fires_on_estimated_tokens(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    long_turn = "x" * 300  # 75 estimated tokens
    first = rollouts.append_counted(
        SCOPE, turn(long_turn, clock=clock), policy=policy(token_count=100)
    )
    second = rollouts.append_counted(
        SCOPE, turn(long_turn, clock=clock), policy=policy(token_count=100)
    )

    assert first.claim is None
    assert second.claim is not None
    assert second.claim.trigger == "token_count"
    assert len(second.claim.events) == 2


def test_a_batch_never_exceeds_the_event_limit(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    appended = append_turns(
        rollouts, SCOPE, MAX_BATCH_EVENTS, clock=clock, policy=policy(idle_timeout_seconds=600)
    )

    claim = appended[-1].claim
    assert all(a.claim is None for a in appended[:-1])
    assert claim is not None
    assert claim.trigger == "batch_limit"
    assert len(claim.events) == MAX_BATCH_EVENTS


def test_history_names_the_events_released_just_before_the_batch(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    window = policy(message_count=2, history_window=3)
    appended = append_turns(rollouts, SCOPE, 6, clock=clock, policy=window)
    refs = [EventRef.model_validate(a.event, from_attributes=True) for a in appended]

    first, second, third = (appended[i].claim for i in (1, 3, 5))
    assert first is not None
    assert second is not None
    assert third is not None
    assert first.history == ()
    assert second.history == tuple(refs[:2])
    assert third.history == tuple(refs[1:4])
    assert third.history_window == 3


def test_a_rollout_moves_through_its_states_and_repeats_change_nothing(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claim = append_turns(rollouts, SCOPE, 1, clock=clock, policy=policy(message_count=1))[0].claim
    assert claim is not None
    rid = claim.rollout_id

    staged = rollouts.mark(SCOPE, rid, RolloutState.STAGED, now=clock.now(), staging_key="k/1")
    again = rollouts.mark(SCOPE, rid, RolloutState.STAGED, now=clock.now(), staging_key="k/2")
    announced = rollouts.mark(SCOPE, rid, RolloutState.ANNOUNCED, now=clock.now())
    consumed = rollouts.mark(SCOPE, rid, RolloutState.CONSUMED, now=clock.now())
    duplicate = rollouts.mark(SCOPE, rid, RolloutState.CONSUMED, now=clock.now())
    late_failure = rollouts.mark(SCOPE, rid, RolloutState.FAILED, now=clock.now(), reason="late")

    assert (staged.state, staged.staging_key) == (RolloutState.STAGED, "k/1")
    assert again == staged
    assert (announced.state, announced.announcements) == (RolloutState.ANNOUNCED, 1)
    assert consumed.state is RolloutState.CONSUMED
    assert duplicate == consumed == late_failure == rollouts.get(SCOPE, rid)
    assert rollouts.list_pending(SCOPE) == ()


def test_announcing_or_consuming_an_unstaged_rollout_is_refused(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claim = append_turns(rollouts, SCOPE, 1, clock=clock, policy=policy(message_count=1))[0].claim
    assert claim is not None

    for state in (RolloutState.ANNOUNCED, RolloutState.CONSUMED):
        with pytest.raises(ConflictError):
            rollouts.mark(SCOPE, claim.rollout_id, state, now=clock.now())
    assert rollouts.get(SCOPE, claim.rollout_id) == claim


def test_a_failed_rollout_keeps_its_reason_and_stays_pending(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claim = append_turns(rollouts, SCOPE, 1, clock=clock, policy=policy(message_count=1))[0].claim
    assert claim is not None
    rid = claim.rollout_id
    rollouts.mark(SCOPE, rid, RolloutState.STAGED, now=clock.now(), staging_key="k")

    failed = rollouts.mark(
        SCOPE, rid, RolloutState.FAILED, now=clock.now(), reason="invalid output"
    )
    rollouts.mark(SCOPE, rid, RolloutState.FAILED, now=clock.now(), reason="second")

    assert (failed.state, failed.failure) == (RolloutState.FAILED, "invalid output")
    assert rollouts.get(SCOPE, rid).failure == "invalid output"
    assert rollouts.list_pending(SCOPE) == (failed,)
    retried = rollouts.mark(SCOPE, rid, RolloutState.CONSUMED, now=clock.now())
    assert retried.state is RolloutState.CONSUMED


def test_pending_rollouts_are_listed_oldest_first_and_scoped(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    claims = [
        a.claim
        for a in append_turns(rollouts, SCOPE, 3, clock=clock, policy=policy(message_count=1))
    ]

    assert rollouts.list_pending(SCOPE) == tuple(claims)
    assert rollouts.list_pending(SCOPE, limit=2) == tuple(claims[:2])
    assert rollouts.list_pending(OTHER_ACTOR) == ()
    assert claims[0] is not None
    with pytest.raises(RolloutNotFoundError):
        rollouts.get(OTHER_ACTOR, claims[0].rollout_id)
    with pytest.raises(RolloutNotFoundError):
        rollouts.mark(OTHER_ACTOR, claims[0].rollout_id, RolloutState.STAGED, now=clock.now())


def test_events_for_reads_the_named_events_in_order_and_skips_deleted_ones(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    events = [a.event for a in append_turns(rollouts, SCOPE, 3, clock=clock, policy=None)]
    refs = [EventRef.model_validate(e, from_attributes=True) for e in events]
    stores.events.delete_event(SCOPE, "s1", events[1].event_id)

    assert rollouts.events_for(SCOPE, "s1", [refs[2], refs[1], refs[0]]) == (events[2], events[0])
    assert rollouts.events_for(OTHER_ACTOR, "s1", refs) == ()


def test_erasing_a_scope_forgets_its_counters_and_rollouts(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    append_turns(rollouts, SCOPE, 3, clock=clock, policy=policy(message_count=2))
    append_turns(rollouts, OTHER_ACTOR, 2, clock=clock, policy=policy(message_count=2))

    assert rollouts.erase_scope(SCOPE) == 2  # one session's counters, one rollout
    assert rollouts.counters(SCOPE, "s1") is None
    assert rollouts.list_pending(SCOPE) == ()
    assert len(rollouts.list_pending(OTHER_ACTOR)) == 1
