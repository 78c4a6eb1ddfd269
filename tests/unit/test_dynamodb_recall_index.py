"""The deployed recall index on moto: DynamoDB generations, index objects in S3.

A warm process answers a recall with one GetItem (the scope's generation); a cold one fetches
the scope's index object instead of reading every head and vector; an object at another
generation, corrupt, or out of reach is never an answer (the table is read, the object
rewritten); an erase leaves no erased content or vector bytes in the bucket, even when a
rebuild races it. Requests are counted on the wire (``cairn.testing.requests.RequestLog``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest

from cairn.aws.s3_index_objects import scope_prefix
from cairn.changes import Create
from cairn.models import EmbedderId, Scope
from cairn.ports import BuildProgress, IndexRow, Stores
from cairn.recall.index.objects import ObjectRowSource
from tests.unit.index_objects_world import (
    BUCKET,
    EMBEDDER,
    OTHER,
    PRIVATE,
    SCOPE,
    World,
    fill,
    moto_world,
    recalled,
    record,
    scanned,
    seen,
    source_of,
    vector_bytes,
)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    yield from moto_world(monkeypatch)


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
    assert cold.generations is not None
    generation = cold.generations.generation(SCOPE)

    db = world.db_log.during(lambda: source_of(cold).rows(SCOPE, EMBEDDER.identity, generation))

    # Caught up with the change feed, not read whole: the quarantine list, the feed's sequence
    # and its changes, the one changed head and its vector, the generation again after the put.
    assert db == ["Query", "GetItem", "Query", "BatchGetItem", "BatchGetItem", "GetItem"]
    found = recalled(cold, world.clock)
    assert newer in found.block
    assert seen(found) == seen(scanned(cold, world.clock))
    assert (source_of(cold).patched, source_of(cold).rebuilt) == (1, 0)
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

    # GetObject with If-None-Match: S3 answers 304 (no body), the rows this process holds are
    # caught up with the change feed, and the object rewritten, then checked once more.
    assert s3 == ["GetObject", "PutObject"]
    assert (source_of(stores).rebuilt, source_of(stores).patched) == (1, 1)


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
