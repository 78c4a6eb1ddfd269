"""Record expiry through the API (``recordExpirySpecification`` on BatchCreate/Update): a record
says when it expires, and from then on it is gone from every read, as a deleted one; a retry
never moves its expiry; records without one are untouched. On the in-memory and SQLite stores.
A strategy's ``recordExpirySpecification`` gives the records it extracts their expiry."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from cairn.api.codec import to_epoch
from cairn.clock import FixedClock
from cairn.embed.hashing import HashingEmbedder
from cairn.extract.triggers import BUILT_IN_TRIGGERS
from cairn.local import offline_model
from cairn.local.api import EmbeddedApi, serve_embedded
from cairn.ports import Stores
from cairn.store.sqlite import SQLiteBackend
from cairn.testing import InMemoryBackend
from tests.unit.api_harness import Caller, build_api, create_memory
from tests.unit.test_api_extraction import post_turns
from tests.unit.test_api_router import T0, records_path

LIVES = {"recordExpiryDurationDays": 31}
REMOVE = {"action": "REMOVE"}


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture(params=["memory", "sqlite"])
def stores(request: pytest.FixtureRequest, clock: FixedClock, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "memory":
        opened = InMemoryBackend(clock).stores()
    else:
        opened = SQLiteBackend(tmp_path / "cairn.db", clock).stores()
    yield opened
    opened.close()


@pytest.fixture
def call(stores: Stores, clock: FixedClock) -> Caller:
    return Caller(build_api(stores, clock))


def _create(call: Caller, memory: dict[str, Any], text: str, **extra: Any) -> str:
    body = {
        "records": [
            {
                "requestIdentifier": "r0",
                "namespaces": ["/facts/user/a1/"],
                "content": {"text": text},
                "timestamp": T0,
            }
        ],
        **extra,
    }
    reply = call("POST", records_path(memory, "/batchCreate"), body)
    assert reply.status == 201, reply.body
    (row,) = reply.body["successfulRecords"]
    record_id: str = row["memoryRecordId"]
    return record_id


def _listed(call: Caller, memory: dict[str, Any]) -> list[str]:
    reply = call("POST", records_path(memory), {"namespace": "/"})
    return [r["memoryRecordId"] for r in reply.body["memoryRecordSummaries"]]


def _retrieved(call: Caller, memory: dict[str, Any], query: str) -> list[str]:
    body = {"namespace": "/", "searchCriteria": {"searchQuery": query, "topK": 10}}
    reply = call("POST", f"/memories/{memory['id']}/retrieve", body)
    return [r["memoryRecordId"] for r in reply.body["memoryRecordSummaries"]]


def test_an_expired_record_is_gone_from_every_read(call: Caller, clock: FixedClock) -> None:
    memory = create_memory(call)
    created_at = clock.now()
    fleeting = _create(
        call, memory, "The user is in Lisbon this week", recordExpirySpecification=LIVES
    )
    kept = _create(call, memory, "The user lives in Porto")
    got = call("GET", f"/memories/{memory['id']}/memoryRecord/{fleeting}")

    assert got.body["memoryRecord"]["expiresAt"] == to_epoch(created_at + timedelta(days=31))
    assert set(_retrieved(call, memory, "where is the user")) == {fleeting, kept}

    clock.advance(seconds=31 * 86_400)

    gone = call("GET", f"/memories/{memory['id']}/memoryRecord/{fleeting}")
    assert gone.error_type == "ResourceNotFoundException"
    assert _listed(call, memory) == [kept]
    assert _retrieved(call, memory, "where is the user") == [kept]
    update = {"records": [{"memoryRecordId": fleeting, "timestamp": T0, "content": {"text": "x"}}]}
    failed = call("POST", records_path(memory, "/batchUpdate"), update).body["failedRecords"]
    assert [(f["memoryRecordId"], f["errorCode"]) for f in failed] == [(fleeting, 404)]


def test_an_update_with_an_expiry_gives_the_record_its_days_from_then(
    call: Caller, clock: FixedClock
) -> None:
    memory = create_memory(call)
    record_id = _create(call, memory, "The user is in Lisbon this week")
    clock.advance(seconds=86_400)
    updated_at = clock.now()
    update = {
        "records": [{"memoryRecordId": record_id, "timestamp": T0 + 60}],
        "recordExpirySpecification": LIVES,
    }

    reply = call("POST", records_path(memory, "/batchUpdate"), update)

    assert [r["memoryRecordId"] for r in reply.body["successfulRecords"]] == [record_id]
    got = call("GET", f"/memories/{memory['id']}/memoryRecord/{record_id}").body["memoryRecord"]
    assert got["expiresAt"] == to_epoch(updated_at + timedelta(days=31))
    assert got["content"]["text"] == "The user is in Lisbon this week"


def test_a_retried_create_keeps_the_first_expiry_and_writes_once(
    call: Caller, clock: FixedClock
) -> None:
    memory = create_memory(call)
    first = _create(
        call, memory, "The user is in Lisbon", recordExpirySpecification=LIVES, clientToken="t" * 33
    )
    clock.advance(seconds=3600)

    again = _create(
        call, memory, "The user is in Lisbon", recordExpirySpecification=LIVES, clientToken="t" * 33
    )

    assert again == first
    assert _listed(call, memory) == [first]


def test_remove_on_create_is_refused_and_writes_nothing(call: Caller) -> None:
    memory = create_memory(call)
    body = {
        "records": [
            {
                "requestIdentifier": "r0",
                "namespaces": ["/facts/user/a1/"],
                "content": {"text": "The user is in Lisbon"},
                "timestamp": T0,
            }
        ],
        "recordExpirySpecification": REMOVE,
    }

    reply = call("POST", records_path(memory, "/batchCreate"), body)

    assert reply.status == 400
    assert "recordExpirySpecification.action" in reply.body["message"]
    assert _listed(call, memory) == []


def _update(call: Caller, memory: dict[str, Any], record_id: str, **extra: Any) -> None:
    body = {"records": [{"memoryRecordId": record_id, "timestamp": T0 + 60}], **extra}
    reply = call("POST", records_path(memory, "/batchUpdate"), body)
    assert [r["memoryRecordId"] for r in reply.body["successfulRecords"]] == [record_id]


def _expires(call: Caller, memory: dict[str, Any], record_id: str) -> object:
    got = call("GET", f"/memories/{memory['id']}/memoryRecord/{record_id}").body["memoryRecord"]
    return got.get("expiresAt")


def test_an_update_reapplies_the_last_days_and_remove_clears_them(
    call: Caller, clock: FixedClock
) -> None:
    memory = create_memory(call)
    record_id = _create(call, memory, "The user is in Lisbon", recordExpirySpecification=LIVES)
    clock.advance(seconds=10 * 86_400)

    _update(call, memory, record_id)  # no specification: the 31 days again, from now
    reapplied = _expires(call, memory, record_id)
    _update(call, memory, record_id, recordExpirySpecification=REMOVE)
    clock.advance(seconds=400 * 86_400)

    assert reapplied == to_epoch(clock.now() - timedelta(days=400) + timedelta(days=31))
    assert _expires(call, memory, record_id) is None
    assert _listed(call, memory) == [record_id]  # no longer expires


@pytest.fixture
def extracting(tmp_path: Path, clock: FixedClock) -> Iterator[EmbeddedApi]:
    path = tmp_path / "extracting.db"
    embedded = serve_embedded(
        SQLiteBackend(path, clock).stores(),
        path,
        embedder=HashingEmbedder(),
        model=offline_model(),
        clock=clock,
        start_worker=False,
        built_in_triggers=BUILT_IN_TRIGGERS,
    )
    yield embedded
    embedded.close()


def test_records_a_strategy_extracts_expire_after_its_days(
    extracting: EmbeddedApi, clock: FixedClock
) -> None:
    call = Caller(extracting.api)
    strategy = {
        "semanticMemoryStrategy": {
            "name": "facts",
            "namespaceTemplates": ["/facts/{actorId}/"],
            "recordExpirySpecification": LIVES,
        }
    }
    memory = create_memory(call, memoryStrategies=[strategy])
    staged_at = clock.now()

    post_turns(call, memory["id"])
    extracting.extraction.worker.run_once()

    (record_id,) = _listed(call, memory)
    got = call("GET", f"/memories/{memory['id']}/memoryRecord/{record_id}").body["memoryRecord"]
    assert got["expiresAt"] == to_epoch(staged_at + timedelta(days=31))
    shown = call("GET", f"/memories/{memory['id']}/details").body["memory"]["strategies"]
    assert [s["recordExpiryDurationDays"] for s in shown] == [31]

    clock.advance(seconds=31 * 86_400)

    assert _listed(call, memory) == []
    assert _retrieved(call, memory, "office Porto") == []
