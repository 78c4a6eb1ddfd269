"""Data-plane fields cairn accepts with a difference, through the real boto3 client: a record
never moves namespace on update, ``sourceNamespaces`` is ignored, ``extractionConfig`` is
validated, and a memory's declared ``namespaceKeys`` may appear in its templates."""

from __future__ import annotations

from typing import Any

import pytest

from tests.compat.conftest import unique_name
from tests.compat.test_boto3_records import T0, batch_create


def test_an_update_to_another_namespace_fails_that_record_and_moves_nothing(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    ids = batch_create(data_plane, memory["id"])

    answer = data_plane.batch_update_memory_records(
        memoryId=memory["id"],
        records=[
            {
                "memoryRecordId": ids["tea"],
                "timestamp": T0 + 60,
                "content": {"text": "The user drinks coffee now"},
                "namespaces": ["/facts/user/a2/"],
            },
            {
                "memoryRecordId": ids["dog"],
                "timestamp": T0 + 60,
                "content": {"text": "The user has two dogs"},
                "sourceNamespaces": ["/somewhere/else/"],
            },
        ],
    )

    assert [r["memoryRecordId"] for r in answer["successfulRecords"]] == [ids["dog"]]
    (failed,) = answer["failedRecords"]
    assert (failed["memoryRecordId"], failed["errorCode"]) == (ids["tea"], 400)
    tea = data_plane.get_memory_record(memoryId=memory["id"], memoryRecordId=ids["tea"])
    assert tea["memoryRecord"]["namespaces"] == ["/facts/user/a1/"]
    assert tea["memoryRecord"]["content"]["text"] == "The user drinks green tea every morning"
    dog = data_plane.get_memory_record(memoryId=memory["id"], memoryRecordId=ids["dog"])
    assert dog["memoryRecord"]["namespaces"] == ["/facts/user/a1/"]  # sourceNamespaces ignored
    assert dog["memoryRecord"]["content"]["text"] == "The user has two dogs"


def test_extraction_config_is_validated_and_the_event_stored(
    data_plane: Any, memory: dict[str, Any]
) -> None:
    def create(variables: dict[str, str]) -> dict[str, Any]:
        found: dict[str, Any] = data_plane.create_event(
            memoryId=memory["id"],
            actorId="a1",
            sessionId="s1",
            eventTimestamp=T0,
            payload=[{"conversational": {"role": "USER", "content": {"text": "hello"}}}],
            extractionConfig={"namespaceVariables": variables},
        )["event"]
        return found

    event = create({"team": "core"})
    too_many = {f"k{i}": "v" for i in range(6)}  # the model's limit is 5

    got = data_plane.get_event(
        memoryId=memory["id"], actorId="a1", sessionId="s1", eventId=event["eventId"]
    )
    assert got["event"]["payload"] == event["payload"]
    with pytest.raises(data_plane.exceptions.ValidationException):
        create(too_many)


def test_declared_namespace_keys_may_appear_in_templates(control_plane: Any) -> None:
    template = "/tenants/{tenant}/{actorId}/"
    strategy = {"semanticMemoryStrategy": {"name": "facts", "namespaceTemplates": [template]}}

    created = control_plane.create_memory(
        name=unique_name(),
        eventExpiryDuration=7,
        namespaceKeys=[{"key": "tenant"}],
        memoryStrategies=[strategy],
    )["memory"]
    with pytest.raises(control_plane.exceptions.ValidationException, match="tenant"):
        control_plane.create_memory(
            name=unique_name(), eventExpiryDuration=7, memoryStrategies=[strategy]
        )

    got = control_plane.get_memory(memoryId=created["id"])["memory"]
    assert got["strategies"][0]["namespaceTemplates"] == [template]
