"""Actor ids that contain ``/``, through the real clients against ``cairn serve`` (issue 17,
classes 5 and 9): boto3's ``bedrock-agentcore`` client, the unmodified SDK's
``MemorySessionManager`` and cairn's own ``MemorySession.agentcore``. Actor ``a1`` never reads,
lists, deletes or edits actor ``a1/x``'s records, and a foreign record answers like a missing
one. The same rules on every backend: ``tests/conformance/test_api_actor_isolation.py``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from cairn.runtime import MemorySession

memory_sdk = pytest.importorskip("bedrock_agentcore.memory")
botocore_exceptions = pytest.importorskip("botocore.exceptions")


def _file(data_plane: Any, memory_id: str, namespace: str, text: str) -> str:
    answer = data_plane.batch_create_memory_records(
        memoryId=memory_id,
        records=[
            {
                "requestIdentifier": "r1",
                "namespaces": [namespace],
                "content": {"text": text},
                "timestamp": datetime.now(UTC),
            }
        ],
    )
    assert answer["failedRecords"] == [], answer
    record_id: str = answer["successfulRecords"][0]["memoryRecordId"]
    return record_id


@pytest.fixture
def two_actors(data_plane: Any, memory: dict[str, Any]) -> dict[str, str]:
    return {
        "a1": _file(data_plane, memory["id"], "/facts/a1/", "a1 keeps the deploy key in a vault"),
        "a1/x": _file(
            data_plane, memory["id"], "/facts/a1/x/", "a1/x keeps the deploy key in a drawer"
        ),
    }


def _texts(answer: dict[str, Any]) -> list[str]:
    return sorted(s["content"]["text"] for s in answer["memoryRecordSummaries"])


def test_boto3_reads_under_one_actor_never_reach_an_actor_whose_id_extends_it(
    data_plane: Any, memory: dict[str, Any], two_actors: dict[str, str]
) -> None:
    for field in ("namespace", "namespacePath"):
        listed = data_plane.list_memory_records(memoryId=memory["id"], **{field: "/facts/a1/"})
        found = data_plane.retrieve_memory_records(
            memoryId=memory["id"],
            **{field: "/facts/a1/"},
            searchCriteria={"searchQuery": "where is the deploy key", "topK": 10},
        )
        assert _texts(listed) == ["a1 keeps the deploy key in a vault"]
        assert _texts(found) == ["a1 keeps the deploy key in a vault"]


def test_the_sdk_deleting_one_actors_namespace_leaves_the_nested_actor_alone(
    agentcore_env: str, data_plane: Any, memory: dict[str, Any], two_actors: dict[str, str]
) -> None:
    manager = memory_sdk.MemorySessionManager(memory_id=memory["id"], region_name="us-east-1")

    deleted = manager.delete_all_long_term_memories_in_namespace("/facts/a1/")

    assert [r["memoryRecordId"] for r in deleted["successfulRecords"]] == [two_actors["a1"]]
    kept = data_plane.get_memory_record(memoryId=memory["id"], memoryRecordId=two_actors["a1/x"])
    assert kept["memoryRecord"]["content"]["text"] == "a1/x keeps the deploy key in a drawer"


def test_a_cairn_session_for_one_actor_neither_recalls_nor_forgets_the_nested_actor(
    data_plane: Any,
    memory: dict[str, Any],
    two_actors: dict[str, str],
) -> None:
    session = MemorySession.agentcore(
        data_plane, memory_id=memory["id"], actor_id="a1", session_id="s1"
    )
    run = session.start_run("where is the deploy key")

    assert two_actors["a1"] in run.block
    assert two_actors["a1/x"] not in run.block
    for arguments in ({"action": "forget"}, {"action": "update", "content": "in the bin"}):
        outcome = run.tools.call("memory_edit", {**arguments, "record_id": two_actors["a1/x"]})
        assert not outcome.ok
        assert "does not exist" in outcome.content["error"]
    kept = data_plane.get_memory_record(memoryId=memory["id"], memoryRecordId=two_actors["a1/x"])
    assert kept["memoryRecord"]["content"]["text"] == "a1/x keeps the deploy key in a drawer"
    session.close()


def test_a_record_in_another_namespace_answers_like_a_missing_one(
    data_plane: Any, memory: dict[str, Any], two_actors: dict[str, str]
) -> None:
    errors = botocore_exceptions.ClientError
    missing = "mem-" + "0" * 36
    answers = []
    for record_id in (two_actors["a1/x"], missing):
        with pytest.raises(errors) as raised:
            data_plane.get_memory_record(
                memoryId=memory["id"], memoryRecordId=record_id, namespace="/facts/a1/"
            )
        error = raised.value.response["Error"]
        answers.append((error["Code"], error["Message"].replace(record_id, "<id>")))
    assert answers[0] == answers[1]
    assert answers[0][0] == "ResourceNotFoundException"


def test_nothing_is_filed_under_the_reserved_actor(data_plane: Any, memory: dict[str, Any]) -> None:
    with pytest.raises(botocore_exceptions.ClientError, match="reserved"):
        data_plane.create_event(
            memoryId=memory["id"],
            actorId="cairn:shared",
            sessionId="s1",
            eventTimestamp=datetime.now(UTC),
            payload=[{"conversational": {"content": {"text": "hi"}, "role": "USER"}}],
        )
