"""How many DynamoDB requests each store operation makes, counted on the wire (moto).

A botocore ``before-call`` hook on the injected client records every API call
(``cairn.testing.requests.RequestLog``, shared with the speed benchmark). These numbers
are the ones docs/dynamodb.md quotes; if one changes, the doc changes with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from moto import mock_aws

from cairn.changes import (
    MAX_CHANGES_PER_APPLY,
    MAX_SNAPSHOT_RECORDS,
    Change,
    Create,
    FoldIn,
    NewRecord,
    Retract,
    Supersede,
    Vector,
)
from cairn.clock import FixedClock
from cairn.errors import SnapshotConflictError
from cairn.models import (
    Conversational,
    EmbedderId,
    EventInput,
    JournalEntry,
    RecordVersion,
    Role,
    Scope,
    Source,
    SourceKind,
)
from cairn.ports import Stores
from cairn.store.dynamodb import DynamoDBBackend
from cairn.store.dynamodb.schema import TABLES, create_table_request
from cairn.testing.requests import RequestLog

SCOPE = Scope(memory_id="m1", actor_id="tg:1")
USER = (Source(kind=SourceKind.USER),)
EMBEDDER = EmbedderId(model_id="counting", dims=4)


@dataclass
class World:
    stores: Stores
    log: RequestLog
    clock: FixedClock
    client: Any


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        for table in TABLES:
            client.create_table(**create_table_request(table, f"cairn-{table.logical_name}"))
        clock = FixedClock()
        backend = DynamoDBBackend(
            client, items_table="cairn-items", events_table="cairn-events", clock=clock
        )
        yield World(backend.stores(), RequestLog(client), clock, client)


def fact(content: str, *, vector: tuple[float, ...] | None = None) -> NewRecord:
    embedded = Vector(embedder=EMBEDDER, values=vector) if vector else None
    return NewRecord(namespace="/facts/tg:1/", content=content, sources=USER, vector=embedded)


def create(world: World, content: str, **kwargs: Any) -> RecordVersion:
    (created,) = world.stores.records.apply(SCOPE, [Create(record=fact(content, **kwargs))])
    return created


def turn(text: str, session: str = "s1") -> EventInput:
    return EventInput(
        session_id=session,
        event_timestamp=datetime(2026, 1, 1, 12, tzinfo=UTC),
        payload=(Conversational(role=Role.USER, text=text),),
    )


def entry(journal_id: str) -> JournalEntry:
    return JournalEntry(
        journal_id=journal_id,
        memory_id=SCOPE.memory_id,
        actor_id=SCOPE.actor_id,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        query="coffee?",
        block_digest="b" * 64,
    )


def test_creating_a_record_is_one_read_and_one_transaction(world: World) -> None:
    assert world.log.during(lambda: create(world, "Likes tea")) == [
        "BatchGetItem",
        "TransactWriteItems",
    ]
    assert world.log.during(lambda: create(world, "Likes rain", vector=(1, 0, 0, 0))) == [
        "BatchGetItem",
        "TransactWriteItems",
    ]


def test_a_supersede_with_a_snapshot_is_one_read_and_one_transaction(world: World) -> None:
    old = create(world, "Lives in Lyon")
    other = create(world, "Works at a bakery")
    change = Supersede(record_id=old.record_id, replacement=fact("Lives in Paris"))
    snapshot = {old.record_id: 1, other.record_id: 1}

    sent = world.log.during(lambda: world.stores.records.apply(SCOPE, [change], snapshot=snapshot))

    assert sent == ["BatchGetItem", "TransactWriteItems"]


def test_the_largest_apply_the_contract_allows_fits_one_transaction(world: World) -> None:
    """16 supersedes, each bringing a vector, under a snapshot of 32 other records."""
    replaced = world.stores.records.apply(
        SCOPE, [Create(record=fact(f"Old {i}")) for i in range(MAX_CHANGES_PER_APPLY)]
    )
    watched = [
        v
        for start in (0, MAX_CHANGES_PER_APPLY)
        for v in world.stores.records.apply(
            SCOPE,
            [Create(record=fact(f"Watched {start + i}")) for i in range(MAX_CHANGES_PER_APPLY)],
        )
    ]
    assert len(watched) == MAX_SNAPSHOT_RECORDS
    changes: list[Change] = [
        Supersede(record_id=v.record_id, replacement=fact(f"New {i}", vector=(i, 0, 0, 1)))
        for i, v in enumerate(replaced)
    ]

    sent = world.log.during(
        lambda: world.stores.records.apply(
            SCOPE, changes, snapshot={v.record_id: v.version for v in watched}
        )
    )

    assert sent == ["BatchGetItem", "TransactWriteItems"]
    # 64 record items, 32 snapshot checks, the memory's marker of the actor (the
    # replacements are new records: erasing the memory must find this actor) and the scope's
    # generation (the recall index's staleness check, and the scope's change sequence) and
    # the change item of the record change feed.
    assert world.log.transaction_sizes[-1] == 99
    live = world.stores.records.list_records(SCOPE).items
    assert len(live) == MAX_SNAPSHOT_RECORDS + MAX_CHANGES_PER_APPLY
    assert {v.record_id for v in replaced}.isdisjoint(v.record_id for v in live)


def test_a_conflict_costs_one_more_read_to_name_what_moved(world: World) -> None:
    record = create(world, "Drinks coffee")
    world.stores.records.apply(SCOPE, [FoldIn(record_id=record.record_id)])
    stale = {record.record_id: 1}

    def stale_apply() -> None:
        with pytest.raises(SnapshotConflictError):
            world.stores.records.apply(SCOPE, [Create(record=fact("x"))], snapshot=stale)

    # The stale snapshot is caught by the consistent read, before any write is attempted.
    assert world.log.during(stale_apply) == ["BatchGetItem"]


def test_single_record_reads_are_one_request_each(world: World) -> None:
    record = create(world, "Owns a kayak")
    records = world.stores.records

    assert world.log.during(lambda: records.get(SCOPE, record.record_id)) == ["GetItem"]
    assert world.log.during(lambda: records.get_version(SCOPE, record.record_id, 1)) == ["Query"]
    assert world.log.during(lambda: records.history(SCOPE, record.record_id)) == ["Query"]


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"namespace_prefix": "/facts/tg:1/"},
        {"include_inactive": True},
        {"as_of": datetime(2026, 1, 2, tzinfo=UTC)},
    ],
    ids=["live", "live-by-prefix", "with-inactive", "as-of"],
)
def test_one_page_of_records_is_one_query(world: World, arguments: dict[str, Any]) -> None:
    made = [create(world, f"Fact {i}") for i in range(7)]
    world.stores.records.apply(SCOPE, [Retract(record_id=made[0].record_id)])
    world.clock.advance(days=2)

    def page() -> None:
        listed = world.stores.records.list_records(SCOPE, limit=3, **arguments)
        assert len(listed.items) == 3
        assert listed.next_cursor is not None

    assert world.log.during(page) == ["Query"]


def test_vectors_of_many_refs_are_one_batch_read_per_hundred(world: World) -> None:
    made = [create(world, f"Fact {i}", vector=(i, 1, 0, 0)) for i in range(3)]
    refs = [v.ref for v in made]

    assert world.log.during(lambda: world.stores.records.vectors(SCOPE, refs, EMBEDDER)) == [
        "BatchGetItem"
    ]


def test_vectors_kept_through_a_fold_in_cost_one_more_batch_read(world: World) -> None:
    made = [create(world, f"Fact {i}", vector=(i, 1, 0, 0)) for i in range(3)]
    heads = world.stores.records.apply(SCOPE, [FoldIn(record_id=v.record_id) for v in made])
    refs = [v.ref for v in heads]

    def read() -> None:
        assert len(world.stores.records.vectors(SCOPE, refs, EMBEDDER)) == 3

    assert world.log.during(read) == ["BatchGetItem", "BatchGetItem"]


def test_event_writes_and_reads(world: World) -> None:
    events = world.stores.events
    first = events.append(SCOPE, turn("hello"))
    world.clock.advance(seconds=1)
    later = events.append(SCOPE, turn("again"))

    assert world.log.during(lambda: events.append(SCOPE, turn("third"))) == ["TransactWriteItems"]
    assert world.log.during(lambda: events.list_events(SCOPE, "s1", limit=2)) == ["Query"]
    assert world.log.during(lambda: events.list_sessions(SCOPE)) == ["Query"]
    assert world.log.during(lambda: events.list_actors(SCOPE.memory_id)) == ["Query"]
    assert world.log.during(lambda: events.get_event(SCOPE, "s1", first.event_id)) == [
        "Query",
        "GetItem",
    ]
    # The second Query looks for summaries of the turn in the history pyramid (none here).
    assert world.log.during(lambda: events.delete_event(SCOPE, "s1", later.event_id)) == [
        "Query",
        "Query",
        "TransactWriteItems",
        "BatchGetItem",
    ]


def test_deleting_a_sessions_first_or_last_event_costs_a_summary_fix(world: World) -> None:
    events = world.stores.events
    first = events.append(SCOPE, turn("hello"))
    world.clock.advance(seconds=1)
    second = events.append(SCOPE, turn("again"))

    # The session's creation time was the deleted event's: read the rest, store the new one.
    assert world.log.during(lambda: events.delete_event(SCOPE, "s1", first.event_id)) == [
        "Query",
        "Query",
        "TransactWriteItems",
        "BatchGetItem",
        "Query",
        "UpdateItem",
    ]
    # The session and the actor count no event any more: both summaries go.
    assert world.log.during(lambda: events.delete_event(SCOPE, "s1", second.event_id)) == [
        "Query",
        "Query",
        "TransactWriteItems",
        "BatchGetItem",
        "DeleteItem",
        "DeleteItem",
    ]
    assert events.list_sessions(SCOPE).items == ()
    assert events.list_actors(SCOPE.memory_id).items == ()
    assert first.created_at < second.created_at


def test_erasing_an_actors_events_reads_each_session_once(world: World) -> None:
    events = world.stores.events
    for session in ("s1", "s1", "s2"):
        events.append(SCOPE, turn("hi", session))

    sent = world.log.during(lambda: events.erase_scope(SCOPE))

    per_session = ["Query", "BatchWriteItem", "DeleteItem"]
    keys = ["Query"]  # the actor's append keys (none here: nothing to delete)
    history = ["DeleteItem"]  # the scope's history generation is deleted, last (it moves to none)
    assert sent == [
        "GetItem",
        "Query",
        *per_session,
        *per_session,
        *keys,
        "DeleteItem",
        *history,
    ]


def test_a_keyed_append_is_one_transaction_and_its_repeat_reads_two_items(world: World) -> None:
    events = world.stores.events
    key = "c3" * 32

    first = world.log.during(lambda: events.append(SCOPE, turn("hi"), idempotency_key=key))
    again = world.log.during(lambda: events.append(SCOPE, turn("hi"), idempotency_key=key))

    assert first == ["TransactWriteItems"]
    assert again == ["TransactWriteItems", "GetItem", "GetItem"]  # cancelled; guard; event


def test_journal_put_reads_the_chain_head_and_writes_one_transaction(world: World) -> None:
    journal = world.stores.journal

    # Filing links the entry to its scope's chain (issue 17, class 8): the head must be read
    # before the entry that cites it can be written, so a put is two requests, not one.
    assert world.log.during(lambda: journal.put(entry("j-1"))) == ["GetItem", "TransactWriteItems"]
    assert world.log.during(lambda: journal.get(SCOPE, "j-1")) == ["GetItem"]


def test_erasing_a_lineage_counts_the_erasure_reads_each_record_once_and_writes_one_transaction(
    world: World,
) -> None:
    root = create(world, "Takes medication")
    replacement = fact("Takes medication twice a day")
    world.stores.records.apply(
        SCOPE, [Supersede(record_id=root.record_id, replacement=replacement)]
    )

    sent = world.log.during(lambda: world.stores.records.erase(SCOPE, root.record_id))

    # First the scope's erasure count moves (issue 17, class 7: a plan read before it fails);
    # the GetItem reads the scope's change sequence, which the transaction moves.
    assert sent == ["UpdateItem", "Query", "Query", "GetItem", "TransactWriteItems"]


def test_erasing_a_scope_of_records_is_one_query_and_a_transaction_per_hundred_items(
    world: World,
) -> None:
    for i in range(3):
        create(world, f"Fact {i}")

    assert world.log.during(lambda: world.stores.records.erase_scope(SCOPE)) == [
        "UpdateItem",  # the scope's erasure count, before the read (issue 17, class 7)
        "Query",
        "GetItem",  # the scope's change sequence (the feed's erased changes)
        "TransactWriteItems",
        "DeleteItem",  # the memory's marker of the actor, once its records are tombstones
    ]
