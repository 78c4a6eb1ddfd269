"""An append under an idempotency key stores one event, however often it is repeated.

A caller that cannot tell whether its append landed (an answer lost, an outage longer than the
store's own resends) appends again under the same key, and must get the first event back, not a
second one: the API passes the digest of its ``clientToken`` (issue 14). A retry re-stamps the
time, so the repeat carries another timestamp and must still get the first event.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from cairn.clock import FixedClock
from cairn.errors import EventNotFoundError, InvalidInputError
from cairn.ports import MAX_APPEND_KEY, Stores
from tests.conformance.rollout_samples import policy, require_rollouts
from tests.conformance.samples import OTHER_ACTOR, SCOPE, event_input

KEY = "9f2c" * 16


def test_an_append_repeated_under_its_key_returns_the_first_event_and_stores_nothing(
    stores: Stores, clock: FixedClock
) -> None:
    first = stores.events.append(SCOPE, event_input(at=clock.now()), idempotency_key=KEY)
    clock.advance(timedelta(seconds=3))

    again = stores.events.append(SCOPE, event_input(at=clock.now()), idempotency_key=KEY)

    assert again == first
    assert [e.event_id for e in stores.events.list_events(SCOPE, "s1").items] == [first.event_id]


def test_a_repeat_in_another_session_still_returns_the_first_event(
    stores: Stores, clock: FixedClock
) -> None:
    """A CreateEvent without a sessionId gets a fresh one on every attempt."""
    first = stores.events.append(SCOPE, event_input("s1"), idempotency_key=KEY)

    again = stores.events.append(SCOPE, event_input("s2"), idempotency_key=KEY)

    assert again == first
    assert stores.events.list_events(SCOPE, "s2").items == ()


def test_keys_are_scoped_and_appends_without_a_key_are_never_folded(stores: Stores) -> None:
    mine = stores.events.append(SCOPE, event_input(), idempotency_key=KEY)
    theirs = stores.events.append(OTHER_ACTOR, event_input(), idempotency_key=KEY)
    plain = [stores.events.append(SCOPE, event_input()) for _ in range(2)]

    assert theirs.actor_id == OTHER_ACTOR.actor_id
    assert stores.events.list_events(OTHER_ACTOR, "s1").items == (theirs,)
    listed = {e.event_id for e in stores.events.list_events(SCOPE, "s1").items}
    assert listed == {mine.event_id, *(e.event_id for e in plain)}


def test_a_repeat_after_its_event_was_deleted_is_refused_as_not_found(stores: Stores) -> None:
    first = stores.events.append(SCOPE, event_input(), idempotency_key=KEY)
    stores.events.delete_event(SCOPE, "s1", first.event_id)

    with pytest.raises(EventNotFoundError):
        stores.events.append(SCOPE, event_input(), idempotency_key=KEY)

    assert stores.events.list_events(SCOPE, "s1").items == ()


def test_erasing_the_actor_forgets_its_keys(stores: Stores) -> None:
    stores.events.append(SCOPE, event_input(), idempotency_key=KEY)
    stores.events.erase_scope(SCOPE)

    again = stores.events.append(SCOPE, event_input(), idempotency_key=KEY)

    assert stores.events.list_events(SCOPE, "s1").items == (again,)


@pytest.mark.parametrize("bad", ["", "x" * (MAX_APPEND_KEY + 1)])
def test_a_malformed_key_is_refused_and_stores_nothing(stores: Stores, bad: str) -> None:
    with pytest.raises(InvalidInputError):
        stores.events.append(SCOPE, event_input(), idempotency_key=bad)

    assert stores.events.list_sessions(SCOPE).items == ()


def test_a_counted_append_repeated_under_its_key_is_counted_once(
    stores: Stores, backend_name: str, clock: FixedClock
) -> None:
    rollouts = require_rollouts(stores, backend_name)
    fires_at_two = policy(message_count=2)
    first = rollouts.append_counted(SCOPE, event_input(at=clock.now()), policy=fires_at_two)
    keyed = event_input(at=clock.now(), text="I drink green tea")
    second = rollouts.append_counted(SCOPE, keyed, policy=fires_at_two, idempotency_key=KEY)
    clock.advance(timedelta(seconds=3))

    again = rollouts.append_counted(
        SCOPE,
        event_input(at=clock.now(), text="I drink green tea"),
        policy=fires_at_two,
        idempotency_key=KEY,
    )

    assert second.claim is not None  # the second message fired the trigger, once
    assert again.event == second.event
    assert again.claim is None
    listed = {e.event_id for e in stores.events.list_events(SCOPE, "s1").items}
    assert listed == {first.event.event_id, second.event.event_id}
    assert len(rollouts.list_pending(SCOPE)) == 1
    counters = rollouts.counters(SCOPE, "s1")
    assert counters is not None
    assert counters.version == 2


def test_a_plain_append_and_a_counted_one_share_the_keys(stores: Stores, backend_name: str) -> None:
    rollouts = require_rollouts(stores, backend_name)
    first = stores.events.append(SCOPE, event_input(), idempotency_key=KEY)

    again = rollouts.append_counted(
        SCOPE, event_input(), policy=policy(message_count=1), idempotency_key=KEY
    )

    assert again.event == first
    assert again.claim is None
    assert rollouts.counters(SCOPE, "s1") is None
