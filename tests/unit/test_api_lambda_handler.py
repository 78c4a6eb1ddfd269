"""The API Lambda driven with API Gateway proxy events: in-memory store, and DynamoDB on moto."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cairn.api import Api
from cairn.api.apigateway import handle_proxy_event
from cairn.clock import FixedClock
from cairn.testing import InMemoryBackend
from functions.api import handler
from tests.conformance.backends import open_dynamodb
from tests.unit.api_harness import HEADERS, build_api

T0 = 1_767_258_000


def http_api_event(
    method: str, raw_path: str, body: Any = None, *, stage: str = "$default", query: str = ""
) -> dict[str, Any]:
    """An HTTP API (payload format 2.0) event as API Gateway delivers it."""
    text = json.dumps(body) if body is not None else None
    return {
        "version": "2.0",
        "routeKey": "ANY /{proxy+}",
        "rawPath": raw_path if stage == "$default" else f"/{stage}{raw_path}",
        "rawQueryString": query,
        "headers": {name.lower(): value for name, value in HEADERS.items()},
        "requestContext": {"http": {"method": method, "path": raw_path}, "stage": stage},
        "body": text,
        "isBase64Encoded": False,
    }


@pytest.fixture
def api() -> Api:
    clock = FixedClock()
    return build_api(InMemoryBackend(clock).stores(), clock)


@pytest.fixture
def wired(api: Api, monkeypatch: pytest.MonkeyPatch) -> Api:
    """The handler's composition root answering with this test's router."""
    monkeypatch.setattr(handler, "api", lambda: api)
    return api


def answer(response: dict[str, Any]) -> dict[str, Any]:
    assert response["isBase64Encoded"] is False
    found: dict[str, Any] = json.loads(response["body"])
    return found


def test_a_conversation_through_the_lambda_keeps_encoded_slashes(wired: Api) -> None:
    created = handler.lambda_handler(
        http_api_event("POST", "/memories/create", {"name": "viaLambda", "eventExpiryDuration": 7}),
        None,
    )
    memory_id = answer(created)["memory"]["id"]
    event = {
        "actorId": "tg:1/x",
        "sessionId": "s",
        "eventTimestamp": T0,
        "payload": [{"blob": "{}"}],
    }

    posted = handler.lambda_handler(
        http_api_event("POST", f"/memories/{memory_id}/events", event), None
    )
    listed = handler.lambda_handler(
        http_api_event(
            "POST", f"/memories/{memory_id}/actor/tg%3A1%2Fx/sessions/s", {}, stage="prod"
        ),
        None,
    )

    assert (created["statusCode"], posted["statusCode"], listed["statusCode"]) == (202, 201, 200)
    assert [e["actorId"] for e in answer(listed)["events"]] == ["tg:1/x"]
    assert listed["headers"]["Content-Type"] == "application/json"


def test_base64_bodies_and_query_strings_arrive(api: Api) -> None:
    memory_id = answer(
        handle_proxy_event(
            api,
            http_api_event("POST", "/memories/create", {"name": "b64", "eventExpiryDuration": 7}),
        )
    )["memory"]["id"]
    event = http_api_event("DELETE", f"/memories/{memory_id}/delete", query="clientToken=abc")
    event["body"], event["isBase64Encoded"] = base64.b64encode(b"").decode(), True

    deleted = handle_proxy_event(api, event)

    assert (deleted["statusCode"], answer(deleted)["status"]) == (202, "DELETING")


def test_errors_keep_their_aws_shape(api: Api) -> None:
    response = handle_proxy_event(
        api, http_api_event("GET", "/memories/missing-abcdefghij/details")
    )

    assert response["statusCode"] == 404
    assert response["headers"]["x-amzn-ErrorType"] == "ResourceNotFoundException"
    assert "message" in answer(response)


def test_a_rest_api_event_is_read_too(api: Api) -> None:
    event = {
        "resource": "/{proxy+}",
        "path": "/memories/",
        "httpMethod": "POST",
        "headers": dict(HEADERS),
        "multiValueQueryStringParameters": None,
        "requestContext": {"stage": "prod", "path": "/prod/memories/"},
        "body": "{}",
        "isBase64Encoded": False,
    }

    response = handle_proxy_event(api, event)

    assert (response["statusCode"], answer(response)) == (200, {"memories": []})


@pytest.mark.parametrize(
    "event",
    [
        {},
        {"version": "2.0"},
        {"version": "2.0", "requestContext": {"http": {}}},
        {"httpMethod": "POST", "body": "%%", "isBase64Encoded": True},
    ],
)
def test_a_malformed_event_is_a_400_not_a_crash(api: Api, event: dict[str, Any]) -> None:
    response = handle_proxy_event(api, event)

    assert response["statusCode"] == 400
    assert response["headers"]["x-amzn-ErrorType"] == "ValidationException"


@pytest.fixture
def api_on_moto(tmp_path: Path) -> Iterator[Api]:
    """The router over DynamoDB on moto for everything: records, events, the journal, memory
    configurations, client-token claims and placements (tests/pipeline/test_api_lambda.py
    adds extraction through S3 and SNS)."""
    pytest.importorskip("moto")
    clock = FixedClock()
    dynamodb = open_dynamodb(clock, tmp_path)
    yield build_api(dynamodb, clock)
    dynamodb.close()


def test_the_lambda_serves_events_and_records_from_dynamodb_on_moto(api_on_moto: Api) -> None:
    def send(method: str, path: str, body: Any = None) -> dict[str, Any]:
        response = handle_proxy_event(api_on_moto, http_api_event(method, path, body))
        assert response["statusCode"] < 300, response["body"]
        return answer(response)

    memory_id = send(
        "POST",
        "/memories/create",
        {
            "name": "onMoto",
            "eventExpiryDuration": 7,
            "memoryStrategies": [
                {
                    "semanticMemoryStrategy": {
                        "name": "facts",
                        "namespaceTemplates": ["/facts/{actorId}/"],
                    }
                }
            ],
        },
    )["memory"]["id"]
    event = {
        "actorId": "tg:1/x",
        "sessionId": "s",
        "eventTimestamp": T0,
        "payload": [{"blob": '{"a": 1}'}],
    }
    send("POST", f"/memories/{memory_id}/events", event)
    records = [
        {
            "requestIdentifier": "r",
            "namespaces": ["/facts/tg:1/x/"],
            "content": {"text": "likes tea"},
            "timestamp": T0,
        }
    ]
    created = send("POST", f"/memories/{memory_id}/memoryRecords/batchCreate", {"records": records})
    record_id = created["successfulRecords"][0]["memoryRecordId"]

    events = send("POST", f"/memories/{memory_id}/actor/tg%3A1%2Fx/sessions/s", {})["events"]
    found = send(
        "POST",
        f"/memories/{memory_id}/retrieve",
        {"namespace": "/facts/", "searchCriteria": {"searchQuery": "tea"}},
    )
    send("DELETE", f"/memories/{memory_id}/memoryRecords/{record_id}")
    gone = handle_proxy_event(
        api_on_moto, http_api_event("GET", f"/memories/{memory_id}/memoryRecord/{record_id}")
    )

    assert [e["payload"] for e in events] == [[{"blob": '{"a": 1}'}]]
    assert [r["memoryRecordId"] for r in found["memoryRecordSummaries"]] == [record_id]
    assert gone["statusCode"] == 404
