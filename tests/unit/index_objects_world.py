"""The deployed recall index on moto, shared by its tests: DynamoDB tables and an S3 bucket of
index objects, requests counted on the wire (``cairn.testing.requests.RequestLog``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, cast

import boto3
import numpy as np
import pytest
from moto import mock_aws

from cairn.aws.s3_index_objects import KEY_PREFIX, S3IndexObjects
from cairn.changes import Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import Scope, Source, SourceKind
from cairn.ports import Stores
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


def moto_world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """The ``world`` fixture of the tests that use these helpers."""
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


def vector_bytes(content: str) -> bytes:
    return np.asarray(EMBEDDER.embed([content])[0], dtype="<f4").tobytes()
