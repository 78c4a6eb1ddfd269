"""CreateEvent through the API Lambda on moto while DynamoDB's answers are lost.

The composition root's own clients carry a botocore ``after-call`` hook: the real request
commits on moto, then the answer is replaced by a read timeout. Whatever is lost, the same
request with the same ``clientToken`` yields one event (issue 14, item 1).
"""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

from tests.pipeline.aws import Deployment
from tests.pipeline.test_api_lambda import ACTOR, ENCODED_ACTOR, T0, api_lambda, create_memory

__all__ = ["api_lambda"]  # the fixture, shared with test_api_lambda

OPERATIONS = ("TransactWriteItems", "PutItem")


class LostAnswers:
    """Loses the answers of the next ``count`` calls of ``operation`` once armed."""

    def __init__(self, session: Any) -> None:
        self.operation = ""
        self.left = 0
        self.lost: list[str] = []
        for operation in OPERATIONS:
            session.events.register(f"after-call.dynamodb.{operation}", self._hook)

    def arm(self, operation: str, count: int = 1) -> None:
        self.operation, self.left = operation, count

    def _hook(self, model: Any, **_: Any) -> None:
        if self.left and model.name == self.operation:
            self.left -= 1
            self.lost.append(model.name)
            raise ReadTimeoutError(endpoint_url="https://dynamodb")


@pytest.fixture
def lost(session: Any, deployment: Deployment) -> LostAnswers:
    return LostAnswers(session)


def body(token: str) -> dict[str, Any]:
    return {
        "actorId": ACTOR,
        "sessionId": "s1",
        "eventTimestamp": T0,
        "payload": [{"conversational": {"content": {"text": "I live in Porto."}, "role": "USER"}}],
        "clientToken": token,
    }


@pytest.mark.parametrize(
    "operation",
    ["TransactWriteItems", "PutItem"],
    ids=["event-append-answer-lost", "token-claim-answer-lost"],
)
@pytest.mark.fault("event-append", "answer-lost", "dynamodb")
def test_a_create_event_whose_answer_is_lost_is_one_event_however_often_it_is_retried(
    api_lambda: Any, lost: LostAnswers, operation: str
) -> None:
    memory_id = create_memory(api_lambda, "lostAnswers")
    lost.arm(operation)

    first = api_lambda("POST", f"/memories/{memory_id}/events", body("token-1"))
    again = api_lambda("POST", f"/memories/{memory_id}/events", body("token-1"))

    assert lost.lost == [operation]  # the fault fired on the request that was answered
    assert first["_status"] == 201, first
    assert again["_status"] == 201, again
    assert again["event"] == first["event"]
    listed = api_lambda("POST", f"/memories/{memory_id}/actor/{ENCODED_ACTOR}/sessions/s1", {})
    assert [e["eventId"] for e in listed["events"]] == [first["event"]["eventId"]]


class Outage:
    """Once armed, the next append commits and its answer is lost, and from then on every
    GetItem fails to connect while ``down``: the store's resends and read-backs all fail
    (botocore's own retries included) and the API answers an error."""

    def __init__(self, session: Any) -> None:
        self.armed = False
        self.down = False
        self.refused = 0
        session.events.register("after-call.dynamodb.TransactWriteItems", self._lose)
        session.events.register("before-call.dynamodb.GetItem", self._refuse)

    def _lose(self, **_: Any) -> None:
        if self.armed:
            self.armed, self.down = False, True
            raise ReadTimeoutError(endpoint_url="https://dynamodb")

    def _refuse(self, **_: Any) -> None:
        if self.down:
            self.refused += 1
            raise EndpointConnectionError(endpoint_url="https://dynamodb")


@pytest.fixture
def outage(session: Any, deployment: Deployment) -> Outage:
    return Outage(session)


@pytest.mark.fault("event-append", "answer-lost", "dynamodb")
def test_a_create_event_that_landed_unseen_in_an_outage_is_one_event_after_its_retry(
    outage: Outage, api_lambda: Any
) -> None:
    """Was: the first request failed, the claim was released, the retry stored a second
    event (issue 14)."""
    memory_id = create_memory(api_lambda, "outage")
    outage.armed = True

    first = api_lambda("POST", f"/memories/{memory_id}/events", body("token-1"))
    outage.down = False  # DynamoDB is back
    retried = {**body("token-1"), "eventTimestamp": T0 + 30}  # the SDK re-stamps the time
    again = api_lambda("POST", f"/memories/{memory_id}/events", retried)

    assert outage.refused >= 3  # every read-back of the first append failed
    assert first["_status"] >= 500 or first["_status"] == 429, first
    assert again["_status"] == 201, again
    listed = api_lambda("POST", f"/memories/{memory_id}/actor/{ENCODED_ACTOR}/sessions/s1", {})
    assert [e["eventId"] for e in listed["events"]] == [again["event"]["eventId"]]
    assert listed["events"][0]["eventTimestamp"] == again["event"]["eventTimestamp"]
