"""DeleteMemory landing inside a BatchCreateMemoryRecords and a CreateEvent sent by the real
boto3 client to ``cairn serve`` on loopback (SQLite store; issue 17, class 7): the request
passed its "memory not DELETING" check, then DeleteMemory ran to its end right before the
write committed. The client is told the memory is being deleted, and nothing is left."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

from cairn.api import Api, ApiContext
from cairn.api.operations.memories import delete_memory
from cairn.api.server import start
from cairn.clock import SystemClock
from cairn.models import Scope
from cairn.ports import Stores
from cairn.store.sqlite import SQLiteBackend
from tests.compat.conftest import point_clients_at, unique_name
from tests.conformance.test_api_deletion_race import DeleteFirst

SECRET = "Quixotic-Aubergine-Passport-8841"  # noqa: S105 - a test fact, no password
ACTOR = "newcomer"
WHEN = datetime(2026, 1, 1, 12, tzinfo=UTC)


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Stores]:
    opened = SQLiteBackend(tmp_path / "cairn.db", SystemClock()).stores()
    yield opened
    opened.close()


@pytest.mark.parametrize("racing", ["records", "events"])
def test_a_write_sent_by_boto3_that_delete_memory_overtakes_leaves_nothing(
    stores: Stores, racing: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    plain = ApiContext.build(stores, embedder=None, clock=SystemClock())
    doomed: list[str] = []
    wrapped = DeleteFirst(
        getattr(stores, racing),
        "apply" if racing == "records" else "append",
        lambda: delete_memory(plain, {"memoryId": doomed[0]}),
    )
    raced = dataclasses.replace(stores, **{racing: wrapped})
    running = start(Api(ApiContext.build(raced, embedder=None, clock=SystemClock())))
    try:
        point_clients_at(monkeypatch, running.url, tmp_path)
        session = boto3.session.Session()
        control = session.client("bedrock-agentcore-control")
        data = session.client("bedrock-agentcore")
        memory_id = control.create_memory(name=unique_name(), eventExpiryDuration=30)["memory"][
            "id"
        ]
        doomed.append(memory_id)
        if racing == "records":
            answer = data.batch_create_memory_records(
                memoryId=memory_id,
                records=[
                    {
                        "requestIdentifier": "r0",
                        "namespaces": [f"/facts/{ACTOR}/"],
                        "content": {"text": SECRET},
                        "timestamp": WHEN,
                    }
                ],
            )
            assert answer["successfulRecords"] == []
            (failed,) = answer["failedRecords"]
            assert "being deleted" in failed["errorMessage"]
        else:
            with pytest.raises(ClientError) as refused:
                data.create_event(
                    memoryId=memory_id,
                    actorId=ACTOR,
                    sessionId="s1",
                    eventTimestamp=WHEN,
                    payload=[{"conversational": {"content": {"text": SECRET}, "role": "USER"}}],
                )
            assert refused.value.response["Error"]["Code"] == "ResourceNotFoundException"
            assert "being deleted" in refused.value.response["Error"]["Message"]
    finally:
        running.stop()

    assert wrapped.calls == 1  # the request reached its write after passing its check
    scope = Scope(memory_id=memory_id, actor_id=ACTOR)
    assert stores.records.list_records(scope, include_inactive=True).items == ()
    assert stores.records.actors(memory_id) == ()
    assert stores.events.list_sessions(scope).items == ()
    assert stores.directory is not None
    assert stores.directory.actors(memory_id) == ()
