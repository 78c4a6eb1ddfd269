"""Principals through the router on every backend (issue 17): a principal of actor ``a`` cannot
read, write, list, delete or infer actor ``b``'s records, events or sessions. Every answer about
``b`` equals the answer about something that never existed; fan-out reads are narrowed; a
namespace grant reaches records of that namespace only. The same through a real
``cairn serve --principals`` process: ``tests/compat/test_principals.py``; behind API Gateway
(caller ARNs, moto): ``tests/pipeline/test_api_principals_lambda.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from cairn.api import ApiSettings
from cairn.api.principals import principals_from, token_digest
from cairn.clock import FixedClock
from cairn.models import Scope
from cairn.ports import Stores
from tests.unit.api_harness import HEADERS, Caller, Reply, build_api, create_memory

T0 = 1_767_258_000
DOCUMENT = {
    "principal": [
        {"name": "a", "token_sha256": token_digest("token-a"), "actors": ["a"]},
        {
            "name": "b",
            "token_sha256": token_digest("token-b"),
            "actors": ["b"],
            "namespaces": ["/notes/b/"],
        },
        {
            "name": "reader",
            "token_sha256": token_digest("token-reader"),
            "namespaces": ["/notes/b/"],
            "access": ["read"],
        },
        {
            "name": "admin",
            "token_sha256": token_digest("token-admin"),
            "actors": ["*"],
            "access": ["read", "write", "control"],
        },
    ]
}


@dataclass
class As(Caller):
    """A caller that sends one principal's token."""

    token: str = ""

    def raw(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        query: str = "",
        headers: dict[str, str] | None = None,
    ) -> Reply:
        return super().raw(method, path, body, query, {**HEADERS, "x-cairn-token": self.token})


@pytest.fixture
def callers(stores: Stores, clock: FixedClock) -> dict[str, As]:
    api = build_api(stores, clock, ApiSettings(principals=principals_from(DOCUMENT, "test")))
    return {name: As(api, f"token-{name}") for name in ("a", "b", "reader", "admin", "nobody")}


def _create(call: Caller, memory_id: str, namespace: str, text: str) -> Reply:
    item = {"requestIdentifier": "r0", "namespaces": [namespace], "content": {"text": text}}
    return call(
        "POST",
        f"/memories/{memory_id}/memoryRecords/batchCreate",
        {"records": [{**item, "timestamp": T0}]},
    )


def _event(call: Caller, memory_id: str, actor: str, text: str) -> Reply:
    body = {
        "actorId": actor,
        "sessionId": "s1",
        "eventTimestamp": T0,
        "payload": [{"conversational": {"content": {"text": text}, "role": "USER"}}],
    }
    return call("POST", f"/memories/{memory_id}/events", body)


@pytest.fixture
def world(callers: dict[str, As]) -> dict[str, str]:
    memory_id = create_memory(callers["admin"])["id"]
    b = callers["b"]
    assert _event(b, memory_id, "b", "b's locker code is 4471").status == 201
    created = _create(b, memory_id, "/facts/b/", "b's locker code is 4471").body
    note = _create(b, memory_id, "/notes/b/", "b's locker note").body
    assert _create(callers["a"], memory_id, "/facts/a/", "a's locker is blue").status == 201
    return {
        "memory": memory_id,
        "record": created["successfulRecords"][0]["memoryRecordId"],
        "note": note["successfulRecords"][0]["memoryRecordId"],
    }


def _same(foreign: Reply, missing: Reply, swap: tuple[str, str]) -> None:
    assert (foreign.status, foreign.error_type) == (missing.status, missing.error_type)
    assert foreign.body["message"].replace(*swap) == missing.body["message"]


def test_a_record_of_another_principal_answers_exactly_as_a_missing_one(
    callers: dict[str, As], world: dict[str, str]
) -> None:
    a, base, record = callers["a"], f"/memories/{world['memory']}", world["record"]
    never = "mem-" + "0" * 36
    for method, tail in (("GET", "/memoryRecord/{}"), ("DELETE", "/memoryRecords/{}")):
        foreign = a(method, base + tail.format(record))
        assert foreign.status == 404
        _same(foreign, a(method, base + tail.format(never)), (record, never))
    kept = callers["b"]("GET", f"{base}/memoryRecord/{record}")
    assert kept.body["memoryRecord"]["content"]["text"] == "b's locker code is 4471"


def test_events_and_sessions_of_another_actor_are_refused_as_for_any_actor_not_granted(
    callers: dict[str, As], world: dict[str, str]
) -> None:
    a, base = callers["a"], f"/memories/{world['memory']}"
    for tail in ("/actor/{}/sessions/s1", "/actor/{}/sessions"):
        foreign = a("POST", base + tail.format("b"), {})
        assert (foreign.status, foreign.error_type) == (403, "AccessDeniedException")
        _same(foreign, a("POST", base + tail.format("never")), ("'b'", "'never'"))
    refused = _event(a, world["memory"], "b", "planted")
    assert refused.status == 403
    actors = a("POST", f"{base}/actors", {}).body["actorSummaries"]
    assert actors == []  # a has records but no events; b's actor is not listed


def test_reads_across_actors_see_only_the_principals_records(
    callers: dict[str, As], world: dict[str, str]
) -> None:
    base = f"/memories/{world['memory']}"
    for name, expected in (
        ("a", ["a's locker is blue"]),
        ("b", ["b's locker code is 4471", "b's locker note"]),
        ("admin", ["a's locker is blue", "b's locker code is 4471", "b's locker note"]),
    ):
        listed = callers[name]("POST", f"{base}/memoryRecords", {})
        found = callers[name](
            "POST", f"{base}/retrieve", {"searchCriteria": {"searchQuery": "locker", "topK": 10}}
        )
        for reply in (listed, found):
            texts = sorted(r["content"]["text"] for r in reply.body["memoryRecordSummaries"])
            assert texts == expected, name


def test_writes_into_a_namespace_not_granted_are_refused_and_nothing_is_filed(
    callers: dict[str, As], world: dict[str, str]
) -> None:
    a = callers["a"]
    reply = _create(a, world["memory"], "/notes/b/", "planted into b's notes")
    assert [f["errorCode"] for f in reply.body["failedRecords"]] == [403]
    listed = callers["admin"]("POST", f"/memories/{world['memory']}/memoryRecords", {})
    assert "planted into b's notes" not in str(listed.body)


def test_an_unknown_token_and_missing_access_are_refused(
    callers: dict[str, As], world: dict[str, str]
) -> None:
    nobody = callers["nobody"]("POST", f"/memories/{world['memory']}/actors", {})
    assert (nobody.status, nobody.error_type) == (403, "AccessDeniedException")
    refused = callers["b"]("DELETE", f"/memories/{world['memory']}/delete")
    assert refused.status == 403
    assert "control access" in refused.body["message"]


def test_a_namespace_grant_reads_that_namespace_only_and_journals_only_where_it_read(
    stores: Stores, callers: dict[str, As], world: dict[str, str]
) -> None:
    base = f"/memories/{world['memory']}"
    a_scope = Scope(memory_id=world["memory"], actor_id="a")
    before = stores.journal.head(a_scope)
    found = callers["reader"](
        "POST", f"{base}/retrieve", {"searchCriteria": {"searchQuery": "locker", "topK": 10}}
    )
    listed = callers["reader"]("POST", f"{base}/memoryRecords", {"namespace": "/"})
    for reply in (found, listed):
        texts = [r["content"]["text"] for r in reply.body["memoryRecordSummaries"]]
        assert texts == ["b's locker note"]
    # a's scope was searched for records under /notes/b/, gave none, and keeps no trace of
    # the reader's query.
    assert stores.journal.head(a_scope) == before
    refused = callers["reader"]("POST", f"{base}/actor/b/sessions", {})
    assert refused.status == 403  # a namespace grant reaches records only, never events
