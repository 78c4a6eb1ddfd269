"""Recall over DynamoDB + S3 served by moto: requests per recall before and after the index.

moto answers in process, so its times say how much work the library and the requests do here,
not what DynamoDB or S3 would take; the request counts carry over (each a round trip and a
bill line). The scope holds the speed benchmark's facts and vectors (user-sourced
facts with vectors, as ``cairn remember`` writes them), 16 records a batch, written by the
product's own ``apply`` (versions, heads, the scope's generation and change feed, the actor
marker) with its transactions sent as BatchWriteItem and UpdateItem (``moto_seed``; the items
are byte for byte the shipped transaction's), because moto deep-copies the whole table for
every item of a transaction (quadratic: 600 MB and a minute for 400 records); for the same
reason moto's transactions here keep only the items they name for their rollback
(``moto_rollback``: the same requests and answers). The recall reads and writes what it
would. Five
ways of one recall as shipped (default policy, journal written, query embedded by ONNX):

- **before**: every live head and vector read per recall (what main did: ``list_records`` on
  the ``live`` index, then ``vectors``), i.e. ``TransientRecallIndex(bulk=False)``;
- **cold**: a fresh process (new backend, empty cache), the scope's object current in S3;
- **warm**: the same process again, nothing written meanwhile;
- **after a write**: another process wrote one record; the warm process finds its object one
  write behind and catches it up with the scope's change feed (``cairn.recall.index.
  object_patch``: the changes since the object, the one changed head and its vector), then
  rewrites the object;
- **cold after a write**: another process wrote one record; a fresh process downloads the
  object one write behind and catches it up the same way.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from benchmarks.moto_rollback import sorted_once, touched_item_rollback
from benchmarks.moto_seed import moto_backend, seeding_store, sort_partitions
from benchmarks.speed_recall import NOW, SCOPE, SESSION_FACTS, STARTED
from benchmarks.timing import Timing
from cairn.changes import MAX_CHANGES_PER_APPLY, Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import Source, SourceKind
from cairn.ports import Embedder, FloatMatrix, Stores
from cairn.recall import RecallQuery, recall
from cairn.recall.index import RecallIndex, TransientRecallIndex
from cairn.store.dynamodb.records import DynamoDBRecordStore
from cairn.testing.requests import RequestLog

WAYS = ("before", "cold", "warm", "after a write", "cold after a write")
_REGION = "us-east-1"
_BUCKET = "cairn-bench-index"


@dataclass
class Way:
    """One way of recalling: the requests of one recall and the times of several."""

    name: str
    requests: Counter[str] = field(default_factory=Counter)
    samples: list[float] = field(default_factory=list)

    @property
    def timing(self) -> Timing:
        return Timing(tuple(self.samples))


@dataclass
class MotoSize:
    records: int
    ways: dict[str, Way]
    object_bytes: int


@dataclass
class World:
    dynamodb: Any
    s3: Any
    db_log: RequestLog
    s3_log: RequestLog
    seeder: DynamoDBRecordStore  # the product's apply, its transactions sent in bulk

    def open(self) -> Stores:
        """A new process's stores over the same tables and bucket (its caches empty)."""
        from cairn.aws.s3_index_objects import S3IndexObjects
        from cairn.store.dynamodb import DynamoDBBackend

        return DynamoDBBackend(
            self.dynamodb,
            items_table="cairn-items",
            events_table="cairn-events",
            clock=FixedClock(NOW),
            index_objects=S3IndexObjects(self.s3, bucket=_BUCKET),
        ).stores()

    def object_bytes(self) -> int:
        listed = self.s3.list_objects_v2(Bucket=_BUCKET).get("Contents", [])
        return sum(int(o["Size"]) for o in listed)


@contextmanager
def moto_world() -> Iterator[World]:
    import boto3
    from moto import mock_aws

    from cairn.store.dynamodb.schema import TABLES, create_table_request

    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench")  # noqa: S106
    try:
        with mock_aws(), touched_item_rollback(), sorted_once():
            dynamodb = boto3.client("dynamodb", region_name=_REGION)
            s3 = boto3.client("s3", region_name=_REGION)
            for table in TABLES:
                dynamodb.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
            s3.create_bucket(Bucket=_BUCKET)
            backend = moto_backend(_REGION)
            seeder = seeding_store(dynamodb, "cairn-items", FixedClock(NOW), backend=backend)
            yield World(dynamodb, s3, RequestLog(dynamodb), RequestLog(s3, "s3"), seeder)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def measure(
    facts: Sequence[str],
    vectors: FloatMatrix,
    onnx: Embedder,
    questions: Sequence[str],
    runs: dict[int, int],
    *,
    before_up_to: int = 10_000,
) -> list[MotoSize]:
    """The ways at each size of ``runs`` (records -> runs per way), filled on the way up;
    ``before`` (the whole-scope read, minutes a recall on moto at 10,000 records) only up to
    ``before_up_to`` records."""
    found: list[MotoSize] = []
    with moto_world() as world:
        writer, written = world.open(), 0
        for size in sorted(runs):
            began = time.perf_counter()
            _fill(world, onnx, facts, vectors, (written, size))
            sort_partitions(moto_backend(_REGION), "cairn-items")
            _note(f"{size:,} records seeded", began)
            written = size
            found.append(
                _at_size(world, writer, size, onnx, questions, runs[size], size <= before_up_to)
            )
    return found


def _at_size(
    world: World,
    writer: Stores,
    size: int,
    onnx: Embedder,
    questions: Sequence[str],
    runs: int,
    before_too: bool = True,
) -> MotoSize:
    clock = FixedClock(NOW)
    ways = {name: Way(name) for name in WAYS}

    def ask(stores: Stores, i: int, index: RecallIndex | None = None) -> None:
        query = RecallQuery(text=questions[i % len(questions)])
        recall(SCOPE, query, stores=stores, embedder=onnx, clock=clock, index=index)

    def timed(way: str, i: int, stores: Stores, index: RecallIndex | None = None) -> None:
        db, s3 = len(world.db_log.operations), len(world.s3_log.operations)
        started = time.perf_counter()
        ask(stores, i, index)
        ways[way].samples.append((time.perf_counter() - started) * 1000)
        _note(f"{size:,} records, {way}", started)
        if i == 0:
            ways[way].requests = Counter(world.db_log.operations[db:])
            ways[way].requests.update(f"S3 {op}" for op in world.s3_log.operations[s3:])

    before = TransientRecallIndex(writer.records, bulk=False)
    warm = world.open()
    began = time.perf_counter()
    ask(warm, 0)  # builds the object at the current generation
    _note("the object built by a recall that read the scope whole", began)
    for i in range(runs):
        if before_too:
            timed("before", i, writer, before)
        timed("cold", i, world.open())
        timed("warm", i, warm)
    for i in range(runs):
        _write_one(world, onnx, size + 2 * i)
        timed("after a write", i, warm)
        _write_one(world, onnx, size + 2 * i + 1)
        timed("cold after a write", i, world.open())
    return MotoSize(records=size, ways=ways, object_bytes=world.object_bytes())


def _note(what: str, began: float) -> None:
    """A step's wall time on stderr (where a long run spends it)."""
    print(f"speed_moto: {what}: {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)


def _write_one(world: World, onnx: Embedder, i: int) -> None:
    content = f"Noted on day {i}: the user renewed the library card"
    vector = onnx.embed([content])[0]
    _put(world, onnx, [(content, vector, "s-bench-write", NOW)])


def _fill(
    world: World,
    onnx: Embedder,
    facts: Sequence[str],
    vectors: FloatMatrix,
    span: tuple[int, int],
) -> None:
    """Facts ``span`` as ``speed_recall.fill`` writes them, 16 a batch (see the docstring)."""
    start, end = span
    for first in range(start, end, MAX_CHANGES_PER_APPLY):
        batch = range(first, min(end, first + MAX_CHANGES_PER_APPLY))
        _put(
            world,
            onnx,
            [
                (facts[i], vectors[i], f"s-{i // SESSION_FACTS}", STARTED + timedelta(minutes=i))
                for i in batch
            ],
        )


def _put(world: World, onnx: Embedder, records: list[tuple[str, Any, str, datetime]]) -> None:
    """One ``apply`` of these creates by the product's record store, its transaction's items
    sent by BatchWriteItem (25 a request) and UpdateItem (``moto_seed``: the same items)."""
    changes = [
        Create(
            record=NewRecord(
                namespace=f"/facts/{SCOPE.actor_id}/",
                content=content,
                sources=(Source(kind=SourceKind.USER, session_id=session),),
                seen_at=seen,
                vector=Vector(embedder=onnx.identity, values=tuple(vector.tolist())),
            )
        )
        for content, vector, session, seen in records
    ]
    world.seeder.apply(SCOPE, changes)
