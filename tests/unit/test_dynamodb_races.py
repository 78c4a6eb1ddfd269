"""The races the DynamoDB condition expressions close, played for real on moto.

A botocore hook runs a second writer at the worst moment: after a store has read the heads,
just before its TransactWriteItems is sent. Nothing is mocked; both writers use the backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from cairn.changes import Create, FoldIn, NewRecord, RecordPatch, Revise, Vector
from cairn.clock import FixedClock
from cairn.errors import SnapshotConflictError
from cairn.models import ERASED_CONTENT, EmbedderId, Scope, Source, SourceKind, Status
from cairn.ports import Stores, VectorWriter
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.schema import TABLES, create_table_request

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
USER = (Source(kind=SourceKind.USER),)


def fact(content: str, **kwargs: Any) -> NewRecord:
    return NewRecord(namespace="/facts/tg:1/", content=content, sources=USER, **kwargs)


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        made = boto3.client("dynamodb", region_name="us-east-1")
        for table in TABLES:
            made.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
        yield made


@pytest.fixture
def stores(client: Any) -> Stores:
    backend = DynamoDBBackend(
        client, items_table="cairn-items", events_table="cairn-events", clock=FixedClock()
    )
    return backend.stores()


def before_next_transaction(client: Any, meanwhile: Callable[[], object]) -> None:
    """Run ``meanwhile`` once, right before the next TransactWriteItems leaves the client."""
    fired: list[bool] = []

    def hook(**_: Any) -> None:
        if not fired:
            fired.append(True)  # first, so the writer's own transaction does not re-enter
            meanwhile()

    client.meta.events.register("before-call.dynamodb.TransactWriteItems", hook)


def test_a_head_moved_after_the_read_fails_the_apply_and_names_it(
    client: Any, stores: Stores
) -> None:
    created = stores.records.apply(SCOPE, [Create(record=fact("Likes tea"))])[0]
    rid = created.record_id
    before_next_transaction(client, lambda: stores.records.apply(SCOPE, [FoldIn(record_id=rid)]))

    with pytest.raises(SnapshotConflictError) as raised:
        stores.records.apply(
            SCOPE, [Revise(record_id=rid, patch=RecordPatch(content="Likes coffee"))]
        )

    assert raised.value.moved == ((rid, 1, 2),)
    history = stores.records.history(SCOPE, rid)
    assert [(v.version, v.content, v.seen_count) for v in history] == [
        (1, "Likes tea", 1),
        (2, "Likes tea", 2),
    ]


def test_two_creates_of_one_record_id_commit_once(client: Any, stores: Stores) -> None:
    mine = fact("Plays chess")
    theirs = fact("Plays go", record_id=mine.record_id)
    before_next_transaction(client, lambda: stores.records.apply(SCOPE, [Create(record=theirs)]))

    with pytest.raises(SnapshotConflictError) as raised:
        stores.records.apply(SCOPE, [Create(record=mine)])

    assert raised.value.moved == ((mine.record_id, 0, 1),)
    assert [v.content for v in stores.records.history(SCOPE, mine.record_id)] == ["Plays go"]


def test_a_snapshot_record_moved_after_the_read_fails_the_apply(
    client: Any, stores: Stores
) -> None:
    watched = stores.records.apply(SCOPE, [Create(record=fact("Owns a bike"))])[0]
    rid = watched.record_id
    before_next_transaction(client, lambda: stores.records.apply(SCOPE, [FoldIn(record_id=rid)]))

    with pytest.raises(SnapshotConflictError) as raised:
        stores.records.apply(SCOPE, [Create(record=fact("Rides to work"))], snapshot={rid: 1})

    assert raised.value.moved == ((rid, 1, 2),)
    assert [v.record_id for v in stores.records.list_records(SCOPE).items] == [rid]


def test_an_erase_between_read_and_write_stops_the_apply(client: Any, stores: Stores) -> None:
    private = stores.records.apply(SCOPE, [Create(record=fact("Takes insulin"))])[0]
    rid = private.record_id
    before_next_transaction(client, lambda: stores.records.erase(SCOPE, rid))

    with pytest.raises(SnapshotConflictError):
        stores.records.apply(
            SCOPE, [Revise(record_id=rid, patch=RecordPatch(body="Takes insulin daily"))]
        )

    history = stores.records.history(SCOPE, rid)
    assert [(v.version, v.status, v.content, v.body) for v in history] == [
        (1, Status.ERASED, ERASED_CONTENT, None)
    ]


def test_an_apply_during_an_erase_is_erased_too(client: Any, stores: Stores) -> None:
    private = stores.records.apply(SCOPE, [Create(record=fact("Takes insulin"))])[0]
    rid = private.record_id
    revise = Revise(record_id=rid, patch=RecordPatch(body="daily, with meals"))
    before_next_transaction(client, lambda: stores.records.apply(SCOPE, [revise]))

    report = stores.records.erase(SCOPE, rid)

    assert report.versions == 2
    history = stores.records.history(SCOPE, rid)
    assert [(v.version, v.status, v.body) for v in history] == [
        (1, Status.ERASED, None),
        (2, Status.ERASED, None),
    ]


def test_a_head_revised_while_its_vector_is_stored_is_left_and_the_rest_stored(
    client: Any, stores: Stores
) -> None:
    moving, staying = stores.records.apply(
        SCOPE, [Create(record=fact("Lives in Porto")), Create(record=fact("Owns a bike"))]
    )
    embedder = EmbedderId(model_id="next-embedder", dims=2)
    writer = stores.records
    assert isinstance(writer, VectorWriter)
    before_next_transaction(
        client,
        lambda: stores.records.apply(
            SCOPE, [Revise(record_id=moving.record_id, patch=RecordPatch(content="Lives in Braga"))]
        ),
    )

    stored = writer.add_vectors(
        SCOPE,
        [
            (moving.ref, Vector(embedder=embedder, values=(1.0, 0.0))),
            (staying.ref, Vector(embedder=embedder, values=(0.0, 1.0))),
        ],
    )

    assert stored == 1  # the batch failed on the moved head, was read again and sent without it
    found = stores.records.vectors(SCOPE, [moving.ref, staying.ref], embedder)
    assert set(found) == {staying.ref}
    head = stores.records.get(SCOPE, moving.record_id)
    assert head.content == "Lives in Braga"
    assert stores.records.vectors(SCOPE, [head.ref], embedder) == {}
