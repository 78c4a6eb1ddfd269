"""The record change feed, on every backend: every committed record write is one change per
version it wrote (created, updated, deleted), erasure is one ``erased`` change per record, a
refused write leaves none, and a reader of a scope resumes from the last sequence it saw.
A store with one sequence for all scopes (``StoreChangeFeed``: SQLite, in memory) also
orders every scope's changes by it and reads them per memory."""

from __future__ import annotations

import pytest

from cairn.changes import Create, FoldIn, RecordPatch, Retract, Revise, Supersede
from cairn.errors import ConflictError
from cairn.ports import RecordChange, RecordChangeFeed, StoreChangeFeed, Stores
from tests.conformance.samples import OTHER_ACTOR, OTHER_MEMORY, SCOPE, create, new_fact


def require_feed(stores: Stores, backend_name: str) -> RecordChangeFeed:
    if stores.changes is None:
        pytest.skip(f"backend {backend_name!r} has no RecordChangeFeed (capability missing)")
    return stores.changes


def require_store_feed(stores: Stores, backend_name: str) -> StoreChangeFeed:
    feed = require_feed(stores, backend_name)
    if not isinstance(feed, StoreChangeFeed):
        pytest.skip(f"backend {backend_name!r} keeps a sequence per scope, not one per store")
    return feed


def _seen(changes: tuple[RecordChange, ...]) -> list[tuple[str, int, str]]:
    return [(c.record_id, c.version, c.kind) for c in changes]


def test_every_write_is_one_change_per_version_in_commit_order(
    stores: Stores, backend_name: str
) -> None:
    feed = require_feed(stores, backend_name)
    tea = create(stores, "Drinks green tea")
    dog = create(stores, "Has a dog named Milo")
    stores.records.apply(
        SCOPE, [Revise(record_id=tea.record_id, patch=RecordPatch(content="Drinks black tea"))]
    )
    stores.records.apply(SCOPE, [FoldIn(record_id=tea.record_id)])
    (old, successor) = stores.records.apply(
        SCOPE, [Supersede(record_id=dog.record_id, replacement=new_fact("Has a dog named Otto"))]
    )
    stores.records.apply(SCOPE, [Retract(record_id=successor.record_id)])

    changes = feed.scope_changes(SCOPE)

    assert _seen(changes) == [
        (tea.record_id, 1, "created"),
        (dog.record_id, 1, "created"),
        (tea.record_id, 2, "updated"),
        (tea.record_id, 3, "updated"),
        (old.record_id, old.version, "deleted"),
        (successor.record_id, 1, "created"),
        (successor.record_id, 2, "deleted"),
    ]
    sequences = [c.sequence for c in changes]
    assert sequences == sorted(set(sequences))
    assert all((c.memory_id, c.actor_id) == (SCOPE.memory_id, SCOPE.actor_id) for c in changes)


def test_a_reader_resumes_after_the_last_sequence_it_saw(stores: Stores, backend_name: str) -> None:
    feed = require_feed(stores, backend_name)
    first = create(stores, "Drinks green tea")
    (seen,) = feed.scope_changes(SCOPE)
    later = [create(stores, f"Fact number {i}") for i in range(3)]

    page = feed.scope_changes(SCOPE, seen.sequence, limit=2)
    rest = feed.scope_changes(SCOPE, page[-1].sequence)

    assert seen.record_id == first.record_id
    assert [c.record_id for c in (*page, *rest)] == [v.record_id for v in later]
    assert len(page) == 2
    assert feed.scope_changes(SCOPE, rest[-1].sequence) == ()


def test_erasure_is_one_change_per_record_and_carries_no_content(
    stores: Stores, backend_name: str
) -> None:
    feed = require_feed(stores, backend_name)
    tea = create(stores, "Drinks green tea")
    stores.records.apply(
        SCOPE, [Revise(record_id=tea.record_id, patch=RecordPatch(content="Drinks black tea"))]
    )
    before = feed.scope_changes(SCOPE)[-1].sequence

    stores.records.erase(SCOPE, tea.record_id)

    (erased,) = feed.scope_changes(SCOPE, before)
    assert (erased.record_id, erased.version, erased.kind) == (tea.record_id, 2, "erased")
    assert "tea" not in erased.model_dump_json()


def test_a_refused_write_leaves_no_change(stores: Stores, backend_name: str) -> None:
    feed = require_feed(stores, backend_name)
    tea = create(stores, "Drinks green tea")
    stale = {tea.record_id: tea.version + 5}

    with pytest.raises(ConflictError):
        stores.records.apply(SCOPE, [Create(record=new_fact("Another fact"))], snapshot=stale)

    assert _seen(feed.scope_changes(SCOPE)) == [(tea.record_id, 1, "created")]


def test_each_scope_reads_only_its_own_changes(stores: Stores, backend_name: str) -> None:
    feed = require_feed(stores, backend_name)
    mine = create(stores, "Drinks green tea")
    theirs = create(stores, "Lives in Lisbon", scope=OTHER_MEMORY)
    neighbour = create(stores, "Plays the cello", scope=OTHER_ACTOR)

    assert [c.record_id for c in feed.scope_changes(SCOPE)] == [mine.record_id]
    assert [c.record_id for c in feed.scope_changes(OTHER_MEMORY)] == [theirs.record_id]
    (other,) = feed.scope_changes(OTHER_ACTOR)
    assert (other.record_id, other.memory_id, other.actor_id) == (
        neighbour.record_id,
        OTHER_ACTOR.memory_id,
        OTHER_ACTOR.actor_id,
    )


def test_the_last_sequence_is_the_scopes_last_change_and_only_its_own(
    stores: Stores, backend_name: str
) -> None:
    feed = require_feed(stores, backend_name)
    assert feed.last_sequence(SCOPE) == 0  # before the scope's first change
    tea = create(stores, "Drinks green tea")
    stores.records.apply(SCOPE, [Retract(record_id=tea.record_id)])
    mine = feed.last_sequence(SCOPE)
    create(stores, "Lives in Lisbon", scope=OTHER_MEMORY)
    create(stores, "Plays the cello", scope=OTHER_ACTOR)

    assert mine == feed.scope_changes(SCOPE)[-1].sequence
    assert feed.last_sequence(SCOPE) == mine  # other scopes' writes do not move it
    assert feed.last_sequence(OTHER_ACTOR) == feed.scope_changes(OTHER_ACTOR)[-1].sequence
    dog = create(stores, "Has a dog named Milo")
    stores.records.erase(SCOPE, dog.record_id)
    assert feed.scope_changes(SCOPE, mine)[-1].sequence == feed.last_sequence(SCOPE)
    assert feed.scope_changes(SCOPE, feed.last_sequence(SCOPE)) == ()


def test_a_changes_event_id_names_exactly_that_change(stores: Stores, backend_name: str) -> None:
    feed = require_feed(stores, backend_name)
    tea = create(stores, "Drinks green tea")
    stores.records.apply(SCOPE, [FoldIn(record_id=tea.record_id)])
    stores.records.erase(SCOPE, tea.record_id)

    changes = feed.scope_changes(SCOPE)
    again = feed.scope_changes(SCOPE)  # a redelivery reads the same changes

    assert [c.event_id for c in changes] == [c.event_id for c in again]
    assert len({c.event_id for c in changes}) == len(changes) == 3


def test_a_store_wide_feed_orders_every_scope_and_reads_one_memory(
    stores: Stores, backend_name: str
) -> None:
    feed = require_store_feed(stores, backend_name)
    mine = create(stores, "Drinks green tea")
    theirs = create(stores, "Lives in Lisbon", scope=OTHER_MEMORY)

    assert [c.record_id for c in feed.changes_after(0, memory_id=SCOPE.memory_id)] == [
        mine.record_id
    ]
    assert [c.record_id for c in feed.changes_after(0)] == [mine.record_id, theirs.record_id]
