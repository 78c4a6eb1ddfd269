"""The bedrock-agentcore SDK (MemoryClient, MemorySessionManager), unmodified, against cairn serve.

Only the two endpoint environment variables point the SDK at cairn. The SDK's "wait" helpers
poll every 10 seconds; cairn answers ACTIVE (or 404 after a delete) at the first poll, so these
tests never sleep.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.compat.conftest import unique_name

memory_sdk = pytest.importorskip("bedrock_agentcore.memory")
constants = pytest.importorskip("bedrock_agentcore.memory.constants")
MemoryClient = memory_sdk.MemoryClient
MemorySessionManager = memory_sdk.MemorySessionManager
ConversationalMessage = constants.ConversationalMessage
BlobMessage = constants.BlobMessage
MessageRole = constants.MessageRole

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def client(agentcore_env: str) -> Any:
    return MemoryClient(region_name="us-east-1")


def test_memory_lifecycle_through_the_memory_client(client: Any) -> None:
    name = unique_name("sdk")
    created = client.create_memory_and_wait(
        name=name,
        strategies=[{"semanticMemoryStrategy": {"name": "facts"}}],
        event_expiry_days=30,
        max_wait=5,
    )
    again = client.create_or_get_memory(name=name, strategies=[])

    assert created["status"] == "ACTIVE"
    assert again["id"] == created["id"]
    added = client.add_summary_strategy_and_wait(
        memory_id=created["id"], name="summaries", max_wait=5
    )
    assert {s["type"] for s in added["strategies"]} == {"SEMANTIC", "SUMMARIZATION"}
    assert {s["name"] for s in client.get_memory_strategies(created["id"])} == {
        "facts",
        "summaries",
    }
    assert created["id"] in {m["id"] for m in client.list_memories()}

    client.delete_memory_and_wait(created["id"], max_wait=5)

    assert created["id"] not in {m["id"] for m in client.list_memories()}


def test_conversations_branches_and_retrieval_through_the_memory_client(client: Any) -> None:
    memory = client.create_memory_and_wait(
        name=unique_name("sdk"),
        strategies=[
            {"semanticMemoryStrategy": {"name": "facts", "namespaces": ["/facts/{actorId}/"]}}
        ],
        max_wait=5,
    )
    memory_id = memory["id"]
    first = client.create_event(
        memory_id=memory_id,
        actor_id="user-1",
        session_id="s-1",
        messages=[("I'd like green tea", "USER"), ("Noted: green tea", "ASSISTANT")],
        event_timestamp=T0,
    )
    client.create_event(
        memory_id=memory_id,
        actor_id="user-1",
        session_id="s-1",
        messages=[("Also, I'm vegetarian", "USER"), ("Got it", "ASSISTANT")],
        event_timestamp=T0 + timedelta(seconds=5),
    )
    client.fork_conversation(
        memory_id=memory_id,
        actor_id="user-1",
        session_id="s-1",
        root_event_id=first["eventId"],
        branch_name="retry",
        new_messages=[("Actually, coffee", "USER")],
    )

    last = client.get_last_k_turns(memory_id=memory_id, actor_id="user-1", session_id="s-1", k=1)
    branches = client.list_branches(memory_id=memory_id, actor_id="user-1", session_id="s-1")

    assert [m["content"]["text"] for m in last[0]] == ["Actually, coffee"]
    assert {b["name"] for b in branches} == {"main", "retry"}
    client.gmdp_client.batch_create_memory_records(
        memoryId=memory_id,
        records=[
            {
                "requestIdentifier": "r1",
                "namespaces": ["/facts/user-1/"],
                "content": {"text": "The user is vegetarian"},
                "timestamp": T0,
            }
        ],
    )
    memories = client.retrieve_memories(
        memory_id=memory_id, namespace="/facts/user-1/", query="diet", top_k=3
    )
    assert [m["content"]["text"] for m in memories] == ["The user is vegetarian"]


def test_the_session_manager_flow(agentcore_env: str, client: Any) -> None:
    memory_id = client.create_memory_and_wait(name=unique_name("sdk"), strategies=[], max_wait=5)[
        "id"
    ]
    manager = MemorySessionManager(memory_id=memory_id, region_name="us-east-1")
    session = manager.create_memory_session(actor_id="user/42", session_id="chat-1")

    turn = session.add_turns(
        messages=[
            ConversationalMessage("What's the capital of France?", MessageRole.USER),
            ConversationalMessage("Paris.", MessageRole.ASSISTANT),
            BlobMessage({"tool": "lookup", "result": ["Paris"]}),
        ]
    )
    session.add_turns(messages=[ConversationalMessage("And of Italy?", MessageRole.USER)])

    fetched = session.get_event(turn["eventId"])
    assert fetched["payload"][2] == {"blob": {"tool": "lookup", "result": ["Paris"]}}
    turns = session.get_last_k_turns(k=2)
    assert [[m["content"]["text"] for m in t] for t in turns] == [
        ["And of Italy?"],
        ["What's the capital of France?", "Paris."],
    ]
    assert [a["actorId"] for a in manager.list_actors()] == ["user/42"]
    assert [s["sessionId"] for s in session.get_actor().list_sessions()] == ["chat-1"]

    session.delete_event(turn["eventId"])
    assert len(session.list_events()) == 1


def test_long_term_records_through_the_session_manager(agentcore_env: str, client: Any) -> None:
    memory_id = client.create_memory_and_wait(
        name=unique_name("sdk"),
        strategies=[
            {"userPreferenceMemoryStrategy": {"name": "prefs", "namespaces": ["/prefs/{actorId}/"]}}
        ],
        max_wait=5,
    )["id"]
    client.gmdp_client.batch_create_memory_records(
        memoryId=memory_id,
        records=[
            {
                "requestIdentifier": f"r{i}",
                "namespaces": ["/prefs/u1/"],
                "content": {"text": text},
                "timestamp": T0,
            }
            for i, text in enumerate(["Prefers window seats", "Prefers aisle seats on short hops"])
        ],
    )
    manager = MemorySessionManager(memory_id=memory_id, region_name="us-east-1")

    found = manager.search_long_term_memories(query="seats", namespace_path="/prefs/u1/", top_k=5)
    listed = manager.list_long_term_memory_records(namespace="/prefs/")
    record = manager.get_memory_record(listed[0]["memoryRecordId"])

    assert len(found) == 2
    assert {r["memoryRecordId"] for r in listed} == {r["memoryRecordId"] for r in found}
    assert record["memoryRecordId"] == listed[0]["memoryRecordId"]
    manager.delete_memory_record(record["memoryRecordId"])
    outcome = manager.delete_all_long_term_memories_in_namespace("/prefs/u1/")
    assert len(outcome["successfulRecords"]) == 1
    assert manager.list_long_term_memory_records(namespace="/prefs/") == []


def test_the_control_plane_client_flow(agentcore_env: str) -> None:
    control = memory_sdk.MemoryControlPlaneClient(region_name="us-east-1")
    name = unique_name("sdk")

    memory = control.create_memory(
        name=name,
        strategies=[{"semanticMemoryStrategy": {"name": "facts"}}],
        wait_for_active=True,
        max_wait=5,
    )
    with_prefs = control.add_strategy(
        memory["id"],
        {"userPreferenceMemoryStrategy": {"name": "prefs"}},
        wait_for_active=True,
        max_wait=5,
    )
    prefs = next(s for s in with_prefs["strategies"] if s["name"] == "prefs")
    control.remove_strategy(memory["id"], prefs["strategyId"])

    assert [s["name"] for s in control.get_memory(memory["id"])["strategies"]] == ["facts"]
    assert memory["id"] in {m["id"] for m in control.list_memories()}
    control.delete_memory(memory["id"], wait_for_deletion=True, max_wait=5)
    assert memory["id"] not in {m["id"] for m in control.list_memories()}


def test_the_sdk_reference_conversation_is_extracted_at_once_by_the_offline_rules(
    client: Any, served_store: Any
) -> None:
    """TESTING.md's pre-populated memory: four messages saved, records in three namespaces."""
    memory = client.create_memory_and_wait(
        name=unique_name("prepop"),
        strategies=[
            {"semanticMemoryStrategy": {"name": "Semantic", "namespaces": ["/facts/{actorId}/"]}},
            {
                "userPreferenceMemoryStrategy": {
                    "name": "Preferences",
                    "namespaces": ["/preferences/{actorId}/"],
                }
            },
            {
                "summaryMemoryStrategy": {
                    "name": "Summary",
                    "namespaces": ["/summaries/{actorId}/{sessionId}/"],
                }
            },
        ],
        event_expiry_days=90,
        max_wait=5,
    )
    client.save_conversation(
        memory_id=memory["id"],
        actor_id="integ-test-actor",
        session_id="integ-test-session",
        messages=[
            ("I prefer dark mode, Python over Java, and vim over emacs", "USER"),
            ("Noted! Those are solid developer preferences.", "ASSISTANT"),
            ("I work on distributed systems at a startup in Seattle", "USER"),
            ("Interesting! Distributed systems is a great field.", "ASSISTANT"),
        ],
    )
    served_store.extraction.worker.drain()  # one event of four messages: the trigger fired

    def texts(namespace: str, query: str) -> list[str]:
        found = client.retrieve_memories(memory_id=memory["id"], namespace=namespace, query=query)
        return [r["content"]["text"] for r in found]

    assert texts("/facts/integ-test-actor/", "where does the user work") == [
        "The user works on distributed systems at a startup in Seattle."
    ]
    assert texts("/preferences/integ-test-actor/", "programming language") == [
        "The user prefers dark mode, Python over Java, and vim over emacs."
    ]
    (summary,) = texts("/summaries/integ-test-actor/integ-test-session/", "distributed systems")
    assert "distributed systems" in summary
    assert "dark mode" in summary
