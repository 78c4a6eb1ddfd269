"""A request the API refuses changes nothing: validated whole before any effect (issue 14, 5)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.testing import InMemoryBackend
from tests.unit.api_harness import Caller, build_api, create_memory

T0 = 1_767_258_000


@pytest.fixture
def backend() -> InMemoryBackend:
    return InMemoryBackend(FixedClock())


@pytest.fixture
def call(backend: InMemoryBackend) -> Caller:
    return Caller(build_api(backend.stores(), FixedClock()))


def retrieve(memory: dict[str, Any], query: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    body = {"namespace": "/facts/", "searchCriteria": {"searchQuery": query, "topK": 5}, **extra}
    return f"/memories/{memory['id']}/retrieve", body


def journalled(backend: InMemoryBackend) -> int:
    return sum(len(entries) for entries in backend.journal.values())


@pytest.mark.parametrize(
    "token",
    [
        "not-a-token",
        base64.urlsafe_b64encode(b'{"v": 1}').decode(),
        "",
    ],
    ids=["garbage", "json-not-a-cursor", "empty"],
)
def test_a_retrieve_with_a_malformed_next_token_is_refused_and_journals_nothing(
    call: Caller, backend: InMemoryBackend, token: str
) -> None:
    memory = create_memory(call)
    records = [
        {
            "requestIdentifier": "r0",
            "namespaces": ["/facts/a1/"],
            "content": {"text": "likes tea"},
            "timestamp": T0,
        }
    ]
    created = call(
        "POST", f"/memories/{memory['id']}/memoryRecords/batchCreate", {"records": records}
    )
    assert created.status == 201, created.body

    reply = call("POST", *retrieve(memory, "what drinks", nextToken=token))

    assert reply.status == 400, reply.body
    assert reply.error_type == "ValidationException"
    assert "nextToken" in reply.body["message"] or "token" in reply.body["message"]
    assert journalled(backend) == 0


def test_a_token_from_another_query_is_refused_before_the_recall_runs(
    call: Caller, backend: InMemoryBackend
) -> None:
    memory = create_memory(call)
    records = [
        {
            "requestIdentifier": f"r{i}",
            "namespaces": ["/facts/a1/"],
            "content": {"text": text},
            "timestamp": T0,
        }
        for i, text in enumerate(
            (
                "drinks green tea at noon",
                "drinks black coffee before work",
                "drinks cold water after a long run",
            )
        )
    ]
    call("POST", f"/memories/{memory['id']}/memoryRecords/batchCreate", {"records": records})
    first = call("POST", *retrieve(memory, "drinks", maxResults=1))
    assert first.status == 200, first.body
    token = first.body["nextToken"]
    before = journalled(backend)

    reply = call("POST", *retrieve(memory, "something else", nextToken=token))

    assert reply.status == 400, reply.body
    assert journalled(backend) == before
