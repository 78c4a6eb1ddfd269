"""Strands' AgentCoreMemorySessionManager, unmodified, against cairn serve.

A Strands agent keeps its session in AgentCore Memory: the session, the agent's state and each
message become events. An agent is never invoked (no model is called); messages are appended
through the session manager the way the agent's hooks append them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.compat.conftest import unique_name

strands = pytest.importorskip("strands")
strands_integration = pytest.importorskip(
    "bedrock_agentcore.memory.integrations.strands.session_manager"
)
config_module = pytest.importorskip("bedrock_agentcore.memory.integrations.strands.config")
Agent = strands.Agent
AgentCoreMemorySessionManager = strands_integration.AgentCoreMemorySessionManager
AgentCoreMemoryConfig = config_module.AgentCoreMemoryConfig

CONVERSATION = [
    {"role": "user", "content": [{"text": "Hi, I'm Ada. I take my tea green."}]},
    {"role": "assistant", "content": [{"text": "Nice to meet you, Ada!"}]},
]
LATER = [
    {"role": "user", "content": [{"text": "What tea do I like?"}]},
    {"role": "assistant", "content": [{"text": "Green tea."}]},
]


@pytest.fixture
def memory_id(control_plane: Any) -> str:
    created = control_plane.create_memory(name=unique_name("strands"), eventExpiryDuration=30)
    found: str = created["memory"]["id"]
    return found


def manager(memory_id: str) -> Any:
    config = AgentCoreMemoryConfig(memory_id=memory_id, session_id="chat-7", actor_id="tg:42")
    return AgentCoreMemorySessionManager(config, region_name="us-east-1")


def agent(session_manager: Any, **extra: Any) -> Any:
    return Agent(
        agent_id="concierge", session_manager=session_manager, callback_handler=None, **extra
    )


def test_a_session_is_stored_and_restored_with_messages_in_order_and_state(
    memory_id: str, data_plane: Any
) -> None:
    first_manager = manager(memory_id)
    first = agent(first_manager, messages=list(CONVERSATION), state={"tea": "green", "visits": 1})
    for message in LATER:
        first.messages.append(message)
        first_manager.append_message(message, first)
    first.state.set("visits", 2)
    first_manager.sync_agent(first)

    restored = agent(manager(memory_id))

    assert restored.messages == [*CONVERSATION, *LATER]
    assert restored.state.get("tea") == "green"
    assert restored.state.get("visits") == 2
    session_events = data_plane.list_events(
        memoryId=memory_id, actorId="tg:42", sessionId="chat-7", maxResults=100
    )
    assert len(session_events["events"]) >= len(CONVERSATION) + len(LATER) + 2
