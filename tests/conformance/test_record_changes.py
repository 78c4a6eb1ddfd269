"""The record change feed, on every backend that has one: every committed record write is one
change per version it wrote (created, updated, deleted), erasure is one ``erased`` change per
record, a refused write leaves none, and a reader resumes from the last sequence it saw."""

from __future__ import annotations

import pytest

from cairn.changes import Create, FoldIn, RecordPatch, Retract, Revise, Supersede
from cairn.errors import ConflictError
from cairn.ports import RecordChange, RecordChangeFeed, Stores
from tests.conformance.samples import OTHER_MEMORY, SCOPE, create, new_fact


def require_feed(stores: Stores, backend_name: str) -> RecordChangeFeed:
    if stores.changes is None:
        pytest.skip(f"backend {backend_name!r} has no RecordChangeFeed (capability missing)")
    return stores.changes


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

    changes = feed.changes_after(0)

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
    (seen,) = feed.changes_after(0)
    later = [create(stores, f"Fact number {i}") for i in range(3)]

    page = feed.changes_after(seen.sequence, limit=2)
    rest = feed.changes_after(page[-1].sequence)

    assert seen.record_id == first.record_id
    assert [c.record_id for c in (*page, *rest)] == [v.record_id for v in later]
    assert len(page) == 2
    assert feed.changes_after(rest[-1].sequence) == ()


def test_erasure_is_one_change_per_record_and_carries_no_content(
    stores: Stores, backend_name: str
) -> None:
    feed = require_feed(stores, backend_name)
    tea = create(stores, "Drinks green tea")
    stores.records.apply(
        SCOPE, [Revise(record_id=tea.record_id, patch=RecordPatch(content="Drinks black tea"))]
    )
    before = feed.changes_after(0)[-1].sequence

    stores.records.erase(SCOPE, tea.record_id)

    (erased,) = feed.changes_after(before)
    assert (erased.record_id, erased.version, erased.kind) == (tea.record_id, 2, "erased")
    assert "tea" not in erased.model_dump_json()


def test_a_refused_write_leaves_no_change(stores: Stores, backend_name: str) -> None:
    feed = require_feed(stores, backend_name)
    tea = create(stores, "Drinks green tea")
    stale = {tea.record_id: tea.version + 5}

    with pytest.raises(ConflictError):
        stores.records.apply(SCOPE, [Create(record=new_fact("Another fact"))], snapshot=stale)

    assert _seen(feed.changes_after(0)) == [(tea.record_id, 1, "created")]


def test_changes_can_be_read_for_one_memory(stores: Stores, backend_name: str) -> None:
    feed = require_feed(stores, backend_name)
    mine = create(stores, "Drinks green tea")
    create(stores, "Lives in Lisbon", scope=OTHER_MEMORY)

    assert [c.record_id for c in feed.changes_after(0, memory_id=SCOPE.memory_id)] == [
        mine.record_id
    ]
    assert len(feed.changes_after(0)) == 2
