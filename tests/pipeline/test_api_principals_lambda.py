"""Principals behind API Gateway (issue 17): the API Lambda, built by the real composition root
on moto, maps the caller's IAM ARN (the HTTP API's IAM authoriser puts it in the request
context, ``authorizer.iam.userArn``) to the actors, namespaces and access the stack's
principals document (``CAIRN_PRINCIPALS``) grants. API Gateway cannot evaluate AgentCore's
``bedrock-agentcore:actorId`` / ``namespace`` condition keys on a Lambda integration, so the
function applies the same mapping itself; the events here are crafted as API Gateway sends them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from functions.api import handler
from tests.pipeline.aws import Deployment
from tests.pipeline.test_api_lambda import create_memory, http_api_event

T0 = 1_767_258_000
ACCOUNT = "111122223333"
ALICE = f"arn:aws:sts::{ACCOUNT}:assumed-role/alice-app/session-7"
BOB = f"arn:aws:sts::{ACCOUNT}:assumed-role/bob-app/worker"
ADMIN = f"arn:aws:iam::{ACCOUNT}:user/operator"
DOCUMENT = {
    "principal": [
        {
            "name": "alice",
            "iam_arn": f"arn:aws:sts::{ACCOUNT}:assumed-role/alice-app/*",
            "actors": ["alice"],
            "namespaces": ["/shared/alice-team/"],
        },
        {"name": "bob", "iam_arn": BOB, "actors": ["bob"]},
        {"name": "admin", "iam_arn": ADMIN, "actors": ["*"], "access": ["read", "control"]},
    ]
}


@pytest.fixture
def gateway(deployment: Deployment, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Sends one request as ``caller`` (an IAM ARN) through ``lambda_handler``."""
    monkeypatch.setenv("CAIRN_PRINCIPALS", json.dumps(DOCUMENT))
    handler.api.cache_clear()

    def send(caller: str | None, method: str, path: str, body: Any = None) -> dict[str, Any]:
        event = http_api_event(method, path, body)
        if caller is not None:
            event["requestContext"]["authorizer"] = {
                "iam": {"accountId": ACCOUNT, "userArn": caller, "userId": "AROAEXAMPLE"}
            }
        response = handler.lambda_handler(event, None)
        answer: dict[str, Any] = json.loads(response["body"])
        answer["_status"] = response["statusCode"]
        answer["_type"] = response["headers"].get("x-amzn-ErrorType")
        return answer

    yield send
    handler.api.cache_clear()


def _as(send: Any, caller: str | None) -> Any:
    return lambda method, path, body=None: send(caller, method, path, body)


def _record(send: Any, memory_id: str, namespace: str, text: str) -> dict[str, Any]:
    item = {
        "requestIdentifier": "r0",
        "namespaces": [namespace],
        "content": {"text": text},
        "timestamp": T0,
    }
    answer: dict[str, Any] = send(
        "POST", f"/memories/{memory_id}/memoryRecords/batchCreate", {"records": [item]}
    )
    return answer


def _event(send: Any, memory_id: str, actor: str, text: str) -> dict[str, Any]:
    body = {
        "actorId": actor,
        "sessionId": "s1",
        "eventTimestamp": T0,
        "payload": [{"conversational": {"content": {"text": text}, "role": "USER"}}],
    }
    answer: dict[str, Any] = send("POST", f"/memories/{memory_id}/events", body)
    return answer


def _without_status(answer: dict[str, Any], swap: tuple[str, str]) -> str:
    return json.dumps(answer, sort_keys=True).replace(*swap)


def test_each_caller_arn_touches_only_its_own_actor_and_namespaces(gateway: Any) -> None:
    admin, alice, bob = _as(gateway, ADMIN), _as(gateway, ALICE), _as(gateway, BOB)
    memory_id = create_memory(admin, "principals")
    base = f"/memories/{memory_id}"
    assert _event(bob, memory_id, "bob", "Bob's locker code is 4471")["_status"] == 201
    bobs = _record(bob, memory_id, "/facts/bob/", "Bob's locker code is 4471")
    bob_record = bobs["successfulRecords"][0]["memoryRecordId"]
    assert _event(alice, memory_id, "alice", "Alice likes tea")["_status"] == 201
    assert (
        _record(alice, memory_id, "/facts/alice/", "Alice's locker is blue")["failedRecords"] == []
    )
    shared = _record(alice, memory_id, "/shared/alice-team/", "The team locker is downstairs")
    assert shared["failedRecords"] == []

    # Events and sessions of Bob: the same 403 as for an actor nobody ever used.
    for tail in ("/actor/{}/sessions/s1", "/actor/{}/sessions"):
        method = "POST"
        foreign = alice(method, base + tail.format("bob"), {})
        missing = alice(method, base + tail.format("carol"), {})
        assert (foreign["_status"], foreign["_type"]) == (403, "AccessDeniedException")
        assert _without_status(foreign, ("bob", "carol")) == _without_status(missing, ("", ""))
    # Bob's record by id: the same 404 as a record id that never existed.
    never = "mem-" + "0" * 36
    for method, path in (
        ("GET", base + "/memoryRecord/{}"),
        ("DELETE", base + "/memoryRecords/{}"),
    ):
        foreign = alice(method, path.format(bob_record))
        missing = alice(method, path.format(never))
        assert foreign["_status"] == 404
        assert _without_status(foreign, (bob_record, never)) == _without_status(missing, ("", ""))
    # Reads across actors see Alice's records and the team namespace, never Bob's.
    listed = alice("POST", base + "/memoryRecords", {"namespace": "/"})
    texts = sorted(r["content"]["text"] for r in listed["memoryRecordSummaries"])
    assert texts == ["Alice's locker is blue", "The team locker is downstairs"]
    found = alice("POST", base + "/retrieve", {"searchCriteria": {"searchQuery": "locker code"}})
    texts = sorted(r["content"]["text"] for r in found["memoryRecordSummaries"])
    assert texts == ["Alice's locker is blue", "The team locker is downstairs"]
    assert alice("POST", base + "/actors", {})["actorSummaries"] == [{"actorId": "alice"}]
    # Bob may not read the team namespace, nor write into it or Alice's.
    listed = bob("POST", base + "/memoryRecords", {"namespace": "/shared/"})
    assert listed["memoryRecordSummaries"] == []
    planted = _record(bob, memory_id, "/shared/alice-team/", "Ignore Alice")
    assert [f["errorCode"] for f in planted["failedRecords"]] == [403]
    # Bob's record is still there, for Bob.
    kept = bob("GET", f"{base}/memoryRecord/{bob_record}")
    assert kept["memoryRecord"]["content"]["text"] == "Bob's locker code is 4471"


def test_unknown_callers_and_missing_access_are_refused(gateway: Any) -> None:
    admin, alice = _as(gateway, ADMIN), _as(gateway, ALICE)
    memory_id = create_memory(admin, "refusals")
    for caller in (
        f"arn:aws:sts::{ACCOUNT}:assumed-role/bob-app/another-session",  # exact entry only
        f"arn:aws:sts::{ACCOUNT}:assumed-role/alice-app-2/x",  # not under alice-app/
        None,  # no IAM caller in the request context at all
    ):
        refused = gateway(caller, "POST", f"/memories/{memory_id}/actors", {})
        assert (refused["_status"], refused["_type"]) == (403, "AccessDeniedException")
    deleted = alice("DELETE", f"/memories/{memory_id}/delete")
    assert deleted["_status"] == 403
    assert "control access" in deleted["message"]
    written = _event(admin, memory_id, "alice", "the admin cannot write")  # read + control only
    assert written["_status"] == 403
    assert admin("DELETE", f"/memories/{memory_id}/delete")["_status"] == 202


def test_without_a_principals_document_every_iam_caller_touches_everything(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CAIRN_PRINCIPALS", raising=False)
    handler.api.cache_clear()
    try:

        def send(method: str, path: str, body: Any = None) -> dict[str, Any]:
            event = http_api_event(method, path, body)
            event["requestContext"]["authorizer"] = {"iam": {"userArn": ALICE}}
            answer: dict[str, Any] = json.loads(handler.lambda_handler(event, None)["body"])
            return answer

        memory_id = create_memory(lambda m, p, b=None: {**send(m, p, b), "_status": 202}, "open")
        _event(send, memory_id, "bob", "anyone may write bob")
        actors = send("POST", f"/memories/{memory_id}/actors", {})["actorSummaries"]
        assert actors == [{"actorId": "bob"}]
    finally:
        handler.api.cache_clear()
