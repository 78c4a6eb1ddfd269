"""What the deletion fence (``store/dynamodb/deletion_marks``) adds to a write on DynamoDB,
counted on the wire (moto): no request, one ConditionCheck item in the transaction the write
sends anyway; DeleteMemory's mark is one PutItem; a write the mark refuses costs one GetItem
to tell the mark from other conflicts (beside the change feed's own read of its sequence)."""

from __future__ import annotations

import pytest

from cairn.changes import Create
from cairn.errors import MemoryDeletingError
from cairn.ports import RecordPlacement
from tests.unit.test_dynamodb_requests import SCOPE, World, fact, turn, world

__all__ = ["world"]  # the moto fixture, shared with the request counts of every store


def _apply(world: World, content: str, *, fenced: bool) -> list[str]:
    return world.log.during(
        lambda: world.stores.records.apply(
            SCOPE, [Create(record=fact(content))], deletion_fence=fenced
        )
    )


def test_a_fenced_apply_sends_the_same_requests_with_one_more_item(world: World) -> None:
    assert _apply(world, "Likes tea", fenced=False) == ["BatchGetItem", "TransactWriteItems"]
    unfenced = world.log.transaction_sizes[-1]

    assert _apply(world, "Likes jazz", fenced=True) == ["BatchGetItem", "TransactWriteItems"]

    assert world.log.transaction_sizes[-1] == unfenced + 1


def test_marking_is_one_put_and_a_refused_write_one_more_read(world: World) -> None:
    assert world.stores.memories is not None
    sent = world.log.during(lambda: world.stores.memories.mark_deleting(SCOPE.memory_id))
    assert sent == ["PutItem"]

    start = len(world.log.operations)
    with pytest.raises(MemoryDeletingError):
        _apply(world, "Likes tea", fenced=True)

    # The cancelled transaction reads the scope's change sequence (``change_feed.commit``:
    # did only the sequence move?), then the mark, which names the reason.
    refused = ["BatchGetItem", "TransactWriteItems", "GetItem", "GetItem"]
    assert world.log.operations[start:] == refused


def test_a_fenced_placement_sends_the_same_requests_with_one_more_item(world: World) -> None:
    directory = world.stores.directory
    assert directory is not None
    first, second = (fact(text) for text in ("Likes tea", "Likes jazz"))
    placements = [
        RecordPlacement(record_id=record.record_id, actor_id=SCOPE.actor_id, namespace=ns)
        for record, ns in ((first, first.namespace), (second, second.namespace))
    ]

    plain = world.log.during(lambda: directory.place(SCOPE.memory_id, placements[:1]))
    unfenced = world.log.transaction_sizes[-1]
    fenced = world.log.during(
        lambda: directory.place(SCOPE.memory_id, placements[1:], deletion_fence=True)
    )

    assert fenced == plain
    assert world.log.transaction_sizes[-1] == unfenced + 1


def test_a_fenced_event_append_sends_the_same_transaction_with_one_more_item(
    world: World,
) -> None:
    events = world.stores.events
    plain = world.log.during(lambda: events.append(SCOPE, turn("hello")))
    unfenced = world.log.transaction_sizes[-1]

    fenced = world.log.during(lambda: events.append(SCOPE, turn("again"), deletion_fence=True))

    assert fenced == plain == ["TransactWriteItems"]
    assert world.log.transaction_sizes[-1] == unfenced + 1
