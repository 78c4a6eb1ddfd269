"""Raw-path routing, the service-model validator and the SigV4 / token gate."""

from __future__ import annotations

import pytest

from cairn.api.auth import authorize
from cairn.api.errors import ApiError
from cairn.api.routes import build_routes, match_route
from cairn.api.shapes import load_service

ROUTES = build_routes()
DATA = load_service("bedrock-agentcore")
CONTROL = load_service("bedrock-agentcore-control")


def test_labels_are_decoded_after_splitting_so_slashes_survive() -> None:
    found = match_route(
        ROUTES, "GET", "/memories/m-abcdefghij/actor/user%2Fa1%3Atg/sessions/s1/events/17%23ab"
    )

    assert found.operation.name == "GetEvent"
    assert found.labels == {
        "memoryId": "m-abcdefghij",
        "actorId": "user/a1:tg",
        "sessionId": "s1",
        "eventId": "17#ab",
    }


@pytest.mark.parametrize(
    ("method", "path", "operation"),
    [
        ("POST", "/memories/create", "CreateMemory"),
        ("POST", "/memories/", "ListMemories"),
        ("GET", "/memories/m-abcdefghij/details", "GetMemory"),
        ("PUT", "/memories/m-abcdefghij/update", "UpdateMemory"),
        ("DELETE", "/memories/m-abcdefghij/delete", "DeleteMemory"),
        ("POST", "/memories/m-abcdefghij/events", "CreateEvent"),
        ("POST", "/memories/m-abcdefghij/actors", "ListActors"),
        ("POST", "/memories/m-abcdefghij/actor/a/sessions", "ListSessions"),
        ("POST", "/memories/m-abcdefghij/actor/a/sessions/s", "ListEvents"),
        ("DELETE", "/memories/m-abcdefghij/actor/a/sessions/s/events/1%23a", "DeleteEvent"),
        ("POST", "/memories/m-abcdefghij/retrieve", "RetrieveMemoryRecords"),
        ("POST", "/memories/m-abcdefghij/memoryRecords", "ListMemoryRecords"),
        ("GET", "/memories/m-abcdefghij/memoryRecord/mem-1", "GetMemoryRecord"),
        ("DELETE", "/memories/m-abcdefghij/memoryRecords/mem-1", "DeleteMemoryRecord"),
        ("POST", "/memories/m-abcdefghij/memoryRecords/batchCreate", "BatchCreateMemoryRecords"),
        ("POST", "/memories/m-abcdefghij/memoryRecords/batchUpdate", "BatchUpdateMemoryRecords"),
        ("POST", "/memories/m-abcdefghij/memoryRecords/batchDelete", "BatchDeleteMemoryRecords"),
        ("POST", "/memories/m-abcdefghij/extractionJobs/start", "StartMemoryExtractionJob"),
        ("POST", "/memories/m-abcdefghij/extractionJobs", "ListMemoryExtractionJobs"),
        ("POST", "/memories/m-abcdefghij/ingest", "IngestData"),
    ],
)
def test_every_operation_has_its_route(method: str, path: str, operation: str) -> None:
    assert match_route(ROUTES, method, path).operation.name == operation


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/memories/create"),
        ("POST", "/memories/m-abcdefghij/actor/user/a1/sessions"),  # an undecoded slash
        ("POST", "/nothing"),
        ("PATCH", "/memories/"),
    ],
)
def test_unknown_routes_are_unknown_operations(method: str, path: str) -> None:
    with pytest.raises(ApiError) as raised:
        match_route(ROUTES, method, path)
    assert (raised.value.status, raised.value.error_type) == (404, "UnknownOperationException")


@pytest.mark.parametrize("segment", ["%ff%fe", ""])
def test_undecodable_or_empty_labels_are_validation_errors(segment: str) -> None:
    with pytest.raises(ApiError) as raised:
        match_route(ROUTES, "POST", f"/memories/m-abcdefghij/actor/{segment}/sessions")
    assert (raised.value.status, raised.value.error_type) == (400, "ValidationException")


def test_the_validator_enforces_what_botocore_does_not() -> None:
    problems = DATA.validate(
        "RetrieveMemoryRecordsInput",
        {
            "memoryId": "bad id",
            "namespace": "/ok/",
            "searchCriteria": {"searchQuery": "q", "topK": 101},
            "maxResults": 0,
            "unknownFutureMember": {"is": "ignored"},
        },
    )

    assert {p.path for p in problems} == {"memoryId", "searchCriteria.topK", "maxResults"}


def test_unions_need_exactly_one_member() -> None:
    body = {"memoryId": "m-abcdefghij", "actorId": "a", "eventTimestamp": 1, "payload": [{}]}
    two = {"conversational": {"content": {"text": "x"}, "role": "USER"}, "blob": "y"}

    assert [p.path for p in DATA.validate("CreateEventInput", body)] == ["payload[0]"]
    assert [p.path for p in DATA.validate("CreateEventInput", {**body, "payload": [two]})] == [
        "payload[0]"
    ]


@pytest.mark.parametrize("stamp", [float("nan"), float("inf"), 1e13, -1e12, True, "2026-01-01"])
def test_timestamps_are_finite_epoch_seconds_within_datetime_range(stamp: object) -> None:
    body = {"memoryId": "m-abcdefghij", "actorId": "a", "eventTimestamp": stamp, "payload": []}

    assert [p.path for p in DATA.validate("CreateEventInput", body)] == ["eventTimestamp"]


def test_enums_and_nested_limits_of_the_control_plane_are_enforced() -> None:
    strategy = {
        "customMemoryStrategy": {
            "name": "own",
            "configuration": {
                "selfManagedConfiguration": {
                    "triggerConditions": [{"messageBasedTrigger": {"messageCount": 0}}],
                    "invocationConfiguration": {
                        "topicArn": "not an arn",
                        "payloadDeliveryBucketName": "b",
                    },
                    "historicalContextWindowSize": 51,
                }
            },
        }
    }
    body = {"name": "m", "eventExpiryDuration": 2, "memoryStrategies": [strategy]}

    paths = {p.path.rsplit(".", 1)[-1] for p in CONTROL.validate("CreateMemoryInput", body)}

    assert paths == {
        "eventExpiryDuration",
        "messageCount",
        "topicArn",
        "payloadDeliveryBucketName",
        "historicalContextWindowSize",
    }


SIGNED = {
    "authorization": (
        "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock-agentcore/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=" + "a" * 64
    ),
    "x-amz-date": "20260101T120000Z",
}


def test_any_well_formed_signature_is_let_in() -> None:
    authorize(SIGNED, None)


@pytest.mark.parametrize(
    ("headers", "error_type"),
    [
        ({}, "MissingAuthenticationTokenException"),
        ({**SIGNED, "authorization": "Basic dXNlcjpwYXNz"}, "IncompleteSignatureException"),
        ({**SIGNED, "x-amz-date": "20251231T120000Z"}, "IncompleteSignatureException"),
        (
            {**SIGNED, "authorization": SIGNED["authorization"].replace("host;", "")},
            "IncompleteSignatureException",
        ),
        (
            {**SIGNED, "authorization": SIGNED["authorization"].replace("a" * 64, "z" * 64)},
            "IncompleteSignatureException",
        ),
    ],
)
def test_malformed_or_missing_signatures_are_refused_like_aws(
    headers: dict[str, str], error_type: str
) -> None:
    with pytest.raises(ApiError) as raised:
        authorize(headers, None)
    assert (raised.value.status, raised.value.error_type) == (403, error_type)


def test_a_token_is_required_when_set_in_a_header_or_as_bearer() -> None:
    authorize({**SIGNED, "x-cairn-token": "s3cret"}, "s3cret")
    authorize({"authorization": "Bearer s3cret"}, "s3cret")
    for headers in (SIGNED, {**SIGNED, "x-cairn-token": "wrong"}, {"authorization": "Bearer no"}):
        with pytest.raises(ApiError) as raised:
            authorize(headers, "s3cret")
        assert raised.value.error_type == "AccessDeniedException"
