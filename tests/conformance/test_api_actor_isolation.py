"""The AgentCore record API over every backend: actor ids with ``/`` stay apart, the reserved
actor is nobody's, and a foreign record looks exactly like a missing one (issue 17, classes 5
and 9). The same rules through the real boto3 and bedrock-agentcore clients are pinned in
``tests/compat/test_actor_isolation.py``."""

from __future__ import annotations

from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.models import Scope
from cairn.ports import Stores
from tests.unit.api_harness import Caller, build_api, create_memory, segment

T0 = 1_767_258_000


@pytest.fixture
def call(stores: Stores, clock: FixedClock) -> Caller:
    return Caller(build_api(stores, clock))


@pytest.fixture
def memory(call: Caller) -> dict[str, Any]:
    return create_memory(call)


def _path(memory: dict[str, Any], tail: str) -> str:
    return f"/memories/{memory['id']}{tail}"


def _create(call: Caller, memory: dict[str, Any], namespace: str, text: str) -> dict[str, Any]:
    item = {
        "requestIdentifier": "r0",
        "namespaces": [namespace],
        "content": {"text": text},
        "timestamp": T0,
    }
    reply = call("POST", _path(memory, "/memoryRecords/batchCreate"), {"records": [item]})
    assert reply.status == 201, reply.body
    return reply.body


def _created_id(call: Caller, memory: dict[str, Any], namespace: str, text: str) -> str:
    body = _create(call, memory, namespace, text)
    assert body["failedRecords"] == [], body
    record_id: str = body["successfulRecords"][0]["memoryRecordId"]
    return record_id


def _listed(call: Caller, memory: dict[str, Any], **where: str) -> list[str]:
    reply = call("POST", _path(memory, "/memoryRecords"), {**where, "maxResults": 100})
    assert reply.status == 200, reply.body
    return sorted(s["content"]["text"] for s in reply.body["memoryRecordSummaries"])


def _retrieved(call: Caller, memory: dict[str, Any], **where: str) -> list[str]:
    body = {**where, "searchCriteria": {"searchQuery": "tea", "topK": 20}}
    reply = call("POST", _path(memory, "/retrieve"), body)
    assert reply.status == 200, reply.body
    return sorted(s["content"]["text"] for s in reply.body["memoryRecordSummaries"])


@pytest.fixture
def nested(call: Caller, memory: dict[str, Any]) -> dict[str, str]:
    """Records of three actors whose ids nest by segment: ``u1``, ``u1/x`` and ``u1/``."""
    return {
        "u1": _created_id(call, memory, "/facts/u1/", "u1 drinks tea"),
        "u1/x": _created_id(call, memory, "/facts/u1/x/", "u1/x drinks tea"),
        "u1/": _created_id(call, memory, "/facts/u1//", "u1/ drinks tea"),
    }


def test_a_records_namespace_files_it_under_exactly_the_actor_it_names(
    call: Caller, memory: dict[str, Any], nested: dict[str, str], stores: Stores
) -> None:
    for actor, record_id in nested.items():
        scope = Scope(memory_id=memory["id"], actor_id=actor)
        assert stores.records.get(scope, record_id).content == f"{actor} drinks tea"


@pytest.mark.parametrize("field", ["namespace", "namespacePath"])
def test_a_prefix_for_one_actor_never_reads_an_actor_whose_id_extends_it(
    call: Caller, memory: dict[str, Any], nested: dict[str, str], field: str
) -> None:
    assert _listed(call, memory, **{field: "/facts/u1/"}) == ["u1 drinks tea"]
    assert _retrieved(call, memory, **{field: "/facts/u1/"}) == ["u1 drinks tea"]
    assert _listed(call, memory, **{field: "/facts/u1/x/"}) == ["u1/x drinks tea"]
    assert _listed(call, memory, **{field: "/facts/u1//"}) == ["u1/ drinks tea"]
    # A prefix above every actor still reads them all.
    assert len(_listed(call, memory, **{field: "/facts/"})) == 3


def test_a_namespace_two_templates_read_as_different_actors_is_refused(
    call: Caller, stores: Stores
) -> None:
    memory = create_memory(
        call,
        name="overlap",
        memoryStrategies=[
            {"semanticMemoryStrategy": {"name": "a", "namespaceTemplates": ["/f/{actorId}/"]}},
            {
                "userPreferenceMemoryStrategy": {
                    "name": "b",
                    "namespaceTemplates": ["/f/{actorId}/notes/"],
                }
            },
        ],
    )

    body = _create(call, memory, "/f/u1/notes/", "ambiguous")

    (failure,) = body["failedRecords"]
    assert failure["errorCode"] == 400
    assert "'u1'" in failure["errorMessage"]
    assert "'u1/notes'" in failure["errorMessage"]
    assert "memoryStrategyId" in failure["errorMessage"]
    assert _listed(call, memory, namespace="/") == []


def _tailed_memory(call: Caller) -> dict[str, Any]:
    """A memory whose template puts a segment after ``{actorId}``: actor ``u1``'s whole
    namespace ``/mem/u1/facts/`` is also where actor ``u1/facts``'s ``/mem/u1/facts/facts/``
    begins."""
    strategy = {"name": "facts", "namespaceTemplates": ["/mem/{actorId}/facts/"]}
    return create_memory(
        call, name="tailed", memoryStrategies=[{"semanticMemoryStrategy": strategy}]
    )


def test_a_namespace_under_another_actors_whole_namespace_is_refused_at_write_time(
    call: Caller, stores: Stores
) -> None:
    memory = _tailed_memory(call)
    _created_id(call, memory, "/mem/u1/facts/", "u1 drinks tea")

    body = _create(call, memory, "/mem/u1/facts/facts/", "planted under u1")

    (failure,) = body["failedRecords"]
    assert failure["errorCode"] == 400
    message = failure["errorMessage"]
    for named in ("'/mem/u1/facts/'", "'u1'", "'u1/facts'"):
        assert named in message
    assert "{actorId}" in message  # says what to do: a template that ends with it
    assert _listed(call, memory, namespace="/mem/u1/facts/") == ["u1 drinks tea"]
    assert _listed(call, memory, namespace="/") == ["u1 drinks tea"]


def test_an_actor_whose_namespace_would_lie_under_another_actors_is_refused_its_events(
    call: Caller, stores: Stores
) -> None:
    memory = _tailed_memory(call)
    event = {
        "actorId": "u1/facts",
        "sessionId": "s1",
        "eventTimestamp": T0,
        "payload": [{"conversational": {"content": {"text": "hi"}, "role": "USER"}}],
    }

    reply = call("POST", _path(memory, "/events"), event)

    assert reply.status == 400, reply.body
    assert "'/mem/u1/facts/facts/'" in reply.body["message"]
    scope = Scope(memory_id=memory["id"], actor_id="u1/facts")
    assert stores.events.list_sessions(scope).items == ()
    ok = call("POST", _path(memory, "/events"), {**event, "actorId": "u1/x"})
    assert ok.status == 201, ok.body  # an id that spells no template tail is fine


def test_the_reserved_shared_actor_cannot_be_named_by_a_caller(
    call: Caller, memory: dict[str, Any]
) -> None:
    event = {
        "actorId": "cairn:shared",
        "sessionId": "s1",
        "eventTimestamp": T0,
        "payload": [{"conversational": {"content": {"text": "hi"}, "role": "USER"}}],
    }
    reply = call("POST", _path(memory, "/events"), event)
    assert reply.status == 400, reply.body
    assert "reserved" in reply.body["message"]

    listed = call("POST", _path(memory, f"/actor/{segment('cairn:shared')}/sessions"), {})
    assert listed.status == 400
    assert "reserved" in listed.body["message"]

    body = _create(call, memory, "/facts/cairn:shared/", "planted")
    (failure,) = body["failedRecords"]
    assert failure["errorCode"] == 400
    assert "reserved" in failure["errorMessage"]


def test_a_foreign_record_and_a_missing_one_get_the_same_answer(
    call: Caller, memory: dict[str, Any], nested: dict[str, str]
) -> None:
    other = create_memory(call, name="other")
    foreign = nested["u1"]
    missing = "mem-" + "0" * 36

    def answers(record_id: str, namespace: str | None) -> tuple[int, str]:
        query = f"namespace={segment(namespace)}" if namespace else ""
        get = call("GET", _path(other, f"/memoryRecord/{record_id}"), query=query)
        delete = call("DELETE", _path(other, f"/memoryRecords/{record_id}"), query=query)
        assert get.status == delete.status == 404
        assert get.error_type == delete.error_type == "ResourceNotFoundException"
        return get.status, get.body["message"].replace(record_id, "<id>")

    for namespace in (None, "/facts/u1/", "/elsewhere/"):
        assert answers(foreign, namespace) == answers(missing, namespace)
    # In its own memory, under the wrong namespace, a record is as absent as a missing one.
    wrong = call(
        "GET", _path(memory, f"/memoryRecord/{foreign}"), query=f"namespace={segment('/x/')}"
    )
    gone = call(
        "GET", _path(memory, f"/memoryRecord/{missing}"), query=f"namespace={segment('/x/')}"
    )
    assert wrong.body["message"].replace(foreign, "<id>") == gone.body["message"].replace(
        missing, "<id>"
    )
