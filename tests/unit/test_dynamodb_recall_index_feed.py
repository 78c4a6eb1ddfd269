"""A stale index object caught up with DynamoDB's record change feed, on moto.

After a write the next reader reads the changes since the object's sequence and the heads of
the records they name, never the whole scope, and answers exactly as a scan; an erased record
never returns to the bucket through a catch-up (an object left behind an erase, a catch-up
racing one); a vector stored by re-embedding is patched as any change is; an object of a
previous format, one the feed does not reach back to, or one too
many changes behind, one whose generation moved with no change in the feed, or one caught up
for longer than the bound is read whole.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator, Sequence
from typing import Any, cast

import pytest

from cairn.changes import Create, NewRecord, Retract, Supersede, Vector
from cairn.models import EmbedderId, Scope, Source, SourceKind
from cairn.ports import IndexRow, Stores, VectorWriter
from cairn.recall.index import object_patch
from cairn.recall.index.object_codec import MAGIC
from cairn.recall.index.objects import ObjectRowSource
from cairn.store.dynamodb.codec import scope_pk
from cairn.store.dynamodb.generations import generation_bump
from cairn.store.dynamodb.writes import apply_transaction
from cairn.versioning import plan_writes
from tests.unit.index_objects_world import (
    EMBEDDER,
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

# What one catch-up of one changed record reads: the quarantine list, the feed's sequence and
# its changes, the changed head and its vector; then the generation again after the put.
CATCH_UP = ["Query", "GetItem", "Query", "BatchGetItem", "BatchGetItem", "GetItem"]


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    yield from moto_world(monkeypatch)


def rows_read(world: World, stores: Stores) -> list[str]:
    """The requests of the index rows at the scope's generation now (the recall's other
    reads aside)."""
    assert stores.generations is not None
    generation = stores.generations.generation(SCOPE)
    source = source_of(stores)
    return world.db_log.during(lambda: source.rows(SCOPE, EMBEDDER.identity, generation))


def test_each_write_is_caught_up_from_the_feed_as_the_scan(world: World) -> None:
    warm, writer = world.open(), world.open()
    ids = fill(warm, count=120)
    recalled(warm, world.clock)
    spare = "Moved the spare key to the garden shed"
    no_vectors = [op for i, op in enumerate(CATCH_UP) if i != 4]  # a retract leaves no head
    writes = [
        ([Create(record=record(spare))], CATCH_UP),
        ([Supersede(record_id=ids[3], replacement=record("Fact 3 was wrong"))], CATCH_UP),
        ([Retract(record_id=ids[-1])], no_vectors),
        ([Create(record=record(f"Batch fact {i}")) for i in range(16)], CATCH_UP),
    ]
    for batch, requests in writes:
        writer.records.apply(SCOPE, batch)

        assert rows_read(world, warm) == requests
        assert seen(recalled(warm, world.clock)) == seen(scanned(warm, world.clock))
        assert seen(recalled(world.open(), world.clock)) == seen(scanned(warm, world.clock))

    assert (source_of(warm).patched, source_of(warm).rebuilt) == (len(writes), 1)
    found = recalled(warm, world.clock)
    assert spare in found.block
    assert PRIVATE not in found.block  # retracted


def test_an_object_left_behind_an_erase_is_caught_up_without_the_erased_bytes(
    world: World,
) -> None:
    # A reader that put its object after the erase's delete and died before its check leaves
    # an object holding the erased record; the next reader catches it up with the feed.
    stores = world.open()
    ids = fill(stores, count=40)
    recalled(stores, world.clock)
    ((key, left_behind),) = world.objects().items()
    stores.records.erase(SCOPE, ids[-1])
    world.s3.put_object(Bucket="cairn-rollouts", Key=key, Body=left_behind)
    cold = world.open()

    found = recalled(cold, world.clock)

    assert (source_of(cold).patched, source_of(cold).rebuilt) == (1, 0)
    assert PRIVATE not in found.block
    assert seen(found) == seen(scanned(cold, world.clock))
    body = world.objects()[key]
    assert PRIVATE.encode() not in body
    assert vector_bytes(PRIVATE) not in body


class EraseWhileCatchingUp:
    """A record store whose ``index_rows_of`` reads the changed heads just before an erase
    commits: a catch-up that races an erase, played in order."""

    def __init__(self, stores: Stores, record_id: str) -> None:
        self._stores = stores
        self._record_id = record_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stores.records, name)

    def index_rows_of(
        self, scope: Scope, embedder: EmbedderId | None, record_ids: Sequence[str]
    ) -> dict[str, IndexRow]:
        rows: dict[str, IndexRow] = self._stores.records.index_rows_of(  # type: ignore[attr-defined]
            scope, embedder, record_ids
        )
        self._stores.records.erase(scope, self._record_id)  # commits, deletes the objects
        return rows


def test_a_catch_up_racing_an_erase_leaves_no_erased_bytes(world: World) -> None:
    stores, writer = world.open(), world.open()
    ids = fill(stores, count=40)
    assert stores.generations is not None
    assert stores.index_objects is not None
    racing = ObjectRowSource(
        cast(Any, EraseWhileCatchingUp(stores, ids[-1])),
        stores.generations,
        stores.index_objects,
        bulk=True,
        changes=stores.changes,
    )
    racing.rows(SCOPE, EMBEDDER.identity, stores.generations.generation(SCOPE))  # the object
    writer.records.apply(SCOPE, [Create(record=record("Painted the front door green"))])

    rows = racing.rows(SCOPE, EMBEDDER.identity, stores.generations.generation(SCOPE))

    assert racing.patched == 1
    assert any(row.content == PRIVATE for row in rows)  # what the reader read, pre-erase
    bodies = world.objects().values()
    assert not any(PRIVATE.encode() in body or vector_bytes(PRIVATE) in body for body in bodies)
    assert PRIVATE not in recalled(world.open(), world.clock).block


def _rewrite_header(body: bytes, change: dict[str, Any]) -> bytes:
    (length,) = struct.unpack_from("<I", body, len(MAGIC))
    start = len(MAGIC) + 4
    header = {**json.loads(body[start : start + length]), **change}
    header = {k: v for k, v in header.items() if v is not None}
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return MAGIC + struct.pack("<I", len(encoded)) + encoded + body[start + length :]


@pytest.mark.parametrize(
    "header",
    [
        {"format": 2, "sequence": None, "change": None},  # written before the feed's sequence
        {"format": 3},  # written before the feed held a change for each vector re-embedded
        {"format": 4},  # a record distilled from a rollout put in its session's thread
        {"change": "0" * 32},  # another feed's change at that sequence (a restored table)
    ],
    ids=["previous-format", "before-re-embedded", "distilled-in-a-thread", "another-feed"],
)
def test_an_object_the_feed_cannot_vouch_for_is_read_whole_once(
    world: World, header: dict[str, Any]
) -> None:
    stores, writer = world.open(), world.open()
    fill(stores, count=40)
    expected = recalled(stores, world.clock)
    ((key, body),) = world.objects().items()
    world.s3.put_object(Bucket="cairn-rollouts", Key=key, Body=_rewrite_header(body, header))
    if "format" in header:  # an older format is never read, even at its own generation
        cold = world.open()
        assert seen(recalled(cold, world.clock)) == seen(expected)
        assert (source_of(cold).fetched, source_of(cold).rebuilt) == (0, 1)
        world.s3.put_object(Bucket="cairn-rollouts", Key=key, Body=_rewrite_header(body, header))
    writer.records.apply(SCOPE, [Create(record=record("Painted the front door green"))])

    first, second = world.open(), world.open()
    assert seen(recalled(first, world.clock)) == seen(scanned(first, world.clock))
    writer.records.apply(SCOPE, [Create(record=record("Fixed the gate latch"))])
    assert seen(recalled(second, world.clock)) == seen(scanned(second, world.clock))

    assert (source_of(first).rebuilt, source_of(first).patched) == (1, 0)
    assert (source_of(second).rebuilt, source_of(second).patched) == (0, 1)


def test_a_vector_stored_by_re_embedding_is_patched_like_any_change(world: World) -> None:
    warm, writer = world.open(), world.open()
    fill(warm, count=40)
    bare = NewRecord(
        namespace="/facts/tg:1/",
        content="The spare key is under the aubergine pot",
        sources=(Source(kind=SourceKind.USER, session_id="s1"),),
    )
    (unvectored,) = writer.records.apply(SCOPE, [Create(record=bare)])
    recalled(warm, world.clock)
    values = tuple(float(x) for x in EMBEDDER.embed([unvectored.content])[0])
    assert isinstance(writer.records, VectorWriter)
    stored = writer.records.add_vectors(
        SCOPE, [(unvectored.ref, Vector(embedder=EMBEDDER.identity, values=values))]
    )

    assert stored == 1
    # That head alone, not the scope: a re-embedded vector is on the head item.
    assert rows_read(world, warm) == [op for i, op in enumerate(CATCH_UP) if i != 4]
    found = recalled(warm, world.clock)
    assert seen(found) == seen(scanned(warm, world.clock))
    assert found.counts.reembedded == 0  # the stored vector was used, not made again
    assert (source_of(warm).patched, source_of(warm).rebuilt) == (1, 1)


def test_an_object_too_far_behind_is_read_whole(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(object_patch, "MAX_PATCH_CHANGES", 2)
    stores, writer = world.open(), world.open()
    fill(stores, count=40)
    recalled(stores, world.clock)
    writer.records.apply(SCOPE, [Create(record=record(f"Note {i}")) for i in range(3)])

    assert seen(recalled(stores, world.clock)) == seen(scanned(stores, world.clock))
    assert (source_of(stores).rebuilt, source_of(stores).patched) == (2, 0)


def test_a_generation_moved_without_a_change_in_the_feed_is_read_whole(world: World) -> None:
    # A writer running code older than the feed moves the generation, not the feed (as a
    # quarantine change does): the only way to see what it wrote is to read the scope.
    stores = world.open()
    fill(stores, count=40)
    recalled(stores, world.clock)
    older = "The spare key is kept in the garage now"
    writes = plan_writes(SCOPE, [Create(record=record(older))], {}, world.clock.now(), {})
    for item in apply_transaction("cairn-items", scope_pk(SCOPE), writes, {}, {}):
        world.dynamodb.put_item(**item["Put"])  # versions and heads, as that code wrote them
    world.dynamodb.update_item(**generation_bump("cairn-items", scope_pk(SCOPE))["Update"])

    found = recalled(stores, world.clock)

    assert (source_of(stores).rebuilt, source_of(stores).patched) == (2, 0)
    assert older in found.block
    assert seen(found) == seen(scanned(stores, world.clock))


def test_an_object_caught_up_for_longer_than_the_bound_is_read_whole(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    stores, writer = world.open(), world.open()
    fill(stores, count=40)
    recalled(stores, world.clock)
    monkeypatch.setattr(object_patch, "MAX_CATCH_UP_AGE", 0.0)
    writer.records.apply(SCOPE, [Create(record=record("Painted the front door green"))])

    assert seen(recalled(stores, world.clock)) == seen(scanned(stores, world.clock))
    assert (source_of(stores).rebuilt, source_of(stores).patched) == (2, 0)
