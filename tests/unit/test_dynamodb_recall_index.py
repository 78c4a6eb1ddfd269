"""The deployed recall index on moto: DynamoDB generations, index objects in S3.

A warm process answers a recall with one GetItem (the scope's generation); a cold one fetches
the scope's index object instead of reading every head and vector; an object at another
generation, corrupt, or out of reach is never an answer (the table is read, the object
rewritten); an erase leaves no erased content or vector bytes in the bucket, even when a
rebuild races it. Requests are counted on the wire (``cairn.testing.requests.RequestLog``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, cast

import boto3
import numpy as np
import pytest
from moto import mock_aws

from cairn.aws.s3_index_objects import KEY_PREFIX, S3IndexObjects, scope_prefix
from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import EmbedderId, Scope, Source, SourceKind
from cairn.ports import BuildProgress, IndexRow, Stores
from cairn.recall import RecallQuery, Recollection, recall
from cairn.recall.index import EmbeddedRecallIndex, index_of
from cairn.recall.index.objects import ObjectRowSource
from cairn.recall.scan import ScanningRecallIndex
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.schema import TABLES, create_table_request
from cairn.testing import HashingEmbedder
from cairn.testing.requests import RequestLog

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
OTHER = Scope(memory_id="m1", actor_id="tg:2")
EMBEDDER = HashingEmbedder(dims=32)
BUCKET = "cairn-rollouts"
PRIVATE = "Keeps the spare key under the blue flowerpot"
QUERY = RecallQuery(text="where is the spare key kept", top_k=5)


@dataclasses.dataclass
class World:
    dynamodb: Any
    s3: Any
    clock: FixedClock
    db_log: RequestLog
    s3_log: RequestLog

    def open(self, bucket: str = BUCKET) -> Stores:
        """A fresh backend over the same tables: what a cold Lambda builds."""
        return DynamoDBBackend(
            self.dynamodb,
            items_table="cairn-items",
            events_table="cairn-events",
            clock=self.clock,
            index_objects=S3IndexObjects(self.s3, bucket=bucket),
        ).stores()

    def objects(self) -> dict[str, bytes]:
        listed = self.s3.list_objects_v2(Bucket=BUCKET, Prefix=KEY_PREFIX).get("Contents", [])
        return {
            o["Key"]: self.s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read() for o in listed
        }


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_PRIVATE_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        s3 = boto3.client("s3", region_name="us-east-1")
        for table in TABLES:
            dynamodb.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
        s3.create_bucket(Bucket=BUCKET)
        yield World(dynamodb, s3, FixedClock(), RequestLog(dynamodb), RequestLog(s3, "s3"))


def record(content: str) -> NewRecord:
    values = tuple(float(x) for x in EMBEDDER.embed([content])[0])
    return NewRecord(
        namespace="/facts/tg:1/",
        content=content,
        sources=(Source(kind=SourceKind.USER, session_id="s1"),),
        vector=Vector(embedder=EMBEDDER.identity, values=values),
    )


def fill(
    stores: Stores, count: int = 120, scope: Scope = SCOPE, private: str = PRIVATE
) -> list[str]:
    ids: list[str] = []
    for start in range(0, count, 16):
        batch = [
            Create(record=record(f"Fact number {i} about topic {i % 7}"))
            for i in range(start, min(start + 16, count))
        ]
        ids += [v.record_id for v in stores.records.apply(scope, batch)]
    (kept,) = stores.records.apply(scope, [Create(record=record(private))])
    return [*ids, kept.record_id]


def recalled(stores: Stores, clock: FixedClock, scope: Scope = SCOPE) -> Recollection:
    return recall(scope, QUERY, stores=stores, embedder=EMBEDDER, clock=clock, journal=False)


def scanned(stores: Stores, clock: FixedClock) -> Recollection:
    index = ScanningRecallIndex(stores.records)
    return recall(
        SCOPE, QUERY, stores=stores, embedder=EMBEDDER, clock=clock, journal=False, index=index
    )


def seen(found: Recollection) -> tuple[object, ...]:
    return found.block, tuple((e.version.ref, e.score) for e in found.entries), found.counts


def source_of(stores: Stores) -> ObjectRowSource:
    source = cast(EmbeddedRecallIndex, index_of(stores)).source
    assert source is not None
    return source


def test_a_warm_recall_reads_one_generation_item_and_nothing_else(world: World) -> None:
    stores = world.open()
    fill(stores)
    first = recalled(stores, world.clock)  # builds the snapshot and the object

    db = world.db_log.during(lambda: recalled(stores, world.clock))
    s3 = world.s3_log.during(lambda: recalled(stores, world.clock))

    assert db == ["GetItem"]
    assert s3 == []
    assert PRIVATE in first.block
    assert seen(recalled(stores, world.clock)) == seen(scanned(stores, world.clock))


def test_a_cold_process_fetches_the_object_instead_of_reading_the_table(world: World) -> None:
    writer = world.open()
    fill(writer)
    before = recalled(writer, world.clock)
    cold = world.open()

    db = world.db_log.during(lambda: world.s3_log.during(lambda: recalled(cold, world.clock)))

    assert db == ["GetItem"]  # the generation; no Query of heads, no BatchGetItem of vectors
    assert world.s3_log.operations[-1:] == ["GetObject"]
    assert source_of(cold).fetched == 1
    assert source_of(cold).rebuilt == 0
    assert seen(recalled(cold, world.clock)) == seen(before)


def test_an_object_at_another_generation_is_never_the_answer(world: World) -> None:
    first, second = world.open(), world.open()
    fill(first, count=40)
    recalled(first, world.clock)  # object at the generation before the next write
    newer = "Moved the spare key to the garden shed"
    second.records.apply(SCOPE, [Create(record=record(newer))])
    cold = world.open()

    found = recalled(cold, world.clock)

    assert newer in found.block
    assert seen(found) == seen(scanned(cold, world.clock))
    assert source_of(cold).rebuilt == 1  # the table was read, the object rewritten
    db = world.db_log.during(lambda: recalled(first, world.clock))  # warm at the old generation
    assert db == ["GetItem"]  # downloaded the rewritten object: no table read
    assert source_of(first).fetched == 1
    assert seen(recalled(first, world.clock)) == seen(found)


def test_a_stale_object_seen_before_is_not_downloaded_again(world: World) -> None:
    stores, writer = world.open(), world.open()
    fill(stores, count=40)
    recalled(stores, world.clock)
    writer.records.apply(SCOPE, [Create(record=record("Painted the front door green"))])

    s3 = world.s3_log.during(lambda: recalled(stores, world.clock))

    # GetObject with If-None-Match: S3 answers 304 (no body), the table is read, and the
    # object rewritten, then checked against the generation once more.
    assert s3 == ["GetObject", "PutObject"]
    assert source_of(stores).rebuilt == 2


@pytest.mark.parametrize("garbage", [b"", b"CAIRNIX1\x05\x00\x00\x00{", b"not an index"])
def test_a_corrupt_object_is_read_past_and_rewritten(world: World, garbage: bytes) -> None:
    stores = world.open()
    fill(stores, count=40)
    recalled(stores, world.clock)
    (key,) = world.objects()
    world.s3.put_object(Bucket=BUCKET, Key=key, Body=garbage)
    cold = world.open()

    found = recalled(cold, world.clock)

    assert seen(found) == seen(scanned(cold, world.clock))
    assert world.objects()[key] != garbage
    assert source_of(world.open()).fetched == 0
    assert seen(recalled(world.open(), world.clock)) == seen(found)


def test_an_unreachable_bucket_still_answers_from_the_table(world: World) -> None:
    stores = world.open(bucket="no-such-bucket")
    fill(stores, count=40)

    found = recalled(stores, world.clock)

    assert PRIVATE in found.block
    assert seen(found) == seen(scanned(stores, world.clock))


def vector_bytes(content: str) -> bytes:
    return np.asarray(EMBEDDER.embed([content])[0], dtype="<f4").tobytes()


def test_erase_leaves_no_erased_content_or_vector_in_the_bucket(world: World) -> None:
    stores = world.open()
    ids = fill(stores, count=40)
    fill(stores, count=3, scope=OTHER, private="Another actor keeps a key too")
    recalled(stores, world.clock)
    recalled(stores, world.clock, scope=OTHER)
    assert any(PRIVATE.encode() in body for body in world.objects().values())

    stores.records.erase(SCOPE, ids[-1])

    bodies = world.objects().values()
    assert not any(PRIVATE.encode() in body or vector_bytes(PRIVATE) in body for body in bodies)
    assert PRIVATE not in recalled(world.open(), world.clock).block
    assert any(k.startswith(scope_prefix(OTHER)) for k in world.objects())  # untouched
    stores.records.erase_scope(SCOPE)
    assert not any(k.startswith(scope_prefix(SCOPE)) for k in world.objects())


class EraseWhileReading:
    """A record store whose ``index_rows`` returns rows read just before an erase commits:
    the rebuild that races an erase, played in order."""

    def __init__(self, stores: Stores, record_id: str) -> None:
        self._stores = stores
        self._record_id = record_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stores.records, name)

    def index_rows(
        self, scope: Scope, embedder: EmbedderId | None, progress: BuildProgress | None = None
    ) -> list[IndexRow]:
        rows: list[IndexRow] = self._stores.records.index_rows(scope, embedder, progress)  # type: ignore[attr-defined]
        self._stores.records.erase(scope, self._record_id)  # commits, deletes the objects
        return rows


def test_a_rebuild_racing_an_erase_leaves_no_erased_bytes(world: World) -> None:
    stores = world.open()
    ids = fill(stores, count=40)
    assert stores.generations is not None
    assert stores.index_objects is not None
    racing = ObjectRowSource(
        cast(Any, EraseWhileReading(stores, ids[-1])),
        stores.generations,
        stores.index_objects,
        bulk=True,
    )
    generation = stores.generations.generation(SCOPE)

    rows = racing.rows(SCOPE, EMBEDDER.identity, generation)

    assert any(row.content == PRIVATE for row in rows)  # what the reader read, pre-erase
    bodies = world.objects().values()
    assert not any(PRIVATE.encode() in body or vector_bytes(PRIVATE) in body for body in bodies)
    assert PRIVATE not in recalled(world.open(), world.clock).block
