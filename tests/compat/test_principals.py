"""Principals on the API (issue 17): a real ``cairn serve --principals FILE`` process, driven by
boto3's bedrock-agentcore clients and the unmodified bedrock-agentcore SDK.

Principal ``alice`` may touch actor ``alice`` only; ``bob`` actor ``bob``; ``admin`` every actor
and the control plane. Alice works fully on her own actor, and can neither read, write, list,
delete nor infer Bob's events, sessions or records: every answer about Bob equals, status,
error code and message (the name or id swapped), the answer about ``carol``, an actor that
never had anything, or about a record id that never existed. The same rules through the router
on every backend, and the API Lambda's caller ARN on moto: ``tests/conformance/
test_api_principals.py``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cairn.api.client import use_cairn
from cairn.api.principals import token_digest
from tests.compat.conftest import boto3, point_clients_at, unique_name

memory_sdk = pytest.importorskip("bedrock_agentcore.memory")
botocore_exceptions = pytest.importorskip("botocore.exceptions")

TOKENS = {name: f"{name}-{uuid.uuid4().hex}" for name in ("alice", "bob", "admin")}


def _principals_file(path: Path) -> Path:
    path.write_text(
        f"""
[[principal]]
name = "alice"
token_sha256 = "{token_digest(TOKENS["alice"])}"
actors = ["alice"]

[[principal]]
name = "bob"
token_sha256 = "{token_digest(TOKENS["bob"])}"
actors = ["bob"]

[[principal]]
name = "admin"
token_sha256 = "{token_digest(TOKENS["admin"])}"
actors = ["*"]
access = ["read", "write", "control"]
""",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("principals")
    process = subprocess.Popen(  # noqa: S603  # our own interpreter and arguments
        [
            *(sys.executable, "-m", "cairn", "serve", "--port", "0", "--embedder", "none"),
            *("--principals", str(_principals_file(home / "principals.toml"))),
            *("--store", str(home / "served.db")),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "CAIRN_TOKEN"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        exports = dict(part.split("=", 1) for part in line.removeprefix("export ").split())
        yield exports["AWS_ENDPOINT_URL_BEDROCK_AGENTCORE"]
    finally:
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors


@pytest.fixture
def sessions(server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    point_clients_at(monkeypatch, server, tmp_path)
    return {name: use_cairn(boto3.session.Session(), token=token) for name, token in TOKENS.items()}


def _client(sessions: dict[str, Any], name: str, plane: str = "bedrock-agentcore") -> Any:
    return sessions[name].client(plane)


def _record(data: Any, memory_id: str, namespace: str, text: str) -> str:
    answer = data.batch_create_memory_records(
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


def _event(data: Any, memory_id: str, actor: str, session: str, text: str) -> str:
    created = data.create_event(
        memoryId=memory_id,
        actorId=actor,
        sessionId=session,
        eventTimestamp=datetime.now(UTC),
        payload=[{"conversational": {"content": {"text": text}, "role": "USER"}}],
    )
    event_id: str = created["event"]["eventId"]
    return event_id


@pytest.fixture
def world(sessions: dict[str, Any]) -> dict[str, Any]:
    """A memory (made by admin) where Bob has an event and a record, and Alice hers."""
    control = _client(sessions, "admin", "bedrock-agentcore-control")
    memory_id = control.create_memory(
        name=unique_name(),
        eventExpiryDuration=30,
        memoryStrategies=[
            {
                "semanticMemoryStrategy": {
                    "name": "facts",
                    "namespaceTemplates": ["/facts/{actorId}/"],
                }
            }
        ],
    )["memory"]["id"]
    bob, alice = _client(sessions, "bob"), _client(sessions, "alice")
    return {
        "memory": memory_id,
        "bob_event": _event(bob, memory_id, "bob", "s-bob", "Bob's locker code is 4471"),
        "bob_record": _record(bob, memory_id, "/facts/bob/", "Bob's locker code is 4471"),
        "alice_event": _event(alice, memory_id, "alice", "s-alice", "Alice likes tea"),
        "alice_record": _record(alice, memory_id, "/facts/alice/", "Alice likes the locker tea"),
    }


def _error(call: Any, **kwargs: Any) -> tuple[int, str, str]:
    with pytest.raises(botocore_exceptions.ClientError) as caught:
        call(**kwargs)
    response = caught.value.response
    return (
        response["ResponseMetadata"]["HTTPStatusCode"],
        response["Error"]["Code"],
        response["Error"]["Message"],
    )


def _same(foreign: tuple[int, str, str], missing: tuple[int, str, str], swap: tuple[str, str]):
    assert foreign[:2] == missing[:2]
    assert foreign[2].replace(*swap) == missing[2]


def test_alice_works_fully_on_her_own_actor(
    sessions: dict[str, Any], world: dict[str, Any]
) -> None:
    alice, memory_id = _client(sessions, "alice"), world["memory"]
    event = alice.get_event(
        memoryId=memory_id, actorId="alice", sessionId="s-alice", eventId=world["alice_event"]
    )
    assert event["event"]["payload"][0]["conversational"]["content"]["text"] == "Alice likes tea"
    listed = alice.list_events(memoryId=memory_id, actorId="alice", sessionId="s-alice")
    assert [e["eventId"] for e in listed["events"]] == [world["alice_event"]]
    sessions_of = alice.list_sessions(memoryId=memory_id, actorId="alice")["sessionSummaries"]
    assert [s["sessionId"] for s in sessions_of] == ["s-alice"]
    assert alice.list_actors(memoryId=memory_id)["actorSummaries"] == [{"actorId": "alice"}]
    record = alice.get_memory_record(memoryId=memory_id, memoryRecordId=world["alice_record"])
    assert record["memoryRecord"]["content"]["text"] == "Alice likes the locker tea"
    for prefix in (None, "/facts/", "/facts/alice/"):
        where = {} if prefix is None else {"namespace": prefix}
        found = alice.retrieve_memory_records(
            memoryId=memory_id, **where, searchCriteria={"searchQuery": "locker", "topK": 10}
        )
        assert [r["memoryRecordId"] for r in found["memoryRecordSummaries"]] == [
            world["alice_record"]
        ]
        listed_records = alice.list_memory_records(memoryId=memory_id, **where)
        assert [r["memoryRecordId"] for r in listed_records["memoryRecordSummaries"]] == [
            world["alice_record"]
        ]
    updated = alice.batch_update_memory_records(
        memoryId=memory_id,
        records=[
            {
                "memoryRecordId": world["alice_record"],
                "content": {"text": "Alice likes green tea"},
                "timestamp": datetime.now(UTC),
            }
        ],
    )
    assert updated["failedRecords"] == []
    alice.delete_memory_record(memoryId=memory_id, memoryRecordId=world["alice_record"])
    alice.delete_event(
        memoryId=memory_id, actorId="alice", sessionId="s-alice", eventId=world["alice_event"]
    )


def test_alice_cannot_touch_bobs_events_or_sessions_and_learns_nothing(
    sessions: dict[str, Any], world: dict[str, Any]
) -> None:
    alice, memory_id = _client(sessions, "alice"), world["memory"]
    event = {"sessionId": "s-bob", "eventId": world["bob_event"]}
    calls: list[tuple[Any, dict[str, Any]]] = [
        (alice.get_event, event),
        (alice.delete_event, event),
        (alice.list_events, {"sessionId": "s-bob"}),
        (alice.list_sessions, {}),
        (
            alice.create_event,
            {
                "sessionId": "s-bob",
                "eventTimestamp": datetime.now(UTC),
                "payload": [{"conversational": {"content": {"text": "hi"}, "role": "USER"}}],
            },
        ),
    ]
    for call, kwargs in calls:
        foreign = _error(call, memoryId=memory_id, actorId="bob", **kwargs)
        missing = _error(call, memoryId=memory_id, actorId="carol", **kwargs)
        assert foreign[:2] == (403, "AccessDeniedException")
        _same(foreign, missing, ("'bob'", "'carol'"))
    assert {"actorId": "bob"} not in alice.list_actors(memoryId=memory_id)["actorSummaries"]
    jobs = alice.list_memory_extraction_jobs(memoryId=memory_id, filter={"actorId": "bob"})
    assert jobs["jobs"] == []
    # Bob's event is still there.
    bob = _client(sessions, "bob")
    kept = bob.get_event(memoryId=memory_id, actorId="bob", **event)
    assert kept["event"]["eventId"] == world["bob_event"]


def test_alice_cannot_read_delete_or_find_bobs_records(
    sessions: dict[str, Any], world: dict[str, Any]
) -> None:
    alice, memory_id, bobs = _client(sessions, "alice"), world["memory"], world["bob_record"]
    never = "mem-" + uuid.uuid4().hex + "0" * 4
    swap = (bobs, never)
    for call in (alice.get_memory_record, alice.delete_memory_record):
        foreign = _error(call, memoryId=memory_id, memoryRecordId=bobs)
        assert foreign[:2] == (404, "ResourceNotFoundException")
        _same(foreign, _error(call, memoryId=memory_id, memoryRecordId=never), swap)
    deleted = alice.batch_delete_memory_records(
        memoryId=memory_id, records=[{"memoryRecordId": bobs}, {"memoryRecordId": never}]
    )
    failed = deleted["failedRecords"]
    assert [f["errorCode"] for f in failed] == [404, 404]
    assert failed[0]["errorMessage"].replace(*swap) == failed[1]["errorMessage"]
    updated = alice.batch_update_memory_records(
        memoryId=memory_id,
        records=[
            {"memoryRecordId": rid, "content": {"text": "x"}, "timestamp": datetime.now(UTC)}
            for rid in (bobs, never)
        ],
    )
    failed = updated["failedRecords"]
    assert [f["errorCode"] for f in failed] == [404, 404]
    assert failed[0]["errorMessage"].replace(*swap) == failed[1]["errorMessage"]
    for prefix in ("/facts/bob/", "/facts/carol/"):
        for field in ("namespace", "namespacePath"):
            listed = alice.list_memory_records(memoryId=memory_id, **{field: prefix})
            found = alice.retrieve_memory_records(
                memoryId=memory_id,
                **{field: prefix},
                searchCriteria={"searchQuery": "locker code", "topK": 10},
            )
            assert listed["memoryRecordSummaries"] == []
            assert found["memoryRecordSummaries"] == []
    written = alice.batch_create_memory_records(
        memoryId=memory_id,
        records=[
            {
                "requestIdentifier": f"r{i}",
                "namespaces": [namespace],
                "content": {"text": "planted"},
                "timestamp": datetime.now(UTC),
            }
            for i, namespace in enumerate(("/facts/bob/", "/facts/carol/"))
        ],
    )
    failed = written["failedRecords"]
    assert [f["errorCode"] for f in failed] == [403, 403]
    assert failed[0]["errorMessage"].replace("bob", "carol") == failed[1]["errorMessage"]
    # Bob's record is untouched, and no planted one reached his namespace.
    bob = _client(sessions, "bob")
    kept = bob.get_memory_record(memoryId=memory_id, memoryRecordId=bobs)["memoryRecord"]
    assert kept["content"]["text"] == "Bob's locker code is 4471"
    listed = bob.list_memory_records(memoryId=memory_id, namespace="/facts/bob/")
    assert [r["memoryRecordId"] for r in listed["memoryRecordSummaries"]] == [bobs]


def test_the_sdk_as_alice_deletes_and_searches_only_her_own_records(
    sessions: dict[str, Any], world: dict[str, Any]
) -> None:
    manager = memory_sdk.MemorySessionManager(
        memory_id=world["memory"], region_name="us-east-1", boto3_session=sessions["alice"]
    )
    found = manager.search_long_term_memories(query="locker", namespace_path="/facts/", top_k=10)
    assert [r["memoryRecordId"] for r in found] == [world["alice_record"]]

    deleted = manager.delete_all_long_term_memories_in_namespace("/facts/")

    assert [r["memoryRecordId"] for r in deleted["successfulRecords"]] == [world["alice_record"]]
    bob = _client(sessions, "bob")
    kept = bob.get_memory_record(memoryId=world["memory"], memoryRecordId=world["bob_record"])
    assert kept["memoryRecord"]["content"]["text"] == "Bob's locker code is 4471"


def test_the_control_plane_is_the_admins_and_an_unknown_token_is_refused(
    sessions: dict[str, Any], world: dict[str, Any], server: str
) -> None:
    alice = _client(sessions, "alice", "bedrock-agentcore-control")
    assert alice.get_memory(memoryId=world["memory"])["memory"]["id"] == world["memory"]
    for call, kwargs in (
        (alice.create_memory, {"name": unique_name(), "eventExpiryDuration": 7}),
        (alice.delete_memory, {"memoryId": world["memory"]}),
    ):
        status, code, message = _error(call, **kwargs)
        assert (status, code) == (403, "AccessDeniedException")
        assert "control access" in message
    for session in (
        use_cairn(boto3.session.Session(), token="not-a-principal"),  # noqa: S106 - a wrong token on purpose
        boto3.session.Session(),
    ):
        for plane, call, kwargs in (
            ("bedrock-agentcore", "list_actors", {"memoryId": world["memory"]}),
            ("bedrock-agentcore-control", "list_memories", {}),
        ):
            status, code, _ = _error(getattr(session.client(plane), call), **kwargs)
            assert (status, code) == (403, "AccessDeniedException")
    # Bob's memory survived Alice's DeleteMemory.
    bob = _client(sessions, "bob")
    assert bob.list_actors(memoryId=world["memory"])["actorSummaries"] == [{"actorId": "bob"}]
