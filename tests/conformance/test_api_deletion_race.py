"""DeleteMemory racing BatchCreateMemoryRecords, through the API on every backend (issue 17,
class 7): the batch passed its "memory not DELETING" check, then DeleteMemory ran to the end
(mark, DELETING, erase, config gone) before the batch's placement or its apply committed.
The actor is new to the memory, so no erasure count DeleteMemory moves fences it: only the
deletion mark does. The batch writes nothing and reports each record as failed with the
error the API gives for a memory being deleted."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from cairn.errors import RecordNotFoundError
from cairn.models import Scope
from cairn.ports import Stores
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
