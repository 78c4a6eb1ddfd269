"""Every memory tool is pinned to its run's scope, on every backend: a model cannot name another
scope, and another scope's record id is answered exactly like an id that does not exist."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cairn.changes import Create, NewRecord
from cairn.clock import FixedClock
from cairn.models import Scope, Source, SourceKind, Status
from cairn.ports import Stores
from cairn.runtime import MemorySession, Run
from cairn.testing import HashingEmbedder
from tests.conformance.backends import BACKENDS, open_backend

MINE = Scope(memory_id="mem-1", actor_id="tg:42")
THEIRS = Scope(memory_id="mem-1", actor_id="tg:7")
OTHER_MEMORY = Scope(memory_id="mem-2", actor_id="tg:42")
MISSING_ID = "mem-0000000000000000000000000000000000000"


@pytest.fixture(params=sorted(BACKENDS))
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    opened = open_backend(request.param, FixedClock(), tmp_path)
    yield opened
    opened.close()


def _secret(stores: Stores, scope: Scope) -> str:
    record = NewRecord(
        namespace=f"/facts/{scope.actor_id}/",
        content="The deploy password hint is blue heron.",
        sources=(Source(kind=SourceKind.USER),),
    )
    (written,) = stores.records.apply(scope, [Create(record=record)])
    return written.record_id


def _run(stores: Stores) -> Run:
    session = MemorySession.local(
        stores,
        memory_id=MINE.memory_id,
        actor_id=MINE.actor_id,
        session_id="s1",
        embedder=HashingEmbedder(),
    )
    return session.start_run("deploy password hint")


def _without(message: str, record_id: str) -> str:
    return message.replace(record_id, "<id>")


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "update", "content": "The hint is now red fox."},
        {"action": "forget"},
        {"action": "invalidate", "reason": "stale"},
    ],
)
def test_memory_edit_cannot_touch_another_scope_and_says_not_found(
    stores: Stores, arguments: dict[str, str]
) -> None:
    foreign = [_secret(stores, THEIRS), _secret(stores, OTHER_MEMORY)]
    run = _run(stores)
    missing = run.tools.call("memory_edit", {**arguments, "record_id": MISSING_ID})
    assert not missing.ok
    for record_id in foreign:
        refused = run.tools.call("memory_edit", {**arguments, "record_id": record_id})
        assert not refused.ok
        assert "does not exist in this scope" in refused.content["error"]
        # Indistinguishable from an id that exists nowhere: nothing leaks about other scopes.
        assert _without(refused.content["error"], record_id) == _without(
            missing.content["error"], MISSING_ID
        )
    for scope, record_id in zip((THEIRS, OTHER_MEMORY), foreign, strict=True):
        (version,) = stores.records.history(scope, record_id)
        assert version.status is Status.ACTIVE
        assert version.content == "The deploy password hint is blue heron."


def test_memory_recall_never_returns_another_scope_s_records(stores: Stores) -> None:
    _secret(stores, THEIRS)
    _secret(stores, OTHER_MEMORY)
    mine = _secret(stores, MINE)
    run = _run(stores)
    found = run.tools.call("memory_recall", {"query": "deploy password hint blue heron"})
    assert found.ok
    assert [hit["record_id"] for hit in found.content["results"]] == [mine]
    entries = [line for line in run.block.splitlines() if line.startswith("- ")]
    assert len(entries) == 1
    assert mine in entries[0]


def test_learn_files_into_the_run_s_own_scope_only(stores: Stores) -> None:
    run = _run(stores)
    learned = run.tools.call("learn", {"lesson": "Ask before rotating the deploy password."})
    assert learned.ok
    version = stores.records.get(MINE, learned.content["record_id"])
    assert version.namespace == f"/lessons/{MINE.actor_id}/"
    for other in (THEIRS, OTHER_MEMORY):
        assert stores.records.list_records(other).items == ()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("learn", {"lesson": "Deploy on Tuesdays.", "actor_id": "tg:7"}),
        ("learn", {"lesson": "Deploy on Tuesdays.", "namespace": "/lessons/tg:7/"}),
        ("memory_recall", {"query": "deploy password", "memory_id": "mem-2"}),
        ("memory_recall", {"query": "deploy password", "actor_id": "tg:7"}),
        ("memory_edit", {"action": "forget", "record_id": MISSING_ID, "actor_id": "tg:7"}),
        ("memory_edit", {"action": "forget", "record_id": MISSING_ID, "scope": "mem-2|tg:7"}),
    ],
)
def test_no_tool_input_can_name_a_memory_an_actor_or_a_namespace(
    stores: Stores, tool: str, arguments: dict[str, str]
) -> None:
    run = _run(stores)
    outcome = run.tools.call(tool, arguments)
    assert not outcome.ok
    assert "pinned to this run's user" in outcome.content["error"]
    for scope in (MINE, THEIRS, OTHER_MEMORY):
        assert stores.records.list_records(scope).items == ()
