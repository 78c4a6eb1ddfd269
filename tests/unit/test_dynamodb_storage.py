"""What the DynamoDB backend leaves in its tables: compact vectors, no content after erase,
nothing half-written when an item or a transaction is over DynamoDB's limits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from moto import mock_aws

from cairn.changes import Change, Create, FoldIn, NewRecord, Supersede, Vector
from cairn.clock import FixedClock
from cairn.errors import InvalidInputError
from cairn.models import (
    Conversational,
    EmbedderId,
    EventInput,
    Role,
    Scope,
    Source,
    SourceKind,
)
from cairn.ports import Stores
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.schema import TABLES, create_table_request

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
USER = (Source(kind=SourceKind.USER),)
EMBEDDER = EmbedderId(model_id="minilm", dims=384)
PRIVATE = "Was diagnosed with asthma in 2019"


@dataclass
class Tables:
    client: Any
    stores: Stores

    def scan(self, logical_name: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.client.scan(TableName=f"cairn-{logical_name}")["Items"]
        return items


@pytest.fixture
def tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tables]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        for table in TABLES:
            client.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
        backend = DynamoDBBackend(
            client, items_table="cairn-items", events_table="cairn-events", clock=FixedClock()
        )
        yield Tables(client, backend.stores())


def fact(content: str, *, vector: Vector | None = None, body: str | None = None) -> NewRecord:
    return NewRecord(
        namespace="/facts/tg:1/", content=content, sources=USER, vector=vector, body=body
    )


def turn(text: str, session: str = "s1") -> EventInput:
    return EventInput(
        session_id=session,
        event_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        payload=(Conversational(role=Role.USER, text=text),),
    )


def test_a_vector_is_stored_once_as_float32_bytes(tables: Tables) -> None:
    values = tuple(i / 384 for i in range(384))
    created = tables.stores.records.apply(
        SCOPE, [Create(record=fact("Likes tea", vector=Vector(embedder=EMBEDDER, values=values)))]
    )[0]
    tables.stores.records.apply(SCOPE, [FoldIn(record_id=created.record_id)])

    versions = [i for i in tables.scan("items") if i["sk"]["S"].startswith("V#")]

    assert [len(i["vec"]["B"]) for i in versions if "vec" in i] == [384 * 4]
    assert all("0.0026041" not in i["d"]["S"] for i in versions)  # no floats as JSON text
    found = tables.stores.records.vectors(SCOPE, [created.ref], EMBEDDER)[created.ref]
    assert found.dtype.name == "float32"
    assert found.tolist() == pytest.approx(values, rel=1e-6)


def test_erase_leaves_no_content_in_any_item(tables: Tables) -> None:
    vector = Vector(embedder=EMBEDDER, values=(1.0,) * 384)
    old = tables.stores.records.apply(SCOPE, [Create(record=fact(PRIVATE, vector=vector))])[0]
    tables.stores.records.apply(
        SCOPE,
        [Supersede(record_id=old.record_id, replacement=fact(PRIVATE + ", mild", body=PRIVATE))],
    )

    tables.stores.records.erase(SCOPE, old.record_id)

    items = tables.scan("items")
    records = [item for item in items if item["sk"]["S"].startswith(("H#", "V#"))]
    assert len(records) == 5  # two heads, three versions: tombstones keep ids and digests
    # Besides them only the record change feed's three items (created; deleted and created;
    # erased: ids, versions and kinds), the scope's erasure count, its generation (the recall
    # index's staleness check: a token, and the feed's last sequence) and the memory's marker
    # of the actor.
    others = sorted((item["pk"]["S"], item["sk"]["S"]) for item in items if item not in records)
    feed = [("R#m1|tg:1", f"CH#{first:020d}") for first in (1, 2, 4)]
    assert others == [*feed, ("R#m1|tg:1", "ERASURES"), ("R#m1|tg:1", "G"), ("RA#m1", "tg:1")]
    (generation,) = [item for item in items if item["sk"]["S"] == "G"]
    assert sorted(generation) == ["g", "pk", "q", "sk"]
    changes = [item for item in items if item["sk"]["S"].startswith("CH#")]
    assert all(sorted(item) == ["at", "c", "f", "pk", "sk"] for item in changes)
    assert all(PRIVATE not in repr(item) for item in items)
    assert all("vec" not in item and "lpk" not in item for item in items)


def test_erasing_twice_reports_the_same_and_changes_nothing(tables: Tables) -> None:
    created = tables.stores.records.apply(SCOPE, [Create(record=fact(PRIVATE))])[0]
    first = tables.stores.records.erase(SCOPE, created.record_id)
    after_first = tables.scan("items")

    second = tables.stores.records.erase(SCOPE, created.record_id)

    assert second == first
    # Every erase counts one erasure (it fences plans read before it); nothing else moves.
    assert _uncounted(tables.scan("items")) == _uncounted(after_first)


def _uncounted(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for item in items if item["sk"]["S"] != "ERASURES"]


@pytest.mark.fault("erase", "killed-before", "dynamodb")
def test_an_event_erase_interrupted_midway_finishes_when_run_again(tables: Tables) -> None:
    events = tables.stores.events
    for session in ("s1", "s2", "s2"):
        events.append(SCOPE, turn(PRIVATE, session))
    crashes = [RuntimeError("the process died here")]

    def die_once(**_: Any) -> None:
        if crashes:
            raise crashes.pop()

    tables.client.meta.events.register("before-call.dynamodb.DeleteItem", die_once)

    with pytest.raises(RuntimeError):
        events.erase_scope(SCOPE)
    events.erase_scope(SCOPE)

    assert tables.scan("events") == []
    assert events.list_sessions(SCOPE).items == ()
    assert events.list_actors(SCOPE.memory_id).items == ()


def test_an_event_over_the_item_size_limit_is_refused_and_nothing_is_written(
    tables: Tables,
) -> None:
    huge = EventInput(
        session_id="s1",
        event_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        payload=tuple(Conversational(role=Role.USER, text="é" * 50_000) for _ in range(5)),
    )

    with pytest.raises(InvalidInputError, match="split its payload"):
        tables.stores.events.append(SCOPE, huge)

    assert tables.scan("events") == []


def test_a_batch_over_the_transaction_size_limit_is_refused_and_nothing_is_written(
    tables: Tables,
) -> None:
    body = "😀" * 60_000  # 240 KB of UTF-8: two such items per record version
    batch: list[Change] = [Create(record=fact(f"Long note {i}", body=body)) for i in range(9)]

    with pytest.raises(InvalidInputError, match="split the batch"):
        tables.stores.records.apply(SCOPE, batch)

    assert tables.scan("items") == []
    assert len(tables.stores.records.apply(SCOPE, batch[:4])) == 4
