"""DeleteMemory racing BatchCreateMemoryRecords, through the API on every backend (issue 17,
class 7): the batch passed its "memory not DELETING" check, then DeleteMemory ran to the end
(mark, DELETING, erase, config gone) before the batch's placement or its apply committed;
and likewise a CreateEvent, with and without extraction (the rollout index).
The actor is new to the memory, so no erasure count DeleteMemory moves fences it: only the
deletion mark does. The batch writes nothing and reports each record as failed with the
error the API gives for a memory being deleted."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from cairn.api import Api, ApiContext
from cairn.clock import FixedClock
from cairn.errors import RecordNotFoundError
from cairn.extract.staging import RolloutPipeline
from cairn.models import Scope
from cairn.ports import StagingStore, Stores
from tests.unit.api_harness import Caller, build_api, create_memory

SECRET = "Quixotic-Aubergine-Passport-8841"  # noqa: S105 - a test fact, no password
ACTOR = "newcomer"


class DeleteFirst:
    """A store whose method ``name`` first runs DeleteMemory (once), then does its work."""

    def __init__(self, inner: Any, name: str, delete: Callable[[], object]) -> None:
        self._inner, self._name, self._delete = inner, name, delete
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._inner, name)
        if name != self._name:
            return method

        def racing(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            delete, self._delete = self._delete, lambda: None
            delete()
            return method(*args, **kwargs)

        return racing


@pytest.mark.parametrize("racing", ["directory", "records"])
def test_delete_memory_landing_inside_a_batch_create_leaves_nothing(
    stores: Stores, clock: Any, racing: str
) -> None:
    if stores.memories is None or stores.directory is None:
        pytest.skip("this backend serves no AgentCore API")
    call = Caller(build_api(stores, clock))
    memory = create_memory(call)
    memory_id = memory["id"]
    path = f"/memories/{memory_id}"
    wrapped = DeleteFirst(
        getattr(stores, racing),
        "place" if racing == "directory" else "apply",
        lambda: call("DELETE", f"{path}/delete"),
    )
    raced = Caller(build_api(dataclasses.replace(stores, **{racing: wrapped}), clock))
    body = {
        "records": [
            {
                "requestIdentifier": "r0",
                "namespaces": [f"/facts/{ACTOR}/"],
                "content": {"text": f"The newcomer's passport is {SECRET}."},
                "timestamp": 1_700_000_000,
            }
        ]
    }

    reply = raced("POST", f"{path}/memoryRecords/batchCreate", body)

    assert wrapped.calls == 1  # the batch passed its check and reached the racing write
    assert reply.body["successfulRecords"] == [], reply.body
    (failed,) = reply.body["failedRecords"]
    assert "being deleted" in failed["errorMessage"]
    assert call("GET", f"{path}/details").status == 404
    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    assert stores.records.list_records(scope, include_inactive=True).items == ()
    assert stores.records.actors(memory_id) == ()
    assert stores.directory.actors(memory_id) == ()
    with pytest.raises(RecordNotFoundError):
        stores.directory.locate(memory_id, failed["memoryRecordId"])


class Notices:
    def __init__(self) -> None:
        self.sent: list[object] = []

    def announce(self, notice: object) -> None:
        self.sent.append(notice)


@pytest.mark.parametrize("counted", [False, True])
def test_delete_memory_landing_inside_a_create_event_leaves_no_event(
    stores: Stores, staging: StagingStore, clock: FixedClock, counted: bool
) -> None:
    """``counted``: the API runs extraction, so the event goes through the rollout index."""
    if stores.memories is None or stores.directory is None or stores.rollouts is None:
        pytest.skip("this backend serves no AgentCore API")
    call = Caller(build_api(stores, clock))
    path = f"/memories/{create_memory(call)['id']}"
    racing, method = ("rollouts", "append_counted") if counted else ("events", "append")
    wrapped = DeleteFirst(getattr(stores, racing), method, lambda: call("DELETE", f"{path}/delete"))
    raced_stores = dataclasses.replace(stores, **{racing: wrapped})
    pipeline = None
    if counted:
        pipeline = RolloutPipeline(wrapped, staging, Notices(), clock)
    api = Api(ApiContext.build(raced_stores, embedder=None, clock=clock, extraction=pipeline))
    body = {
        "actorId": ACTOR,
        "sessionId": "s1",
        "eventTimestamp": 1_700_000_000,
        "payload": [{"conversational": {"content": {"text": SECRET}, "role": "USER"}}],
    }

    reply = Caller(api)("POST", f"{path}/events", body)

    assert wrapped.calls == 1
    assert reply.status == 404, reply.body
    assert "being deleted" in str(reply.body)
    scope = Scope(memory_id=path.rsplit("/", 1)[-1], actor_id=ACTOR)
    assert stores.events.list_sessions(scope).items == ()
    assert stores.events.list_actors(scope.memory_id).items == ()
    assert stores.rollouts.counters(scope, "s1") is None
