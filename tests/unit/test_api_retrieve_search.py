"""RetrieveMemoryRecords searches each actor's scope once and journals what it answered: one
entry per scope searched, pinning exactly the records that scope contributed to the answer."""

from __future__ import annotations

from typing import Any

from cairn.clock import FixedClock
from cairn.models import Scope
from cairn.testing import InMemoryBackend
from tests.unit.api_harness import Caller, build_api, create_memory
from tests.unit.test_api_router import batch_create


def test_retrieve_journals_in_each_scope_exactly_what_that_scope_answered() -> None:
    clock = FixedClock()
    backend = InMemoryBackend(clock)
    call = Caller(build_api(backend.stores(), clock))
    memory: dict[str, Any] = create_memory(call)
    batch_create(
        call,
        memory,
        ("/facts/a1/", "drinks green tea every morning"),
        ("/facts/a1/", "plays chess on sundays"),
        ("/facts/a2/", "repairs old bicycles"),
    )
    body = {"namespace": "/facts/", "searchCriteria": {"searchQuery": "green tea", "topK": 1}}
    reply = call("POST", f"/memories/{memory['id']}/retrieve", body)
    assert reply.status == 200, reply.body
    (answered,) = reply.body["memoryRecordSummaries"]
    assert answered["content"]["text"] == "drinks green tea every morning"
    a1 = Scope(memory_id=memory["id"], actor_id="a1")
    a2 = Scope(memory_id=memory["id"], actor_id="a2")
    (entry,) = backend.journal[a1].values()
    assert [s.record_id for s in entry.selected] == [answered["memoryRecordId"]]
    assert entry.query == "green tea"
    (searched,) = backend.journal[a2].values()
    assert searched.selected == ()
