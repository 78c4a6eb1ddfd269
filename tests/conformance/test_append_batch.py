"""``RolloutStore.append_counted_batch``: a session's batch of turns in one transaction.

The runtime buffers a session's turns and writes each batch at once. The batch must land
exactly as its appends one by one would (the same events, the same counters, a trigger firing
mid-batch claiming exactly the same rollout), all of it or none of it, and a retry of the batch
under the same keys must store only what did not land.
"""

from __future__ import annotations

import pytest

from cairn.clock import FixedClock
from cairn.errors import InvalidInputError
from cairn.ports import MAX_APPEND_BATCH, Stores
from cairn.rollout.index import Appended, EventRef
from tests.conformance.rollout_samples import blob_only, policy, require_rollouts, turn
from tests.conformance.samples import OTHER_ACTOR, SCOPE


def _refs(appended: list[Appended] | tuple[Appended, ...]) -> tuple[EventRef, ...]:
    return tuple(EventRef.model_validate(a.event, from_attributes=True) for a in appended)


def _listed(stores: Stores, session: str = "s1") -> list[str]:
    return [e.event_id for e in stores.events.list_events(SCOPE, session, limit=100).items]


def test_a_batch_counts_and_claims_exactly_as_its_appends_one_by_one(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    every_three = policy(message_count=3)
    texts = [f"message {i}" for i in range(7)]
    singles = [
        rollouts.append_counted(OTHER_ACTOR, turn(t, clock=clock), policy=every_three)
        for t in texts
    ]

    batch = rollouts.append_counted_batch(
        SCOPE, [turn(t, clock=clock) for t in texts], policy=every_three
    )

    assert [a.claim is not None for a in batch] == [a.claim is not None for a in singles]
    assert [a.idle_due_at is not None for a in batch] == [
        a.idle_due_at is not None for a in singles
    ]
    assert _listed(stores) == [a.event.event_id for a in batch]
    for appended in batch:
        assert stores.events.get_event(SCOPE, "s1", appended.event.event_id) == appended.event
    first, second = (a.claim for a in batch if a.claim is not None)
    assert first is not None
    assert second is not None
    assert first.events == _refs(batch[:3])
    assert second.events == _refs(batch[3:6])
    single_claims = [a.claim for a in singles if a.claim is not None]
    assert [len(c.history) for c in (first, second)] == [len(c.history) for c in single_claims]
    assert [c.trigger for c in (first, second)] == [c.trigger for c in single_claims]
    assert rollouts.get(SCOPE, first.rollout_id) == first
    assert {r.rollout_id for r in rollouts.list_pending(SCOPE)} == {
        first.rollout_id,
        second.rollout_id,
    }
    mine, theirs = rollouts.counters(SCOPE, "s1"), rollouts.counters(OTHER_ACTOR, "s1")
    assert mine is not None
    assert theirs is not None
    assert (mine.messages, mine.tokens, mine.version) == (
        theirs.messages,
        theirs.tokens,
        theirs.version,
    )
    assert mine.pending == _refs(batch[6:])


def test_a_batch_continues_the_counts_already_made_and_skips_blob_only_events(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    every_three = policy(message_count=3)
    before = rollouts.append_counted(SCOPE, turn("first", clock=clock), policy=every_three)

    batch = rollouts.append_counted_batch(
        SCOPE,
        [turn("second", clock=clock), blob_only(clock=clock), turn("third", clock=clock)],
        policy=every_three,
    )

    assert [a.claim is not None for a in batch] == [False, False, True]
    claim = batch[2].claim
    assert claim is not None
    assert claim.events == _refs([before, batch[0], batch[2]])
    assert len(_listed(stores)) == 4


def test_a_batch_without_a_policy_is_stored_and_not_counted(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    batch = rollouts.append_counted_batch(
        SCOPE, [turn(f"m{i}", clock=clock) for i in range(4)], policy=None
    )

    assert _listed(stores) == [a.event.event_id for a in batch]
    assert rollouts.counters(SCOPE, "s1") is None
    assert all(a.claim is None for a in batch)


def test_a_retried_batch_returns_the_first_events_and_counts_nothing_again(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    keys = [f"turn-{i}" for i in range(5)]
    events = [turn(f"message {i}", clock=clock) for i in range(5)]
    first = rollouts.append_counted_batch(
        SCOPE, events, policy=policy(message_count=3), idempotency_keys=keys
    )
    counted = rollouts.counters(SCOPE, "s1")

    again = rollouts.append_counted_batch(
        SCOPE, events, policy=policy(message_count=3), idempotency_keys=keys
    )

    assert [a.event for a in again] == [a.event for a in first]
    assert all(a.claim is None for a in again)
    assert _listed(stores) == [a.event.event_id for a in first]
    assert rollouts.counters(SCOPE, "s1") == counted
    assert len(rollouts.list_pending(SCOPE)) == 1


def test_a_batch_whose_first_turns_landed_before_stores_only_the_rest(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    """A writer that appended two turns one by one, then lost track, retries the whole batch."""
    rollouts = require_rollouts(stores, backend_name)
    keys = [f"turn-{i}" for i in range(4)]
    events = [turn(f"message {i}", clock=clock) for i in range(4)]
    landed = [
        rollouts.append_counted(SCOPE, events[i], policy=policy(message_count=3), idempotency_key=k)
        for i, k in enumerate(keys[:2])
    ]

    batch = rollouts.append_counted_batch(
        SCOPE, events, policy=policy(message_count=3), idempotency_keys=keys
    )

    assert [a.event for a in batch[:2]] == [a.event for a in landed]
    assert len(_listed(stores)) == 4
    assert [a.claim is not None for a in batch] == [False, False, True, False]
    counters = rollouts.counters(SCOPE, "s1")
    assert counters is not None
    assert counters.messages == 1


@pytest.mark.parametrize(
    "keys",
    [["k1", "k1", "k3"], ["k1", "k2"], ["k1", "", "k3"], ["k1", "k2", "x" * 129]],
    ids=["repeated", "misaligned", "empty", "too long"],
)
def test_a_batch_with_bad_keys_is_refused_and_stores_nothing(
    stores: Stores, backend_name: str, clock: FixedClock, keys: list[str]
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    events = [turn(f"message {i}", clock=clock) for i in range(3)]

    with pytest.raises(InvalidInputError):
        rollouts.append_counted_batch(
            SCOPE, events, policy=policy(message_count=2), idempotency_keys=keys
        )

    assert _listed(stores) == []
    assert rollouts.counters(SCOPE, "s1") is None


def test_a_batch_over_the_bound_is_refused_and_stores_nothing(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    events = [turn(f"m{i}", clock=clock) for i in range(MAX_APPEND_BATCH + 1)]

    with pytest.raises(InvalidInputError, match="at most"):
        rollouts.append_counted_batch(SCOPE, events, policy=policy(message_count=2))

    assert _listed(stores) == []


def test_a_batch_spanning_sessions_counts_each_session_on_its_own(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    events = [turn("a1", clock=clock), turn("b1", session_id="s2", clock=clock)]
    events.append(turn("a2", clock=clock))

    batch = rollouts.append_counted_batch(SCOPE, events, policy=policy(message_count=2))

    assert [a.claim is not None for a in batch] == [False, False, True]
    one, two = rollouts.counters(SCOPE, "s1"), rollouts.counters(SCOPE, "s2")
    assert one is not None
    assert two is not None
    assert (one.messages, two.messages) == (0, 1)
    assert _listed(stores, "s2") == [batch[1].event.event_id]
