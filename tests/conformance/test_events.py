"""Events are immutable turns: stored exactly, listed in (timestamp, id) order, deletable."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from cairn.clock import FixedClock
from cairn.errors import EventNotFoundError
from cairn.models import BlobPayload, Branch, Conversational, EventInput, Role
from cairn.ports import Stores
from tests.conformance.samples import OTHER_ACTOR, OTHER_MEMORY, SCOPE, event_input

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
BLOB = {
    "tool": "weather",
    "args": {"city": "Zürich", "days": 3, "units": None, "precise": True},
    "readings": [1, 2.5, -0.0, 1e-7, 12345678901234567890, "3", [], {}],
    "emoji": "🌧️ ☔",
}


def rich_event() -> EventInput:
    return EventInput(
        session_id="s1",
        event_timestamp=T0 + timedelta(microseconds=654_321),
        payload=(
            Conversational(role=Role.USER, text="What's the weather in Zürich?\nThanks ☺"),
            Conversational(role=Role.ASSISTANT, text="Let me check."),
            BlobPayload(blob=BLOB),
            BlobPayload(blob=["a", 1, None]),
            BlobPayload(blob="just a string"),
            Conversational(role=Role.TOOL, text='{"raw": "tool output"}'),
        ),
        branch=Branch(name="retry-1", root_event_id="1767258000000#abc"),
        metadata={"channel": "telegram", "lang": "de"},
    )


def test_an_event_round_trips_exactly(stores: Stores, clock: FixedClock) -> None:
    given = rich_event()

    appended = stores.events.append(SCOPE, given)
    fetched = stores.events.get_event(SCOPE, "s1", appended.event_id)

    assert appended.event_id
    assert (appended.memory_id, appended.actor_id) == (SCOPE.memory_id, SCOPE.actor_id)
    assert appended.created_at == clock.now()
    assert fetched == appended
    assert (
        EventInput.model_validate(fetched.model_dump(include=set(EventInput.model_fields))) == given
    )
    blobs = [p.blob for p in fetched.payload if isinstance(p, BlobPayload)]
    assert [json.dumps(b, sort_keys=True) for b in blobs] == [
        json.dumps(b, sort_keys=True) for b in (BLOB, ["a", 1, None], "just a string")
    ]


def test_appending_the_same_input_twice_makes_two_events(stores: Stores) -> None:
    first = stores.events.append(SCOPE, event_input())
    second = stores.events.append(SCOPE, event_input())

    assert first.event_id != second.event_id
    assert len(stores.events.list_events(SCOPE, "s1").items) == 2


def test_events_are_listed_in_timestamp_order_whatever_the_append_order(stores: Stores) -> None:
    for minutes in (3, 1, 2, 0):
        stores.events.append(
            SCOPE, event_input(at=T0 + timedelta(minutes=minutes), text=f"m{minutes}")
        )

    listed = stores.events.list_events(SCOPE, "s1").items

    texts = [p.text for e in listed for p in e.payload if isinstance(p, Conversational)]
    assert texts == ["m0", "m1", "m2", "m3"]


def test_events_with_equal_timestamps_are_ordered_by_event_id(stores: Stores) -> None:
    appended = [stores.events.append(SCOPE, event_input(at=T0)) for _ in range(5)]

    listed = stores.events.list_events(SCOPE, "s1").items

    assert [e.event_id for e in listed] == sorted(e.event_id for e in appended)


def test_the_branch_filter_lists_only_that_branch(stores: Stores) -> None:
    main = stores.events.append(SCOPE, event_input(at=T0))
    on_b1 = [
        stores.events.append(SCOPE, event_input(at=T0 + timedelta(seconds=i), branch="b1"))
        for i in (1, 2)
    ]
    on_b2 = stores.events.append(SCOPE, event_input(at=T0 + timedelta(seconds=3), branch="b2"))

    assert list(stores.events.list_events(SCOPE, "s1", branch="b1").items) == on_b1
    assert list(stores.events.list_events(SCOPE, "s1", branch="b2").items) == [on_b2]
    assert list(stores.events.list_events(SCOPE, "s1").items) == [main, *on_b1, on_b2]


def test_sessions_with_events_are_listed_for_their_actor(stores: Stores) -> None:
    for session in ("s2", "s1", "s2"):
        stores.events.append(SCOPE, event_input(session))
    stores.events.append(OTHER_ACTOR, event_input("s9"))

    sessions = stores.events.list_sessions(SCOPE).items

    assert [(s.actor_id, s.session_id) for s in sessions] == [("a1", "s1"), ("a1", "s2")]


def test_actors_are_listed_for_their_memory_only(stores: Stores) -> None:
    for actor in ("tg:2", "tg:1", "tg/3"):
        stores.events.append(SCOPE.model_copy(update={"actor_id": actor}), event_input())
    stores.events.append(OTHER_MEMORY, event_input())

    assert list(stores.events.list_actors(SCOPE.memory_id).items) == ["tg/3", "tg:1", "tg:2"]
    assert list(stores.events.list_actors(OTHER_MEMORY.memory_id).items) == [OTHER_MEMORY.actor_id]
    assert stores.events.list_actors("m-none").items == ()


def test_a_deleted_event_is_gone(stores: Stores) -> None:
    doomed = stores.events.append(SCOPE, event_input(at=T0))
    kept = stores.events.append(SCOPE, event_input(at=T0 + timedelta(seconds=1)))

    stores.events.delete_event(SCOPE, "s1", doomed.event_id)

    with pytest.raises(EventNotFoundError):
        stores.events.get_event(SCOPE, "s1", doomed.event_id)
    with pytest.raises(EventNotFoundError):
        stores.events.delete_event(SCOPE, "s1", doomed.event_id)
    assert list(stores.events.list_events(SCOPE, "s1").items) == [kept]


def test_a_session_whose_events_are_all_deleted_is_not_listed(stores: Stores) -> None:
    only = stores.events.append(SCOPE, event_input("s1"))
    stores.events.append(SCOPE, event_input("s2"))

    stores.events.delete_event(SCOPE, "s1", only.event_id)

    assert [s.session_id for s in stores.events.list_sessions(SCOPE).items] == ["s2"]


def test_an_unknown_event_is_not_found(stores: Stores) -> None:
    stores.events.append(SCOPE, event_input())

    with pytest.raises(EventNotFoundError):
        stores.events.get_event(SCOPE, "s1", "1767258000000#0000000000000000")
