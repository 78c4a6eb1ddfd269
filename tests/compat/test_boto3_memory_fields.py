"""CreateMemory's fields cairn refuses, stores or ignores, through the real control-plane client.

A refused field is a ValidationException that names it, and nothing is created; a field cairn
stores comes back from GetMemory as given.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.compat.conftest import unique_name

STREAM = {
    "resources": [
        {
            "kinesis": {
                "dataStreamArn": "arn:aws:kinesis:us-east-1:123456789012:stream/records",
                "contentConfigurations": [{"type": "MEMORY_RECORDS", "level": "FULL_CONTENT"}],
            }
        }
    ]
}
OVERRIDE = {"appendToPrompt": "Only facts about food.", "modelId": "some-model"}
STRICTLY_CONSISTENT = {"key": "tenant", "type": "STRING", "extractionType": "STRICTLY_CONSISTENT"}


def _semantic(**extra: Any) -> dict[str, Any]:
    return {"semanticMemoryStrategy": {"name": "facts", **extra}}


REFUSED: dict[str, tuple[str, dict[str, Any]]] = {
    "encryption-key": ("encryptionKeyArn", {"encryptionKeyArn": "arn:aws:kms:us-east-1:1:key/k"}),
    "record-schema": (
        "memoryRecordSchema",
        {
            "memoryStrategies": [
                _semantic(memoryRecordSchema={"metadataSchema": [STRICTLY_CONSISTENT]})
            ],
        },
    ),
}


@pytest.mark.parametrize("case", list(REFUSED), ids=list(REFUSED))
def test_a_refused_field_is_a_validation_error_naming_it_and_creates_nothing(
    control_plane: Any, case: str
) -> None:
    field, extra = REFUSED[case]
    name = unique_name()

    with pytest.raises(control_plane.exceptions.ValidationException, match=field):
        control_plane.create_memory(name=name, eventExpiryDuration=7, **extra)

    listed = control_plane.list_memories(maxResults=100)["memories"]
    assert not [m for m in listed if m["id"].startswith(name + "-")]


def test_stream_delivery_is_created_updated_returned_and_turned_off(control_plane: Any) -> None:
    memory = control_plane.create_memory(
        name=unique_name(), eventExpiryDuration=7, streamDeliveryResources=STREAM
    )["memory"]
    assert memory["streamDeliveryResources"] == STREAM
    got = control_plane.get_memory(memoryId=memory["id"])["memory"]
    assert got["streamDeliveryResources"] == STREAM

    metadata = {"resources": [{"kinesis": {**STREAM["resources"][0]["kinesis"]}}]}
    metadata["resources"][0]["kinesis"]["contentConfigurations"] = [
        {"type": "MEMORY_RECORDS", "level": "METADATA_ONLY"}
    ]
    updated = control_plane.update_memory(memoryId=memory["id"], streamDeliveryResources=metadata)
    assert updated["memory"]["streamDeliveryResources"] == metadata
    assert control_plane.get_memory(memoryId=memory["id"])["memory"]["streamDeliveryResources"] == (
        metadata
    )

    control_plane.update_memory(memoryId=memory["id"], streamDeliveryResources={"resources": []})
    assert (
        "streamDeliveryResources" not in control_plane.get_memory(memoryId=memory["id"])["memory"]
    )


BAD_STREAMS: dict[str, tuple[str, dict[str, Any]]] = {
    "not-kinesis": (
        "dataStreamArn",
        {"kinesis": {**STREAM["resources"][0]["kinesis"], "dataStreamArn": "arn:aws:sqs:x:1:q"}},
    ),
    "two-configurations": (
        "contentConfigurations",
        {
            "kinesis": {
                "dataStreamArn": STREAM["resources"][0]["kinesis"]["dataStreamArn"],
                "contentConfigurations": [{"type": "MEMORY_RECORDS"}] * 2,
            }
        },
    ),
    "unknown-level": (
        "level",
        {
            "kinesis": {
                "dataStreamArn": STREAM["resources"][0]["kinesis"]["dataStreamArn"],
                "contentConfigurations": [{"type": "MEMORY_RECORDS", "level": "EVERYTHING"}],
            }
        },
    ),
}


@pytest.mark.parametrize("case", list(BAD_STREAMS), ids=list(BAD_STREAMS))
def test_a_bad_stream_delivery_is_a_validation_error_naming_it_and_changes_nothing(
    control_plane: Any, case: str
) -> None:
    field, resource = BAD_STREAMS[case]
    name = unique_name()
    memory = control_plane.create_memory(name=unique_name(), eventExpiryDuration=7)["memory"]
    bad = {"resources": [resource]}

    with pytest.raises(control_plane.exceptions.ValidationException, match=field):
        control_plane.create_memory(name=name, eventExpiryDuration=7, streamDeliveryResources=bad)
    with pytest.raises(control_plane.exceptions.ValidationException, match=field):
        control_plane.update_memory(memoryId=memory["id"], streamDeliveryResources=bad)

    listed = control_plane.list_memories(maxResults=100)["memories"]
    assert not [m for m in listed if m["id"].startswith(name + "-")]
    assert (
        "streamDeliveryResources" not in control_plane.get_memory(memoryId=memory["id"])["memory"]
    )


def test_stored_fields_come_back_and_ignored_ones_change_nothing(control_plane: Any) -> None:
    role = "arn:aws:iam::123456789012:role/memory"
    memory = control_plane.create_memory(
        name=unique_name(),
        eventExpiryDuration=45,
        memoryExecutionRoleArn=role,
        tags={"team": "agents"},
    )["memory"]

    got = control_plane.get_memory(memoryId=memory["id"], view="full")["memory"]

    assert got["eventExpiryDuration"] == 45
    assert got["memoryExecutionRoleArn"] == role
    assert got["id"] == memory["id"]


def test_a_prompt_override_is_created_and_returned_as_given(control_plane: Any) -> None:
    strategy = {
        "customMemoryStrategy": {
            "name": "food",
            "namespaceTemplates": ["/food/{actorId}/"],
            "configuration": {"semanticOverride": {"extraction": OVERRIDE}},
        }
    }

    memory = control_plane.create_memory(
        name=unique_name(), eventExpiryDuration=7, memoryStrategies=[strategy]
    )["memory"]

    (shown,) = control_plane.get_memory(memoryId=memory["id"])["memory"]["strategies"]
    assert shown["type"] == "CUSTOM"
    assert shown["configuration"] == {
        "type": "SEMANTIC_OVERRIDE",
        "extraction": {"customExtractionConfiguration": {"semanticExtractionOverride": OVERRIDE}},
    }


def test_a_strategy_s_record_expiry_is_kept_and_returned(control_plane: Any) -> None:
    strategy = _semantic(recordExpirySpecification={"recordExpiryDurationDays": 40})

    memory = control_plane.create_memory(
        name=unique_name(), eventExpiryDuration=7, memoryStrategies=[strategy]
    )["memory"]

    (shown,) = control_plane.get_memory(memoryId=memory["id"])["memory"]["strategies"]
    assert shown["recordExpiryDurationDays"] == 40


def test_a_record_schema_is_returned_as_given_through_boto3(control_plane: Any) -> None:
    schema = {
        "metadataSchema": [
            {"key": "channel", "type": "STRING"},
            {
                "key": "priority",
                "type": "STRING",
                "extractionType": "LLM_INFERRED",
                "extractionConfig": {
                    "llmExtractionConfig": {
                        "definition": "How urgent the request is",
                        "validation": {"stringValidation": {"allowedValues": ["high", "low"]}},
                    }
                },
            },
        ]
    }
    created = control_plane.create_memory(
        name=unique_name(),
        eventExpiryDuration=7,
        memoryStrategies=[_semantic(memoryRecordSchema=schema)],
    )["memory"]

    (strategy,) = control_plane.get_memory(memoryId=created["id"])["memory"]["strategies"]
    assert strategy["memoryRecordSchema"] == schema
