"""The bedrock-agentcore-control client, unmodified, against cairn serve."""

from __future__ import annotations

from typing import Any

import pytest

from tests.compat.conftest import unique_name

SELF_MANAGED = {
    "customMemoryStrategy": {
        "name": "own_extractor",
        "description": "our extractor, fed through SNS",
        "namespaceTemplates": ["/own/{actorId}/{sessionId}/"],
        "configuration": {
            "selfManagedConfiguration": {
                "triggerConditions": [
                    {"messageBasedTrigger": {"messageCount": 6}},
                    {"tokenBasedTrigger": {"tokenCount": 2000}},
                    {"timeBasedTrigger": {"idleSessionTimeout": 600}},
                ],
                "invocationConfiguration": {
                    "topicArn": "arn:aws:sns:us-east-1:123456789012:extract.fifo",
                    "payloadDeliveryBucketName": "my-rollouts",
                },
                "historicalContextWindowSize": 8,
            }
        },
    }
}
STRATEGIES = [
    {"semanticMemoryStrategy": {"name": "facts", "namespaceTemplates": ["/facts/{actorId}/"]}},
    {"summaryMemoryStrategy": {"name": "summaries"}},
    {"userPreferenceMemoryStrategy": {"name": "prefs", "namespaces": ["/prefs/{actorId}/"]}},
    SELF_MANAGED,
]


def test_a_memory_is_created_with_every_supported_strategy(control_plane: Any) -> None:
    name = unique_name()

    memory = control_plane.create_memory(
        name=name, description="support bot", eventExpiryDuration=90, memoryStrategies=STRATEGIES
    )["memory"]

    assert memory["id"].startswith(name + "-")
    assert len(memory["id"]) == len(name) + 11
    assert memory["arn"].endswith(f":memory/{memory['id']}")
    assert (memory["status"], memory["eventExpiryDuration"]) == ("ACTIVE", 90)
    by_name = {s["name"]: s for s in memory["strategies"]}
    assert {n: s["type"] for n, s in by_name.items()} == {
        "facts": "SEMANTIC",
        "summaries": "SUMMARIZATION",
        "prefs": "USER_PREFERENCE",
        "own_extractor": "CUSTOM",
    }
    assert by_name["summaries"]["namespaceTemplates"] == [
        "/strategies/{memoryStrategyId}/actors/{actorId}/sessions/{sessionId}/"
    ]
    assert by_name["prefs"]["namespaceTemplates"] == ["/prefs/{actorId}/"]
    own = by_name["own_extractor"]["configuration"]
    assert own["type"] == "SELF_MANAGED"
    assert own["selfManagedConfiguration"] == {
        "triggerConditions": [
            {"messageBasedTrigger": {"messageCount": 6}},
            {"tokenBasedTrigger": {"tokenCount": 2000}},
            {"timeBasedTrigger": {"idleSessionTimeout": 600}},
        ],
        "invocationConfiguration": {
            "topicArn": "arn:aws:sns:us-east-1:123456789012:extract.fifo",
            "payloadDeliveryBucketName": "my-rollouts",
        },
        "historicalContextWindowSize": 8,
    }
    fetched = control_plane.get_memory(memoryId=memory["id"])["memory"]
    assert fetched["strategies"] == memory["strategies"]
    assert fetched["createdAt"] == memory["createdAt"]


def test_the_memory_created_waiter_succeeds_at_once(control_plane: Any) -> None:
    memory_id = control_plane.create_memory(name=unique_name(), eventExpiryDuration=7)["memory"][
        "id"
    ]

    control_plane.get_waiter("memory_created").wait(
        memoryId=memory_id, WaiterConfig={"Delay": 1, "MaxAttempts": 1}
    )


def test_memories_are_listed_across_pages(control_plane: Any) -> None:
    created = {
        control_plane.create_memory(name=unique_name(), eventExpiryDuration=7)["memory"]["id"]
        for _ in range(3)
    }

    pages = control_plane.get_paginator("list_memories").paginate(PaginationConfig={"PageSize": 2})
    listed = [m["id"] for page in pages for m in page["memories"]]

    assert created <= set(listed)
    assert listed == sorted(listed)


def test_a_taken_name_is_a_validation_error_that_says_already_exists(control_plane: Any) -> None:
    name = unique_name()
    control_plane.create_memory(name=name, eventExpiryDuration=7)

    with pytest.raises(control_plane.exceptions.ValidationException) as raised:
        control_plane.create_memory(name=name, eventExpiryDuration=7)

    assert "already exists" in str(raised.value)
    assert raised.value.response["reason"] == "ResourceConflict"


def test_create_is_idempotent_on_its_client_token(control_plane: Any) -> None:
    name = unique_name()
    first = control_plane.create_memory(name=name, eventExpiryDuration=7, clientToken="tok-1")
    again = control_plane.create_memory(name=name, eventExpiryDuration=7, clientToken="tok-1")

    assert again["memory"]["id"] == first["memory"]["id"]
    with pytest.raises(control_plane.exceptions.ValidationException) as raised:
        control_plane.create_memory(name=name, eventExpiryDuration=8, clientToken="tok-1")
    assert raised.value.response["reason"] == "IdempotentParameterMismatchException"


def test_update_adds_modifies_and_deletes_strategies(control_plane: Any) -> None:
    memory = control_plane.create_memory(
        name=unique_name(), eventExpiryDuration=7, memoryStrategies=[STRATEGIES[0], SELF_MANAGED]
    )["memory"]
    ids = {s["name"]: s["strategyId"] for s in memory["strategies"]}

    updated = control_plane.update_memory(
        memoryId=memory["id"],
        description="now with preferences",
        eventExpiryDuration=30,
        memoryStrategies={
            "addMemoryStrategies": [STRATEGIES[2]],
            "modifyMemoryStrategies": [
                {
                    "memoryStrategyId": ids["own_extractor"],
                    "configuration": {
                        "selfManagedConfiguration": {
                            "triggerConditions": [{"messageBasedTrigger": {"messageCount": 2}}],
                            "historicalContextWindowSize": 0,
                        }
                    },
                }
            ],
            "deleteMemoryStrategies": [{"memoryStrategyId": ids["facts"]}],
        },
        addIndexedKeys=[{"key": "priority", "type": "STRING"}],
    )["memory"]

    assert (updated["description"], updated["eventExpiryDuration"]) == ("now with preferences", 30)
    by_name = {s["name"]: s for s in updated["strategies"]}
    assert set(by_name) == {"own_extractor", "prefs"}
    own = by_name["own_extractor"]["configuration"]["selfManagedConfiguration"]
    assert own["triggerConditions"] == [{"messageBasedTrigger": {"messageCount": 2}}]
    assert own["historicalContextWindowSize"] == 0
    assert own["invocationConfiguration"]["payloadDeliveryBucketName"] == "my-rollouts"
    assert updated["indexedKeys"] == [{"key": "priority", "type": "STRING"}]
    assert control_plane.get_memory(memoryId=memory["id"])["memory"] == updated


@pytest.mark.parametrize(
    "strategy",
    [
        {
            "customMemoryStrategy": {
                "name": "bad",
                "configuration": {
                    "selfManagedConfiguration": {
                        "triggerConditions": [{"messageBasedTrigger": {"messageCount": 51}}],
                        "invocationConfiguration": {
                            "topicArn": "arn:aws:sns:us-east-1:1:t",
                            "payloadDeliveryBucketName": "bucket",
                        },
                    }
                },
            }
        },
        {
            "customMemoryStrategy": {
                "name": "bad",
                "configuration": {
                    "selfManagedConfiguration": {
                        "triggerConditions": [{"tokenBasedTrigger": {"tokenCount": 500_001}}],
                        "invocationConfiguration": {
                            "topicArn": "arn:aws:sns:us-east-1:1:t",
                            "payloadDeliveryBucketName": "bucket",
                        },
                    }
                },
            }
        },
        {
            "customMemoryStrategy": {
                "name": "bad",
                "configuration": {
                    "selfManagedConfiguration": {
                        "triggerConditions": [{"timeBasedTrigger": {"idleSessionTimeout": 3001}}],
                        "invocationConfiguration": {
                            "topicArn": "arn:aws:sns:us-east-1:1:t",
                            "payloadDeliveryBucketName": "bucket",
                        },
                        "historicalContextWindowSize": 51,
                    }
                },
            }
        },
        {"semanticMemoryStrategy": {"name": "bad", "namespaceTemplates": ["/facts/{userId}/"]}},
        {"episodicMemoryStrategy": {"name": "episodes"}},
        {
            "episodicMemoryStrategy": {
                "name": "episodes",
                "namespaceTemplates": ["/episodes/{actorId}/{sessionId}/"],
                "reflectionConfiguration": {"namespaceTemplates": ["/reflections/{actorId}/"]},
            }
        },
        {
            "episodicMemoryStrategy": {
                "name": "episodes",
                "reflectionConfiguration": {"namespaceTemplates": ["/strategies/"]},
            }
        },
        {"semanticMemoryStrategy": {"name": "bad-name"}},
    ],
    ids=[
        "messages>50",
        "tokens>500000",
        "idle>3000",
        "unknown-variable",
        "episodic-without-reflections",
        "reflections-not-under-episodes",
        "reflections-without-actor",
        "name-pattern",
    ],
)
def test_out_of_range_strategies_are_refused_and_nothing_is_created(
    control_plane: Any, strategy: dict[str, Any]
) -> None:
    name = unique_name()

    with pytest.raises(control_plane.exceptions.ValidationException):
        control_plane.create_memory(name=name, eventExpiryDuration=7, memoryStrategies=[strategy])

    listed = control_plane.list_memories(maxResults=100)["memories"]
    assert not [m for m in listed if m["id"].startswith(name + "-")]


def test_a_deleted_memory_is_gone(control_plane: Any) -> None:
    memory_id = control_plane.create_memory(name=unique_name(), eventExpiryDuration=7)["memory"][
        "id"
    ]

    answer = control_plane.delete_memory(memoryId=memory_id)

    assert (answer["memoryId"], answer["status"]) == (memory_id, "DELETING")
    with pytest.raises(control_plane.exceptions.ResourceNotFoundException):
        control_plane.get_memory(memoryId=memory_id)
