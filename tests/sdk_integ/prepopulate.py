"""The SDK's "pre-populated memory" (its TESTING.md), made through the SDK against cairn serve.

TESTING.md has the tester create, once per account, a memory with semantic, preference and
summary strategies, save one four-message conversation to it and wait for extraction; its id
is ``MEMORY_PREPOPULATED_ID``. This does exactly that, and measures how long cairn's offline
extraction takes to file records in each of the three namespaces.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

ACTOR = "integ-test-actor"
SESSION = "integ-test-session"
STRATEGIES = [
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
]
CONVERSATION = [
    ("I prefer dark mode, Python over Java, and vim over emacs", "USER"),
    ("Noted! Those are solid developer preferences.", "ASSISTANT"),
    ("I work on distributed systems at a startup in Seattle", "USER"),
    ("Interesting! Distributed systems is a great field.", "ASSISTANT"),
]
NAMESPACES = (
    f"/facts/{ACTOR}/",
    f"/preferences/{ACTOR}/",
    f"/summaries/{ACTOR}/{SESSION}/",
)


@dataclass(frozen=True)
class Prepopulated:
    memory_id: str
    seconds_to_extract: float | None  # None: some namespace stayed empty
    records: dict[str, list[str]]  # namespace -> contents filed there


def prepopulate(region: str, max_wait: float = 120.0) -> Prepopulated:
    """Create and fill the memory (the process's environment points the SDK at cairn)."""
    from bedrock_agentcore.memory import MemoryClient

    client = MemoryClient(region_name=region)
    memory = client.create_memory_and_wait(
        name="integ_test_prepopulated", strategies=STRATEGIES, event_expiry_days=90
    )
    memory_id = memory.get("memoryId") or memory["id"]
    started = time.monotonic()
    client.save_conversation(
        memory_id=memory_id, actor_id=ACTOR, session_id=SESSION, messages=CONVERSATION
    )
    records: dict[str, list[str]] = {}
    while True:
        records = {
            namespace: [
                r["content"]["text"]
                for r in client.list_memory_records(memoryId=memory_id, namespace=namespace)[
                    "memoryRecordSummaries"
                ]
            ]
            for namespace in NAMESPACES
        }
        elapsed = time.monotonic() - started
        if all(records.values()):
            return Prepopulated(memory_id, elapsed, records)
        if elapsed > max_wait:
            return Prepopulated(memory_id, None, records)
        time.sleep(1)
