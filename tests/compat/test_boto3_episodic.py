"""The episodic strategy through the real boto3 clients and the SDK's MemoryClient against
``cairn serve``: created, returned and modified exactly as botocore models it; turns posted
with CreateEvent become episodes per session and a reflection across them (the offline
heuristic model, in the server's worker), read back with ListMemoryRecords and
RetrieveMemoryRecords."""

from __future__ import annotations

from typing import Any

import pytest

from cairn.local.api import EmbeddedApi
from tests.compat.conftest import unique_name

ACTOR = "traveller-1"
EPISODES = "/strategies/{memoryStrategyId}/actors/{actorId}/sessions/{sessionId}/"
REFLECTIONS = "/strategies/{memoryStrategyId}/actors/{actorId}/"
T0 = 1_767_258_000
SESSIONS = {
    "trip-1": (
        ("USER", "I live in Lisbon. Can you find a sushi place near the river for Friday?"),
        ("ASSISTANT", "Sushi Cais on the waterfront takes bookings for Friday."),
    ),
    "trip-2": (
        ("USER", "My sister Ana is visiting. Find a sushi place that takes groups of six?"),
        ("ASSISTANT", "Umai in Chiado seats groups of up to eight."),
    ),
}


def _episodic(**reflection: Any) -> dict[str, Any]:
    return {
        "episodicMemoryStrategy": {
            "name": "journeys",
            "description": "what happened on each trip",
            "namespaceTemplates": [EPISODES],
            "reflectionConfiguration": reflection or {"namespaceTemplates": [REFLECTIONS]},
        }
    }


def test_an_episodic_strategy_is_created_returned_and_modified_as_botocore_models_it(
    control_plane: Any,
) -> None:
    created = control_plane.create_memory(
        name=unique_name(), eventExpiryDuration=30, memoryStrategies=[_episodic()]
    )["memory"]
    (strategy,) = control_plane.get_memory(memoryId=created["id"])["memory"]["strategies"]

    assert strategy["type"] == "EPISODIC"
    assert strategy["namespaceTemplates"] == [EPISODES]
    assert strategy["description"] == "what happened on each trip"
    assert strategy["configuration"] == {
        "reflection": {
            "episodicReflectionConfiguration": {
                "namespaces": [REFLECTIONS],
                "namespaceTemplates": [REFLECTIONS],
            }
        }
    }
    flatter = "/strategies/{memoryStrategyId}/actors/{actorId}/sessions/{sessionId}/"
    control_plane.update_memory(
        memoryId=created["id"],
        memoryStrategies={
            "modifyMemoryStrategies": [
                {
                    "memoryStrategyId": strategy["strategyId"],
                    "configuration": {
                        "reflection": {
                            "episodicReflectionConfiguration": {"namespaceTemplates": [flatter]}
                        }
                    },
                }
            ]
        },
    )
    (modified,) = control_plane.get_memory(memoryId=created["id"])["memory"]["strategies"]
    reflection = modified["configuration"]["reflection"]["episodicReflectionConfiguration"]
    assert reflection["namespaceTemplates"] == [flatter]

    with pytest.raises(control_plane.exceptions.ValidationException, match="less nested"):
        control_plane.update_memory(
            memoryId=created["id"],
            memoryStrategies={
                "modifyMemoryStrategies": [
                    {
                        "memoryStrategyId": strategy["strategyId"],
                        "namespaceTemplates": ["/elsewhere/{actorId}/"],
                    }
                ]
            },
        )
    unchanged = control_plane.get_memory(memoryId=created["id"])["memory"]["strategies"]
    assert unchanged == [modified]


def test_turns_posted_with_boto3_become_episodes_and_a_reflection_read_back_with_boto3(
    control_plane: Any, data_plane: Any, served_store: EmbeddedApi, agentcore_env: str
) -> None:
    memory = control_plane.create_memory(
        name=unique_name(), eventExpiryDuration=30, memoryStrategies=[_episodic()]
    )["memory"]
    (strategy,) = memory["strategies"]
    sid = strategy["strategyId"]
    for offset, (session, turns) in enumerate(SESSIONS.items()):
        for index, (role, text) in enumerate(turns):
            data_plane.create_event(
                memoryId=memory["id"],
                actorId=ACTOR,
                sessionId=session,
                eventTimestamp=T0 + 60 * offset + index,
                payload=[{"conversational": {"content": {"text": text}, "role": role}}],
            )
        served_store.extraction.worker.drain()

    listed = data_plane.list_memory_records(
        memoryId=memory["id"], namespace=f"/strategies/{sid}/actors/{ACTOR}/"
    )["memoryRecordSummaries"]
    by_namespace = {r["namespaces"][0]: r for r in listed}
    episode = by_namespace[f"/strategies/{sid}/actors/{ACTOR}/sessions/trip-1/"]
    assert episode["memoryStrategyId"] == sid
    assert episode["content"]["text"].startswith(
        "Situation: The user lives in Lisbon. Intent: The user asked: Can you find a sushi "
        "place near the river for Friday?"
    )
    assert f"/strategies/{sid}/actors/{ACTOR}/sessions/trip-2/" in by_namespace
    reflection = by_namespace[f"/strategies/{sid}/actors/{ACTOR}/"]
    assert reflection["content"]["text"].startswith("Across 2 episodes the user returned to:")
    assert "sushi (2)" in reflection["content"]["text"]

    found = data_plane.retrieve_memory_records(
        memoryId=memory["id"],
        namespacePath=f"/strategies/{sid}/actors/{ACTOR}/",
        searchCriteria={"searchQuery": "what does the user keep coming back to?", "topK": 5},
    )["memoryRecordSummaries"]
    assert reflection["memoryRecordId"] in {r["memoryRecordId"] for r in found}
    record = data_plane.get_memory_record(
        memoryId=memory["id"], memoryRecordId=reflection["memoryRecordId"]
    )["memoryRecord"]
    assert record["content"] == reflection["content"]
    memory_sdk = pytest.importorskip("bedrock_agentcore.memory")
    through_sdk = memory_sdk.MemoryClient(region_name="us-east-1").retrieve_memories(
        memory_id=memory["id"],
        namespace=f"/strategies/{sid}/actors/{ACTOR}/sessions/trip-2/",
        query="sushi for a group",
    )
    assert [r["content"]["text"] for r in through_sdk] == [
        by_namespace[f"/strategies/{sid}/actors/{ACTOR}/sessions/trip-2/"]["content"]["text"]
    ]


def test_the_sdk_memory_client_adds_an_episodic_strategy(agentcore_env: str) -> None:
    memory_sdk = pytest.importorskip("bedrock_agentcore.memory")
    client = memory_sdk.MemoryClient(region_name="us-east-1")
    memory = client.create_memory_and_wait(
        name=unique_name("sdk"), strategies=[], event_expiry_days=30, max_wait=5
    )

    added = client.add_episodic_strategy_and_wait(
        memory_id=memory["id"],
        name="journeys",
        reflection_namespace_templates=["/journeys/{actorId}/"],
        namespace_templates=["/journeys/{actorId}/{sessionId}/"],
        max_wait=5,
    )

    (strategy,) = added["strategies"]
    assert (strategy["type"], strategy["namespaceTemplates"]) == (
        "EPISODIC",
        ["/journeys/{actorId}/{sessionId}/"],
    )
    with pytest.raises(Exception, match="reflection_namespace_templates"):
        client.add_episodic_strategy(memory_id=memory["id"], name="no_reflections")
    custom = client.add_custom_episodic_strategy_and_wait(
        memory_id=memory["id"],
        name="trips",
        extraction_config={"prompt": "Tell trips only.", "modelId": "m1"},
        consolidation_config={"prompt": "Keep trips apart.", "modelId": "m2"},
        reflection_config={
            "prompt": "Reflect on travel.",
            "modelId": "m3",
            "namespaceTemplates": ["/trips/{actorId}/"],
        },
        namespace_templates=["/trips/{actorId}/sessions/{sessionId}/"],
        max_wait=5,
    )
    (trips,) = [s for s in custom["strategies"] if s["name"] == "trips"]
    assert (trips["type"], trips["configuration"]["type"]) == ("CUSTOM", "EPISODIC_OVERRIDE")
    override = trips["configuration"]["reflection"]["customReflectionConfiguration"]
    assert override["episodicReflectionOverride"]["namespaceTemplates"] == ["/trips/{actorId}/"]
