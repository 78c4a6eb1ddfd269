"""The router over the in-memory reference backend: what cairn does with AgentCore requests."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest

from cairn.api import Api, ApiContext
from cairn.api.idempotency import CONTROL_SCOPE, claim_key, fingerprint
from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.models import EmbedderId, Scope, Source, SourceKind, Status, Trust
from cairn.ports import FloatMatrix, RecordPlacement
from cairn.testing import InMemoryBackend
from tests.unit.api_harness import Caller, build_api, create_memory, segment

T0 = 1_767_258_000


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture
def backend(clock: FixedClock) -> InMemoryBackend:
    return InMemoryBackend(clock)


@pytest.fixture
def call(backend: InMemoryBackend, clock: FixedClock) -> Caller:
    return Caller(build_api(backend.stores(), clock))


@pytest.fixture
def memory(call: Caller) -> dict[str, Any]:
    return create_memory(call)


def records_path(memory: dict[str, Any], tail: str = "") -> str:
    return f"/memories/{memory['id']}/memoryRecords{tail}"


def batch_create(
    call: Caller, memory: dict[str, Any], *items: tuple[str, str], **extra: Any
) -> list[str]:
    records = [
        {
            "requestIdentifier": f"r{i}",
            "namespaces": [ns],
            "content": {"text": text},
            "timestamp": T0,
        }
        for i, (ns, text) in enumerate(items)
    ]
    reply = call("POST", records_path(memory, "/batchCreate"), {"records": records, **extra})
    assert reply.status == 201, reply.body
    return [row["memoryRecordId"] for row in reply.body["successfulRecords"]]


def test_records_are_filed_in_the_scope_their_namespace_names(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend
) -> None:
    in_actor, shared = batch_create(
        call, memory, ("/facts/user/a1/", "likes tea"), ("/notes/", "deploys on Tuesdays")
    )
    stores = backend.stores()

    actor_scope = Scope(memory_id=memory["id"], actor_id="user/a1")
    shared_scope = Scope(memory_id=memory["id"], actor_id="cairn:shared")
    tea = stores.records.get(actor_scope, in_actor)
    assert tea.content == "likes tea"
    assert stores.records.get(shared_scope, shared).namespace == "/notes/"
    assert (tea.sources, tea.trust, tea.strategy) == (
        (Source(kind=SourceKind.IMPORT),),
        Trust.UNTRUSTED,
        "custom",
    )


def test_a_named_strategy_sets_the_record_strategy_and_round_trips_its_id(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend
) -> None:
    strategy_id = memory["strategies"][0]["strategyId"]
    records = [
        {
            "requestIdentifier": "r",
            "namespaces": ["/facts/a1/"],
            "content": {"text": "fact"},
            "timestamp": T0,
            "memoryStrategyId": strategy_id,
            "metadata": {
                "n": {"numberValue": 2.5},
                "when": {"dateTimeValue": T0},
                "tags": {"stringListValue": ["x", "y"]},
            },
        }
    ]
    (record_id,) = [
        r["memoryRecordId"]
        for r in call("POST", records_path(memory, "/batchCreate"), {"records": records}).body[
            "successfulRecords"
        ]
    ]

    record = call("GET", f"/memories/{memory['id']}/memoryRecord/{record_id}").body["memoryRecord"]

    assert record["memoryStrategyId"] == strategy_id
    assert record["metadata"] == records[0]["metadata"]
    head = backend.stores().records.get(Scope(memory_id=memory["id"], actor_id="a1"), record_id)
    assert (head.strategy, head.category) == ("semantic", "fact")


def test_an_update_through_the_api_makes_a_trusted_record_untrusted(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend
) -> None:
    stores = backend.stores()
    scope = Scope(memory_id=memory["id"], actor_id="a1")
    record = NewRecord(
        namespace="/facts/a1/", content="I am vegan", sources=(Source(kind=SourceKind.USER),)
    )
    (written,) = stores.records.apply(scope, [Create(record=record)])
    assert stores.directory is not None
    stores.directory.place(
        memory["id"],
        [RecordPlacement(record_id=written.record_id, actor_id="a1", namespace="/facts/a1/")],
    )
    assert written.trust is Trust.TRUSTED

    reply = call(
        "POST",
        records_path(memory, "/batchUpdate"),
        {
            "records": [
                {
                    "memoryRecordId": written.record_id,
                    "timestamp": T0,
                    "content": {"text": "vegetarian"},
                }
            ]
        },
    )

    assert reply.body["failedRecords"] == []
    history = stores.records.history(scope, written.record_id)
    assert [(v.version, v.content, v.trust) for v in history] == [
        (1, "I am vegan", Trust.TRUSTED),
        (2, "vegetarian", Trust.UNTRUSTED),
    ]


def test_a_deleted_record_is_retracted_not_destroyed(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend
) -> None:
    (record_id,) = batch_create(call, memory, ("/facts/a1/", "secret recipe"))

    assert call("DELETE", records_path(memory, f"/{record_id}")).status == 200

    history = backend.stores().records.history(
        Scope(memory_id=memory["id"], actor_id="a1"), record_id
    )
    assert [(v.status, v.content) for v in history] == [
        (Status.ACTIVE, "secret recipe"),
        (Status.RETRACTED, "secret recipe"),
    ]
    assert (
        call("DELETE", records_path(memory, f"/{record_id}")).error_type
        == "ResourceNotFoundException"
    )


def test_each_retrieve_is_journalled_in_every_scope_it_read(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend
) -> None:
    batch_create(call, memory, ("/facts/a1/", "likes tea"), ("/facts/a2/", "likes coffee"))

    reply = call(
        "POST",
        f"/memories/{memory['id']}/retrieve",
        {"namespace": "/facts/", "searchCriteria": {"searchQuery": "what drinks", "topK": 5}},
    )

    assert reply.status == 200
    journalled = {
        scope.actor_id: list(entries.values()) for scope, entries in backend.journal.items()
    }
    assert sorted(journalled) == ["a1", "a2"]
    assert all(entry.query == "what drinks" for entries in journalled.values() for entry in entries)


def test_delete_memory_erases_its_events_and_records(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend
) -> None:
    (record_id,) = batch_create(call, memory, ("/facts/a1/", "private fact"))
    event = {"actorId": "a1", "sessionId": "s", "eventTimestamp": T0, "payload": [{"blob": "x"}]}
    assert call("POST", f"/memories/{memory['id']}/events", event).status == 201

    assert call("DELETE", f"/memories/{memory['id']}/delete").status == 202

    stores = backend.stores()
    scope = Scope(memory_id=memory["id"], actor_id="a1")
    assert {v.status for v in stores.records.history(scope, record_id)} == {Status.ERASED}
    assert stores.events.list_sessions(scope).items == ()
    assert (
        call("GET", f"/memories/{memory['id']}/details").error_type == "ResourceNotFoundException"
    )


def test_a_reused_token_with_other_parameters_changes_nothing(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend
) -> None:
    path = f"/memories/{memory['id']}/events"
    event = {
        "actorId": "a1",
        "sessionId": "s",
        "eventTimestamp": T0,
        "payload": [],
        "clientToken": "t",
    }
    first = call("POST", path, event)

    mismatch = call("POST", path, {**event, "sessionId": "other"})

    assert (mismatch.status, mismatch.body["reason"]) == (
        400,
        "IdempotentParameterMismatchException",
    )
    assert call("POST", path, event).body == first.body
    scope = Scope(memory_id=memory["id"], actor_id="a1")
    assert [s.session_id for s in backend.stores().events.list_sessions(scope).items] == ["s"]


def test_a_token_is_honoured_for_a_day(
    call: Caller, memory: dict[str, Any], clock: FixedClock
) -> None:
    path = f"/memories/{memory['id']}/ingest"
    body = {
        "actorId": "a1",
        "contentTimestamp": T0,
        "source": {"inline": {"payload": [{"json": {"content": [1]}}]}},
        "clientToken": "t",
    }
    first = call("POST", path, body).body["sessionId"]
    assert call("POST", path, body).body["sessionId"] == first

    clock.advance(hours=25)

    assert call("POST", path, body).body["sessionId"] != first


def test_a_request_still_in_progress_is_a_conflict(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend, clock: FixedClock
) -> None:
    body = {"name": "other", "eventExpiryDuration": 7, "clientToken": "busy"}
    claims = backend.stores().idempotency
    assert claims is not None
    key = claim_key(CONTROL_SCOPE, "CreateMemory", "busy")
    claims.claim(
        key, fingerprint(body), now=clock.now(), expires_at=clock.now() + timedelta(minutes=1)
    )

    reply = call("POST", "/memories/create", body)

    assert (reply.status, reply.error_type) == (409, "ConflictException")


def test_event_times_are_kept_to_the_millisecond(call: Caller, memory: dict[str, Any]) -> None:
    event = {"actorId": "a", "eventTimestamp": 1_767_258_000.123456, "payload": []}

    created = call("POST", f"/memories/{memory['id']}/events", event).body["event"]

    assert created["eventTimestamp"] == 1_767_258_000.123
    assert created["sessionId"]  # generated: the model makes sessionId optional


def test_typed_metadata_filters(call: Caller, memory: dict[str, Any]) -> None:
    records = [
        {
            "requestIdentifier": f"r{i}",
            "namespaces": ["/notes/"],
            "content": {"text": f"note {i}"},
            "timestamp": T0,
            "metadata": {
                "priority": {"numberValue": i},
                "due": {"dateTimeValue": T0 + i * 86_400},
                "labels": {"stringListValue": ["work"] if i else ["home"]},
            },
        }
        for i in range(3)
    ]
    call("POST", records_path(memory, "/batchCreate"), {"records": records})

    def listed(*filters: dict[str, Any]) -> list[str]:
        body = {"namespace": "/notes/", "metadataFilters": list(filters)}
        return sorted(
            r["content"]["text"]
            for r in call("POST", records_path(memory), body).body["memoryRecordSummaries"]
        )

    def where(key: str, op: str, value: dict[str, Any] | None = None) -> dict[str, Any]:
        found: dict[str, Any] = {"left": {"metadataKey": key}, "operator": op}
        if value is not None:
            found["right"] = {"metadataValue": value}
        return found

    assert listed(where("priority", "GREATER_THAN", {"numberValue": 0})) == ["note 1", "note 2"]
    assert listed(where("due", "BEFORE", {"dateTimeValue": T0 + 86_400})) == ["note 0"]
    assert listed(where("labels", "CONTAINS", {"stringValue": "work"})) == ["note 1", "note 2"]
    assert listed(
        where("labels", "EXISTS"), where("priority", "LESS_THAN_OR_EQUALS", {"numberValue": 1})
    ) == [
        "note 0",
        "note 1",
    ]
    mismatched = call(
        "POST",
        records_path(memory),
        {"namespace": "/", "metadataFilters": [where("due", "BEFORE", {"stringValue": "x"})]},
    )
    assert (mismatched.status, mismatched.error_type) == (400, "ValidationException")


def test_a_cursor_from_another_query_is_refused(call: Caller, memory: dict[str, Any]) -> None:
    for i in range(3):
        event = {"actorId": "a", "sessionId": "s1", "eventTimestamp": T0 + i, "payload": []}
        call("POST", f"/memories/{memory['id']}/events", event)
    listing = f"/memories/{memory['id']}/actor/a/sessions/"
    token = call("POST", listing + "s1", {"maxResults": 1}).body["nextToken"]

    reply = call("POST", listing + "s2", {"maxResults": 1, "nextToken": token})

    assert (reply.status, reply.body["fieldList"][0]["name"]) == (400, "nextToken")


def test_the_data_plane_accepts_the_memory_arn(call: Caller, memory: dict[str, Any]) -> None:
    by_arn = call("POST", f"/memories/{segment(memory['arn'])}/actors", {})
    wrong_account = memory["arn"].replace("000000000000", "123456789012")

    assert by_arn.status == 200
    assert call("POST", f"/memories/{segment(wrong_account)}/actors", {}).status == 404


def test_every_data_plane_operation_needs_an_existing_memory(call: Caller) -> None:
    missing = "missing-abcdefghij"

    replies = [
        call(
            "POST",
            f"/memories/{missing}/events",
            {"actorId": "a", "eventTimestamp": T0, "payload": []},
        ),
        call("POST", f"/memories/{missing}/actors", {}),
        call(
            "POST",
            f"/memories/{missing}/retrieve",
            {"namespace": "/", "searchCriteria": {"searchQuery": "q"}},
        ),
        call("POST", f"/memories/{missing}/extractionJobs", {}),
    ]

    assert {(r.status, r.error_type) for r in replies} == {(404, "ResourceNotFoundException")}


class ExplodingEmbedder:
    """An embedder that fails in a way cairn does not expect, quoting what it was given."""

    identity = EmbedderId(model_id="exploding", dims=4)

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        raise RuntimeError(f"cannot embed {texts[0]!r}")


def test_an_unexpected_failure_is_a_service_exception_that_leaks_no_content(
    backend: InMemoryBackend, clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    context = ApiContext.build(backend.stores(), embedder=ExplodingEmbedder(), clock=clock)
    call = Caller(Api(context))
    memory = create_memory(call)
    body = {
        "records": [
            {
                "requestIdentifier": "r",
                "namespaces": ["/n/"],
                "content": {"text": "my diagnosis"},
                "timestamp": T0,
            }
        ]
    }

    with caplog.at_level(logging.INFO, logger="cairn.api"):
        reply = call("POST", records_path(memory, "/batchCreate"), body)

    assert (reply.status, reply.error_type) == (500, "ServiceException")
    assert "diagnosis" not in reply.body["message"]
    assert "diagnosis" not in caplog.text
    assert "RuntimeError" in caplog.text


def test_an_unpaired_surrogate_is_refused_before_anything_is_stored(
    call: Caller, memory: dict[str, Any], backend: InMemoryBackend
) -> None:
    body = b'{"actorId": "a", "eventTimestamp": 1, "payload": [{"blob": "\\ud800"}]}'

    reply = call.raw("POST", f"/memories/{memory['id']}/events", body)

    assert (reply.status, reply.body["reason"]) == (400, "CannotParse")
    assert backend.events == {}


def test_branches_that_fork_from_each_other_are_listed_without_looping(
    call: Caller, memory: dict[str, Any]
) -> None:
    path = f"/memories/{memory['id']}/events"

    def create(at: int, branch: dict[str, str]) -> str:
        body = {
            "actorId": "a",
            "sessionId": "s",
            "eventTimestamp": at,
            "payload": [],
            "branch": branch,
        }
        event_id: str = call("POST", path, body).body["event"]["eventId"]
        return event_id

    a1 = create(T0, {"name": "a"})
    b1 = create(T0 + 1, {"name": "b", "rootEventId": a1})
    a2 = create(T0 + 2, {"name": "a", "rootEventId": b1})
    listing = {"filter": {"branch": {"name": "a", "includeParentBranches": True}}}

    reply = call("POST", f"/memories/{memory['id']}/actor/a/sessions/s", listing)

    assert reply.status == 200
    assert [e["eventId"] for e in reply.body["events"]] == [a2, b1, a1]
