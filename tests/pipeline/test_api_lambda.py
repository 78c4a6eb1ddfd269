"""The API Lambda in-process with API Gateway HTTP API events, on moto for everything.

``functions/api/handler.py`` is built by the real composition root (``wiring.build_api``):
records, events, the journal, memory configurations, client-token claims and the record
directory all in DynamoDB, events counted through the extraction pipeline (S3 payloads, SNS
FIFO -> SQS FIFO), the extraction Lambda consuming what the API released. No in-memory
stand-in: what the API answers is what the tables hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.errors import ModelRejectedError
from cairn.model_request import ModelRequest, ModelResponse
from functions.api import handler
from tests.pipeline.aws import Deployment, LambdaRuntime
from tests.pipeline.conftest import SwitchableModel
from tests.unit.api_harness import HEADERS

T0 = 1_767_258_000
ACTOR = "tg:1/x"  # a slash: percent-encoded in every path that names it
ENCODED_ACTOR = "tg%3A1%2Fx"
TURNS = (
    ("USER", "Hi there."),
    ("ASSISTANT", "Hello! How can I help?"),
    ("USER", "My office is in Porto."),
    ("ASSISTANT", "Noted."),
    ("USER", "I decided to cycle to work."),
    ("ASSISTANT", "Good for you."),
)


class Refusing:
    def complete(self, request: ModelRequest) -> ModelResponse:
        raise ModelRejectedError("the provider refused the request (a test's refusal)")


def http_api_event(
    method: str, raw_path: str, body: Any = None, *, stage: str = "$default", query: str = ""
) -> dict[str, Any]:
    """An HTTP API (payload format 2.0) proxy event for the ``ANY /{proxy+}`` route."""
    return {
        "version": "2.0",
        "routeKey": "ANY /{proxy+}",
        "rawPath": raw_path if stage == "$default" else f"/{stage}{raw_path}",
        "rawQueryString": query,
        "headers": {name.lower(): value for name, value in HEADERS.items()},
        "requestContext": {"http": {"method": method, "path": raw_path}, "stage": stage},
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }


@pytest.fixture
def api_lambda(deployment: Deployment) -> Iterator[Any]:
    """Sends one request through ``lambda_handler``; a fresh composition per test."""
    handler.api.cache_clear()

    def send(method: str, path: str, body: Any = None, **kwargs: Any) -> dict[str, Any]:
        response = handler.lambda_handler(http_api_event(method, path, body, **kwargs), None)
        answer: dict[str, Any] = json.loads(response["body"])
        answer["_status"] = response["statusCode"]
        return answer

    yield send
    handler.api.cache_clear()


def create_memory(send: Any, name: str) -> str:
    created = send(
        "POST",
        "/memories/create",
        {
            "name": name,
            "eventExpiryDuration": 30,
            "memoryStrategies": [
                {
                    "semanticMemoryStrategy": {
                        "name": "facts",
                        "namespaceTemplates": ["/facts/{actorId}/"],
                    }
                }
            ],
        },
    )
    assert created["_status"] == 202, created
    memory_id: str = created["memory"]["id"]
    return memory_id


def post_turns(send: Any, memory_id: str, session: str) -> list[str]:
    ids = []
    for offset, (role, text) in enumerate(TURNS):
        posted = send(
            "POST",
            f"/memories/{memory_id}/events",
            {
                "actorId": ACTOR,
                "sessionId": session,
                "eventTimestamp": T0 + offset,
                "payload": [{"conversational": {"content": {"text": text}, "role": role}}],
            },
            stage="prod",
        )
        assert posted["_status"] == 201, posted
        ids.append(posted["event"]["eventId"])
    return ids


def scanned(session: Any, deployment: Deployment) -> str:
    """Every item of both tables and every object of the bucket, as one text to search."""
    dynamodb, s3 = session.client("dynamodb"), session.client("s3")
    items = [
        item
        for table in (deployment.items_table, deployment.events_table)
        for item in dynamodb.scan(TableName=table)["Items"]
    ]
    objects = [
        s3.get_object(Bucket=deployment.bucket, Key=o["Key"])["Body"].read().decode()
        for o in s3.list_objects_v2(Bucket=deployment.bucket).get("Contents", [])
    ]
    return json.dumps(items, default=str) + "".join(objects)


def test_turns_posted_to_the_api_lambda_become_records_it_retrieves(
    api_lambda: Any, extraction_lambda: LambdaRuntime, session: Any, deployment: Deployment
) -> None:
    memory_id = create_memory(api_lambda, "viaGateway")

    event_ids = post_turns(api_lambda, memory_id, "s1")
    assert extraction_lambda.poll() == []  # the sixth turn fired the trigger; consumed

    found = api_lambda(
        "POST",
        f"/memories/{memory_id}/retrieve",
        {"namespace": f"/facts/{ACTOR}/", "searchCriteria": {"searchQuery": "office in Porto"}},
    )
    assert found["memoryRecordSummaries"][0]["content"]["text"] == "The user's office is in Porto."
    record_id = found["memoryRecordSummaries"][0]["memoryRecordId"]
    got = api_lambda("GET", f"/memories/{memory_id}/memoryRecord/{record_id}", stage="prod")
    assert got["memoryRecord"]["namespaces"] == [f"/facts/{ACTOR}/"]
    listed = api_lambda(
        "POST", f"/memories/{memory_id}/actor/{ENCODED_ACTOR}/sessions/s1", {}, stage="prod"
    )
    assert [e["eventId"] for e in listed["events"]] == event_ids[::-1]  # newest first
    items = session.client("dynamodb").scan(TableName=deployment.items_table)["Items"]
    kinds = {(item["pk"]["S"].split("#")[0], item["sk"]["S"].split("#")[0]) for item in items}
    assert {
        ("R", "H"),  # record heads
        ("R", "V"),  # versions
        ("R", "J"),  # the recall journal of the Retrieve
        ("R", "T"),  # the session's trigger counters
        ("R", "C"),  # the consumed rollout
        ("M", "I"),  # the memory's configuration
        ("D", "R"),  # the record directory
    } <= kinds


def test_a_retried_create_event_is_answered_from_dynamodb_not_repeated(
    api_lambda: Any, session: Any, deployment: Deployment
) -> None:
    memory_id = create_memory(api_lambda, "retried")
    body = {
        "actorId": ACTOR,
        "sessionId": "s1",
        "eventTimestamp": T0,
        "payload": [{"blob": '{"a": 1}'}],
        "clientToken": "token-1",
    }

    first = api_lambda("POST", f"/memories/{memory_id}/events", body)
    handler.api.cache_clear()  # another container: only DynamoDB remembers the token
    again = api_lambda("POST", f"/memories/{memory_id}/events", body)
    restamped = api_lambda(
        "POST", f"/memories/{memory_id}/events", {**body, "eventTimestamp": T0 + 1}
    )
    changed = api_lambda(
        "POST", f"/memories/{memory_id}/events", {**body, "payload": [{"blob": '{"a": 2}'}]}
    )

    assert again["event"] == first["event"]
    assert restamped["event"] == first["event"]  # a client re-stamps each attempt
    claims = session.client("dynamodb").scan(TableName=deployment.items_table)["Items"]
    assert any(item["pk"]["S"].startswith("I#") for item in claims)
    assert changed["_status"] == 400
    assert changed["reason"] == "IdempotentParameterMismatchException"
    listed = api_lambda("POST", f"/memories/{memory_id}/actor/{ENCODED_ACTOR}/sessions/s1", {})
    assert len(listed["events"]) == 1


def test_a_failed_job_is_listed_started_again_and_its_memory_erased_from_s3_and_dynamodb(
    api_lambda: Any,
    extraction_lambda: LambdaRuntime,
    model: SwitchableModel,
    session: Any,
    deployment: Deployment,
    clock: FixedClock,
) -> None:
    memory_id = create_memory(api_lambda, "erased")
    kept_id = create_memory(api_lambda, "kept")
    healthy, model.inner = model.inner, Refusing()
    post_turns(api_lambda, memory_id, "s1")
    post_turns(api_lambda, kept_id, "s1")
    assert extraction_lambda.poll() == []  # both acknowledged: refused for good, so failed

    (job,) = api_lambda("POST", f"/memories/{memory_id}/extractionJobs", {})["jobs"]
    assert (job["status"], job["actorId"], job["sessionId"]) == ("FAILED", ACTOR, "s1")
    assert "ModelRejectedError" in job["failureReason"]
    assert len(job["messages"]["messagesList"]) == len(TURNS)

    model.inner = healthy
    started = api_lambda(
        "POST",
        f"/memories/{memory_id}/extractionJobs/start",
        {"extractionJob": {"jobId": job["jobID"]}},
    )
    assert started == {"jobId": job["jobID"], "_status": 200}
    assert extraction_lambda.poll() == []
    assert api_lambda("POST", f"/memories/{memory_id}/extractionJobs", {})["jobs"] == []
    texts = api_lambda("POST", f"/memories/{memory_id}/memoryRecords", {"namespace": "/"})
    assert "The user's office is in Porto." in [
        r["content"]["text"] for r in texts["memoryRecordSummaries"]
    ]
    assert "Porto" in scanned(session, deployment)

    deleted = api_lambda("DELETE", f"/memories/{memory_id}/delete")
    assert deleted["_status"] == 202

    s3 = session.client("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=deployment.bucket).get("Contents", [])]
    assert len(keys) == 1  # the kept memory's failed rollout, still staged
    kept = s3.get_object(Bucket=deployment.bucket, Key=keys[0])["Body"].read()
    assert kept_id.encode() in kept
    assert _erased_memory_text(session, deployment, memory_id) == []


def _erased_memory_text(session: Any, deployment: Deployment, memory_id: str) -> list[str]:
    """What of the erased memory still holds conversation text: no item may."""
    dynamodb = session.client("dynamodb")
    found = []
    for table in (deployment.items_table, deployment.events_table):
        for item in dynamodb.scan(TableName=table)["Items"]:
            text = json.dumps(item, default=str)
            if memory_id in text and any(words in text for words in ("Porto", "cycle")):
                found.append(item["sk"]["S"])
    return found
