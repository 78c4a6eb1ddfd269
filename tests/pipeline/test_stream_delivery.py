"""Record streaming on moto, the whole deployed path: records written through the DynamoDB
store, the items table's DynamoDB stream (keys only) read back from moto and filtered to
change items as the event source mapping's filter does, the delivery function's handler fed
those stream records, and a real moto Kinesis stream read with GetRecords.

What it proves: one event per version written, in the scope's sequence order, with a distinct
``eventId``; an erasure is one tombstone event; FULL_CONTENT events carry the version's content
but never an erased record's (its earlier changes, delivered after the erasure, are tombstones
too); a redelivery (a crash after the put, before the cursor moved) repeats events with the
same ``eventId``s, so a consumer deduplicating by id sees each change exactly once."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cairn.changes import Create, FoldIn, RecordPatch, Retract, Revise
from cairn.memories import StreamDelivery
from cairn.models import EmbedderId, Scope
from cairn.ports import VectorWriter
from tests.conformance.api_state import T0, memory
from tests.conformance.samples import new_fact, vector
from tests.pipeline.aws import Deployment

PRIVATE = "my locker code is 4417"


def _stream_records(session: Any, table: str) -> list[dict[str, Any]]:
    """The items table's stream records that name change items (the mapping's filter)."""
    dynamodb = session.client("dynamodb")
    # botocore derives an account endpoint from the stream ARN, which moto does not route.
    streams = session.client(
        "dynamodbstreams", endpoint_url="https://streams.dynamodb.us-east-1.amazonaws.com"
    )
    arn = dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    found: list[dict[str, Any]] = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        found += streams.get_records(ShardIterator=iterator)["Records"]
    return [r for r in found if r["dynamodb"]["Keys"]["sk"]["S"].startswith("CH#")]


def _kinesis_events(session: Any, stream: str) -> list[dict[str, Any]]:
    kinesis = session.client("kinesis")
    events: list[dict[str, Any]] = []
    for shard in kinesis.list_shards(StreamName=stream)["Shards"]:
        iterator = kinesis.get_shard_iterator(
            StreamName=stream, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        events += [
            json.loads(r["Data"]) for r in kinesis.get_records(ShardIterator=iterator)["Records"]
        ]
    return events


@pytest.fixture
def streamed(session: Any, deployment: Deployment) -> tuple[Any, str, Scope]:
    """The items table with its stream on (as the stack has it), a Kinesis stream, and a
    memory whose delivery is FULL_CONTENT to it."""
    session.client("dynamodb").update_table(
        TableName=deployment.items_table,
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
    )
    kinesis = session.client("kinesis")
    kinesis.create_stream(StreamName="memory-records", ShardCount=1)
    arn = kinesis.describe_stream_summary(StreamName="memory-records")["StreamDescriptionSummary"][
        "StreamARN"
    ]
    from functions._common import wiring

    config = memory(stream=StreamDelivery(data_stream_arn=arn, level="FULL_CONTENT", enabled_at=T0))
    stores = wiring.stores()
    assert stores.memories is not None
    stores.memories.create(config)
    return stores, "memory-records", Scope(memory_id=config.memory_id, actor_id="a1")


def _deliver(session: Any, deployment: Deployment) -> dict[str, Any]:
    from functions.stream_delivery.handler import deliver

    return deliver({"Records": _stream_records(session, deployment.items_table)})


def test_every_version_is_one_event_and_an_erasure_one_tombstone(
    session: Any, deployment: Deployment, streamed: tuple[Any, str, Scope]
) -> None:
    stores, stream, scope = streamed
    namespace = "/facts/a1/"
    (tea,) = stores.records.apply(
        scope, [Create(record=new_fact("Drinks green tea", namespace=namespace))]
    )
    stores.records.apply(
        scope, [Revise(record_id=tea.record_id, patch=RecordPatch(content="Drinks black tea"))]
    )
    stores.records.apply(scope, [FoldIn(record_id=tea.record_id)])
    (dog,) = stores.records.apply(
        scope, [Create(record=new_fact("Has a dog named Milo", namespace=namespace))]
    )
    stores.records.apply(scope, [Retract(record_id=dog.record_id)])

    assert _deliver(session, deployment) == {"batchItemFailures": []}
    events = _kinesis_events(session, stream)

    assert [(e["memoryRecordId"], e["version"], e["eventType"]) for e in events] == [
        (tea.record_id, 1, "MemoryRecordCreated"),
        (tea.record_id, 2, "MemoryRecordUpdated"),
        (tea.record_id, 3, "MemoryRecordUpdated"),
        (dog.record_id, 1, "MemoryRecordCreated"),
        (dog.record_id, 2, "MemoryRecordDeleted"),
    ]
    assert [e["sequence"] for e in events] == [1, 2, 3, 4, 5]
    assert len({e["eventId"] for e in events}) == 5
    assert [e["content"]["text"] for e in events[:2]] == ["Drinks green tea", "Drinks black tea"]

    stores.records.erase(scope, tea.record_id)
    _deliver(session, deployment)
    (tombstone,) = _kinesis_events(session, stream)[5:]
    assert (tombstone["memoryRecordId"], tombstone["eventType"], tombstone["change"]) == (
        tea.record_id,
        "MemoryRecordDeleted",
        "erased",
    )
    assert tombstone["tombstone"] is True
    assert "content" not in tombstone
    assert "namespaces" not in tombstone


def test_an_erased_records_earlier_changes_are_delivered_without_content(
    session: Any, deployment: Deployment, streamed: tuple[Any, str, Scope]
) -> None:
    stores, stream, scope = streamed
    (secret,) = stores.records.apply(
        scope, [Create(record=new_fact(PRIVATE, namespace="/facts/a1/"))]
    )
    stores.records.apply(scope, [FoldIn(record_id=secret.record_id)])
    stores.records.erase(scope, secret.record_id)  # before the deliverer ran

    _deliver(session, deployment)
    events = _kinesis_events(session, stream)

    assert [(e["version"], e["change"]) for e in events] == [
        (1, "created"),
        (2, "updated"),
        (2, "erased"),
    ]
    assert all(e["tombstone"] is True for e in events)
    assert "4417" not in json.dumps(events)


def test_a_redelivery_repeats_the_same_event_ids(
    session: Any,
    deployment: Deployment,
    streamed: tuple[Any, str, Scope],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stores, stream, scope = streamed
    for content in ("Drinks green tea", "Lives in Porto"):
        stores.records.apply(scope, [Create(record=new_fact(content, namespace="/facts/a1/"))])
    from functions._common import wiring

    cursors = wiring.stream_cursors()
    crashed: list[bool] = []

    def crash_before_the_cursor_moves(scope: Scope, to: int, stream_arn: str) -> None:
        crashed.append(True)
        raise RuntimeError("killed after the put")  # not a CairnError: the invocation dies

    monkeypatch.setattr(cursors, "advance", crash_before_the_cursor_moves)
    with pytest.raises(RuntimeError):
        _deliver(session, deployment)
    monkeypatch.undo()
    _deliver(session, deployment)  # the event source mapping retries the batch

    events = _kinesis_events(session, stream)
    assert crashed
    assert len(events) == 4
    assert [e["eventId"] for e in events[:2]] == [e["eventId"] for e in events[2:]]
    assert len({e["eventId"] for e in events}) == 2  # a consumer deduplicating sees each once
    _deliver(session, deployment)
    assert len(_kinesis_events(session, stream)) == 4  # the cursor moved: nothing again


def test_a_re_embedded_change_is_passed_over_and_the_next_write_delivered(
    session: Any, deployment: Deployment, streamed: tuple[Any, str, Scope]
) -> None:
    stores, stream, scope = streamed
    (tea,) = stores.records.apply(
        scope, [Create(record=new_fact("Drinks green tea", namespace="/facts/a1/"))]
    )
    other = EmbedderId(model_id="next-embedder", dims=3)
    assert isinstance(stores.records, VectorWriter)
    assert stores.changes is not None
    assert stores.records.add_vectors(scope, [(tea.ref, vector(1, 0, 0, embedder=other))]) == 1
    stores.records.apply(scope, [FoldIn(record_id=tea.record_id)])

    assert _deliver(session, deployment) == {"batchItemFailures": []}

    assert stores.changes.last_sequence(scope) == 3  # created, re-embedded, updated
    events = _kinesis_events(session, stream)
    assert [(e["sequence"], e["change"]) for e in events] == [(1, "created"), (3, "updated")]
    _deliver(session, deployment)
    assert len(_kinesis_events(session, stream)) == 2  # the cursor moved past it


def test_a_memory_without_delivery_puts_nothing_and_a_metadata_event_carries_no_content(
    session: Any, deployment: Deployment, streamed: tuple[Any, str, Scope]
) -> None:
    stores, stream, scope = streamed
    config = stores.memories.get(scope.memory_id)
    assert config.stream is not None
    metadata = config.stream.model_copy(update={"level": "METADATA_ONLY"})
    stores.memories.replace(config.revised(T0, stream=metadata), expected_revision=config.revision)
    stores.records.apply(scope, [Create(record=new_fact(PRIVATE, namespace="/facts/a1/"))])
    _deliver(session, deployment)
    (event,) = _kinesis_events(session, stream)
    assert event["namespaces"] == ["/facts/a1/"]
    assert "content" not in event
    assert "4417" not in json.dumps(event)

    config = stores.memories.get(scope.memory_id)
    stores.memories.replace(config.revised(T0, stream=None), expected_revision=config.revision)
    stores.records.apply(scope, [Create(record=new_fact("Lives in Porto", namespace="/facts/a1/"))])
    _deliver(session, deployment)
    assert len(_kinesis_events(session, stream)) == 1


def test_a_deleted_memorys_erasures_reach_the_stream_it_delivered_to(
    session: Any, deployment: Deployment, streamed: tuple[Any, str, Scope]
) -> None:
    stores, stream, scope = streamed
    (secret,) = stores.records.apply(
        scope, [Create(record=new_fact(PRIVATE, namespace="/facts/a1/"))]
    )
    _deliver(session, deployment)  # the consumer was sent the content

    stores.records.erase_scope(scope)  # DeleteMemory: every record erased, then the config
    stores.memories.delete(scope.memory_id)
    _deliver(session, deployment)

    created, erased = _kinesis_events(session, stream)
    assert created["content"]["text"] == PRIVATE
    assert (erased["memoryRecordId"], erased["change"]) == (secret.record_id, "erased")
    assert erased["tombstone"] is True
    assert "4417" not in json.dumps(erased)
