"""The bedrock-agentcore client's short-term memory operations, unmodified, against cairn serve."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

ACTOR = "user/a1:tg"  # slashes and colons are legal in actor ids and must survive the path
T0 = 1_767_258_000.125


def conversational(text: str, role: str = "USER") -> dict[str, Any]:
    return {"conversational": {"content": {"text": text}, "role": role}}


def create(client: Any, memory_id: str, at: float, *payload: Any, **extra: Any) -> dict[str, Any]:
    answer: dict[str, Any] = client.create_event(
        memoryId=memory_id,
        actorId=ACTOR,
        sessionId="s-1",
        eventTimestamp=at,
        payload=list(payload),
        **extra,
    )
    return answer["event"]


def test_an_event_round_trips_with_blobs_and_metadata(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    blob_text = json.dumps({"session_id": "s-1", "nested": {"ü": [1, 2.5, None]}})
    sent = [
        conversational("hello ☺"),
        {"blob": blob_text},
        {"blob": {"k": [1, 2], "deep": {"x": True}}},
        {"json": {"content": {"tool": "weather", "days": 3}}},
    ]

    event = create(data_plane, memory["id"], T0, *sent, metadata={"loc": {"stringValue": "NYC"}})
    fetched = data_plane.get_event(
        memoryId=memory["id"], actorId=ACTOR, sessionId="s-1", eventId=event["eventId"]
    )["event"]

    assert fetched == event
    assert fetched["actorId"] == ACTOR
    assert fetched["payload"][1]["blob"] == blob_text  # a JSON string stays that exact string
    assert fetched["payload"][2]["blob"] == {"k": [1, 2], "deep": {"x": True}}
    assert fetched["payload"][3] == {"json": {"content": {"tool": "weather", "days": 3}}}
    assert fetched["metadata"] == {"loc": {"stringValue": "NYC"}}
    assert fetched["eventTimestamp"] == datetime.fromtimestamp(T0, UTC)


def test_events_are_listed_newest_first_across_pages(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    created = [
        create(data_plane, memory["id"], T0 + i, conversational(f"turn {i}")) for i in range(5)
    ]

    pages = data_plane.get_paginator("list_events").paginate(
        memoryId=memory["id"],
        actorId=ACTOR,
        sessionId="s-1",
        includePayloads=True,
        PaginationConfig={"PageSize": 2},
    )
    listed = [e for page in pages for e in page["events"]]

    assert [e["eventId"] for e in listed] == [e["eventId"] for e in reversed(created)]
    assert listed[0]["payload"] == [conversational("turn 4")]


def test_payloads_can_be_left_out(data_plane: Any, memory: dict[str, Any]) -> None:
    create(data_plane, memory["id"], T0, conversational("secret"))

    listed = data_plane.list_events(
        memoryId=memory["id"], actorId=ACTOR, sessionId="s-1", includePayloads=False
    )["events"]

    assert [e["payload"] for e in listed] == [[]]


def test_metadata_filters_select_events(data_plane: Any, memory: dict[str, Any]) -> None:
    session = create(
        data_plane,
        memory["id"],
        T0,
        {"blob": "{}"},
        metadata={"stateType": {"stringValue": "SESSION"}},
    )
    create(
        data_plane,
        memory["id"],
        T0 + 1,
        {"blob": "{}"},
        metadata={"stateType": {"stringValue": "AGENT"}},
    )
    create(data_plane, memory["id"], T0 + 2, conversational("plain"))

    def listed(*filters: dict[str, Any]) -> list[str]:
        answer = data_plane.list_events(
            memoryId=memory["id"],
            actorId=ACTOR,
            sessionId="s-1",
            filter={"eventMetadata": list(filters)},
        )
        return [e["eventId"] for e in answer["events"]]

    equals_session = {
        "left": {"metadataKey": "stateType"},
        "operator": "EQUALS_TO",
        "right": {"metadataValue": {"stringValue": "SESSION"}},
    }
    assert listed(equals_session) == [session["eventId"]]
    assert len(listed({"left": {"metadataKey": "stateType"}, "operator": "EXISTS"})) == 2
    assert len(listed({"left": {"metadataKey": "stateType"}, "operator": "NOT_EXISTS"})) == 1


def test_branches_list_with_and_without_their_parent(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    first = create(data_plane, memory["id"], T0, conversational("main 1"))
    fork_at = create(data_plane, memory["id"], T0 + 1, conversational("main 2"))
    create(data_plane, memory["id"], T0 + 3, conversational("main 3"))
    forked = create(
        data_plane,
        memory["id"],
        T0 + 2,
        conversational("alt 1"),
        branch={"name": "alt", "rootEventId": fork_at["eventId"]},
    )

    def on_branch(include_parents: bool) -> list[str]:
        events = data_plane.list_events(
            memoryId=memory["id"],
            actorId=ACTOR,
            sessionId="s-1",
            filter={"branch": {"name": "alt", "includeParentBranches": include_parents}},
        )["events"]
        return [e["eventId"] for e in events]

    assert on_branch(False) == [forked["eventId"]]
    assert on_branch(True) == [forked["eventId"], fork_at["eventId"], first["eventId"]]
    assert forked["branch"] == {"name": "alt", "rootEventId": fork_at["eventId"]}


def test_a_branch_from_a_missing_event_is_refused(data_plane: Any, memory: dict[str, Any]) -> None:
    with pytest.raises(data_plane.exceptions.ResourceNotFoundException):
        create(data_plane, memory["id"], T0, branch={"name": "alt", "rootEventId": "1#ab"})


def test_a_deleted_event_is_gone(data_plane: Any, memory: dict[str, Any]) -> None:
    event = create(data_plane, memory["id"], T0, conversational("forget me"))
    where = {"memoryId": memory["id"], "actorId": ACTOR, "sessionId": "s-1"}

    assert data_plane.delete_event(**where, eventId=event["eventId"])["eventId"] == event["eventId"]

    with pytest.raises(data_plane.exceptions.ResourceNotFoundException):
        data_plane.get_event(**where, eventId=event["eventId"])
    assert data_plane.list_events(**where)["events"] == []


def test_actors_and_sessions_are_listed(data_plane: Any, memory: dict[str, Any]) -> None:
    for actor, session in (("a", "s1"), ("a", "s2"), ("b/2", "s1")):
        data_plane.create_event(
            memoryId=memory["id"], actorId=actor, sessionId=session, eventTimestamp=T0, payload=[]
        )

    actors = data_plane.get_paginator("list_actors").paginate(
        memoryId=memory["id"], PaginationConfig={"PageSize": 1}
    )
    sessions = data_plane.list_sessions(
        memoryId=memory["id"], actorId="a", filter={"eventFilter": "HAS_EVENTS"}
    )["sessionSummaries"]

    assert [a["actorId"] for page in actors for a in page["actorSummaries"]] == ["a", "b/2"]
    assert [(s["actorId"], s["sessionId"]) for s in sessions] == [("a", "s1"), ("a", "s2")]
    assert all(isinstance(s["createdAt"], datetime) for s in sessions)


def test_a_retried_create_event_is_answered_not_repeated(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    first = create(data_plane, memory["id"], T0, conversational("once"), clientToken="retry-1")
    again = create(data_plane, memory["id"], T0, conversational("once"), clientToken="retry-1")

    assert again == first
    assert (
        len(data_plane.list_events(memoryId=memory["id"], actorId=ACTOR, sessionId="s-1")["events"])
        == 1
    )
    with pytest.raises(data_plane.exceptions.ValidationException) as raised:
        create(data_plane, memory["id"], T0, conversational("twice"), clientToken="retry-1")
    assert raised.value.response["reason"] == "IdempotentParameterMismatchException"


def test_a_retry_restamped_with_a_fresh_event_timestamp_is_still_a_retry(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    first = create(data_plane, memory["id"], T0, conversational("once"), clientToken="stamp-1")
    restamped = create(
        data_plane, memory["id"], T0 + 60, conversational("once"), clientToken="stamp-1"
    )

    assert restamped == first  # the first event, its timestamp included
    listed = data_plane.list_events(memoryId=memory["id"], actorId=ACTOR, sessionId="s-1")
    assert [e["eventId"] for e in listed["events"]] == [first["eventId"]]
    with pytest.raises(data_plane.exceptions.ValidationException) as raised:
        create(
            data_plane,
            memory["id"],
            T0 + 60,
            conversational("once"),
            clientToken="stamp-1",
            metadata={"k": {"stringValue": "other"}},
        )
    assert raised.value.response["reason"] == "IdempotentParameterMismatchException"


def test_ingested_data_lands_in_a_session(data_plane: Any, memory: dict[str, Any]) -> None:
    answer = data_plane.ingest_data(
        memoryId=memory["id"],
        actorId=ACTOR,
        contentTimestamp=T0,
        source={
            "inline": {
                "payload": [conversational("imported turn"), {"json": {"content": {"a": 1}}}]
            }
        },
    )

    listed = data_plane.list_events(
        memoryId=memory["id"], actorId=ACTOR, sessionId=answer["sessionId"]
    )
    assert [e["payload"] for e in listed["events"]] == [
        [conversational("imported turn"), {"json": {"content": {"a": 1}}}]
    ]


def test_invalid_events_are_refused(data_plane: Any, memory: dict[str, Any]) -> None:
    too_many = {f"k{i}": {"stringValue": "v"} for i in range(16)}
    with pytest.raises(data_plane.exceptions.ValidationException):
        create(data_plane, memory["id"], T0, metadata=too_many)
    with pytest.raises(data_plane.exceptions.ValidationException):
        create(data_plane, memory["id"], T0, conversational("x" * 100_001))
    with pytest.raises(data_plane.exceptions.ValidationException):
        data_plane.list_events(memoryId=memory["id"], actorId="bad actor!", sessionId="s-1")
    with pytest.raises(data_plane.exceptions.ResourceNotFoundException):
        data_plane.list_events(memoryId="nosuchmemory-abcdefghij", actorId="a", sessionId="s")
