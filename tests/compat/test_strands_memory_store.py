"""The SDK's Strands memory store (``AgentCoreMemoryStore``), unmodified, against cairn serve.

The store writes through the SDK's ``AgentCoreEventSender``: one CreateEvent per batch with a
deterministic ``clientToken`` and a fresh ``eventTimestamp`` on every attempt, so a re-fired
batch must be answered as a retry (the first event), not refused as a mismatch.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.compat.conftest import unique_name

pytest.importorskip("strands.memory")
memorystore = pytest.importorskip("bedrock_agentcore.memory.integrations.strands.memorystore")
AddMessagesContext = pytest.importorskip("strands.memory").AddMessagesContext

MESSAGES = [
    {"role": "user", "content": [{"text": "I am a pilot based in Denver and fly Cessnas."}]},
    {"role": "assistant", "content": [{"text": "Flying Cessnas out of Denver - nice."}]},
]


@pytest.fixture
def memory_id(control_plane: Any) -> str:
    created = control_plane.create_memory(
        name=unique_name("store"),
        eventExpiryDuration=30,
        memoryStrategies=[
            {
                "semanticMemoryStrategy": {
                    "name": "facts",
                    "namespaceTemplates": ["/facts/{actorId}/"],
                }
            }
        ],
    )
    found: str = created["memory"]["id"]
    return found


def test_a_re_fired_batch_of_the_sdk_memory_store_is_stored_once(
    agentcore_env: str, data_plane: Any, memory_id: str
) -> None:
    store = memorystore.AgentCoreMemoryStore(
        memory_id=memory_id,
        actor_id="pilot",
        session_id="s-1",
        namespace="/facts/{actorId}/",
        writable=True,
        extraction=True,
        region_name="us-east-1",
    )
    context = AddMessagesContext(sequence_numbers=[0, 1])

    asyncio.run(store.add_messages(MESSAGES, context))
    asyncio.run(store.add_messages(MESSAGES, context))  # the same token, a later timestamp

    events = data_plane.list_events(memoryId=memory_id, actorId="pilot", sessionId="s-1")["events"]
    assert len(events) == 1
    assert [turn["conversational"]["content"]["text"] for turn in events[0]["payload"]] == [
        m["content"][0]["text"] for m in MESSAGES
    ]
