"""Extraction behind the API: turns posted with the real boto3 client become records.

No BatchCreateMemoryRecords anywhere: ``cairn serve`` counts each CreateEvent toward the
memory's triggers (two messages for a built-in strategy when the extractor runs in-process, as
here), stages the rollout that fires, and
its worker thread extracts records with the offline heuristic model. ``worker.drain()`` waits
for the queued extraction (no sleeps).
"""

from __future__ import annotations

from typing import Any

import pytest

from cairn.errors import RolloutNotFoundError
from cairn.local.api import EmbeddedApi
from cairn.models import Scope

T0 = 1_767_258_000
ACTOR = "user/a1"
TURNS = (
    ("USER", "Hi there."),
    ("ASSISTANT", "Hello! How can I help?"),
    ("USER", "My office is in Porto."),
    ("ASSISTANT", "Noted."),
    ("USER", "I decided to cycle to work."),
    ("ASSISTANT", "Good for you."),
)


def post_turns(data_plane: Any, memory_id: str, session_id: str) -> None:
    for offset, (role, text) in enumerate(TURNS):
        data_plane.create_event(
            memoryId=memory_id,
            actorId=ACTOR,
            sessionId=session_id,
            eventTimestamp=T0 + offset,
            payload=[{"conversational": {"content": {"text": text}, "role": role}}],
        )


def test_turns_posted_with_boto3_are_extracted_into_records_retrieve_returns(
    data_plane: Any, memory: dict[str, Any], served_store: EmbeddedApi
) -> None:
    memory_id = memory["id"]

    post_turns(data_plane, memory_id, "s1")
    served_store.extraction.worker.drain()

    found = data_plane.retrieve_memory_records(
        memoryId=memory_id,
        namespace=f"/facts/{ACTOR}/",
        searchCriteria={"searchQuery": "where is the user's office?", "topK": 5},
    )["memoryRecordSummaries"]
    assert found[0]["content"]["text"] == "The user's office is in Porto."
    assert found[0]["namespaces"] == [f"/facts/{ACTOR}/"]
    listed = data_plane.list_memory_records(memoryId=memory_id, namespace=f"/facts/{ACTOR}/")
    assert sorted(r["content"]["text"] for r in listed["memoryRecordSummaries"]) == [
        "The user decided to cycle to work.",
        "The user's office is in Porto.",
    ]
    assert data_plane.list_memory_extraction_jobs(memoryId=memory_id)["jobs"] == []


def test_fewer_turns_than_the_trigger_extract_nothing_yet(
    data_plane: Any, memory: dict[str, Any], served_store: EmbeddedApi
) -> None:
    memory_id = memory["id"]
    for offset, (role, text) in enumerate(TURNS[:1]):  # one message: the trigger is two
        data_plane.create_event(
            memoryId=memory_id,
            actorId=ACTOR,
            sessionId="s1",
            eventTimestamp=T0 + offset,
            payload=[{"conversational": {"content": {"text": text}, "role": role}}],
        )
    served_store.extraction.worker.drain()

    listed = data_plane.list_memory_records(memoryId=memory_id, namespace="/")
    assert listed["memoryRecordSummaries"] == []
    rollouts = served_store.extraction.pipeline.rollouts
    counters = rollouts.counters(Scope(memory_id=memory_id, actor_id=ACTOR), "s1")
    assert counters is not None
    assert counters.messages == 1


def test_a_deleted_memory_leaves_no_rollout_and_no_staged_conversation(
    data_plane: Any, control_plane: Any, memory: dict[str, Any], served_store: EmbeddedApi
) -> None:
    memory_id = memory["id"]
    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    post_turns(data_plane, memory_id, "s1")
    post_turns(data_plane, memory_id, "s2")
    served_store.extraction.worker.drain()
    rollouts = served_store.extraction.pipeline.rollouts
    cited = {
        source.rollout_id
        for version in served_store.extraction.stores.records.list_records(scope).items
        for source in version.sources
        if source.rollout_id is not None
    }
    assert len(cited) == 4  # per session, the rollouts of the 2nd and 3rd exchanges file one

    control_plane.delete_memory(memoryId=memory_id)

    assert rollouts.counters(scope, "s1") is None
    for rollout_id in cited:
        with pytest.raises(RolloutNotFoundError):
            rollouts.get(scope, rollout_id)
    staged = [p.read_bytes() for p in served_store.staging_root.rglob("*") if p.is_file()]
    assert not any(b"Porto" in payload for payload in staged)


def test_one_exchange_is_extracted_at_once_when_the_extractor_runs_in_process(
    data_plane: Any, memory: dict[str, Any], served_store: EmbeddedApi
) -> None:
    for offset, (role, text) in enumerate(TURNS[2:4]):  # "My office is in Porto." + a reply
        data_plane.create_event(
            memoryId=memory["id"],
            actorId=ACTOR,
            sessionId="s1",
            eventTimestamp=T0 + offset,
            payload=[{"conversational": {"content": {"text": text}, "role": role}}],
        )
    served_store.extraction.worker.drain()

    listed = data_plane.list_memory_records(memoryId=memory["id"], namespace=f"/facts/{ACTOR}/")
    assert [r["content"]["text"] for r in listed["memoryRecordSummaries"]] == [
        "The user's office is in Porto."
    ]
