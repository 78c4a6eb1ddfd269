"""The deletion fence, on every backend (issue 17, class 7): once DeleteMemory has set the
memory's deletion mark (``MemoryConfigStore.mark_deleting``), a write made with
``deletion_fence`` -- one that checked the memory was not DELETING before the mark and commits
after it -- writes nothing, whichever actor it is for (an actor new to the memory included: it
has no erasure count for DeleteMemory to move). Driven through the API in
``test_api_deletion_race.py``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cairn.changes import Create
from cairn.errors import MemoryDeletingError, RecordNotFoundError
from cairn.models import Conversational, EventInput, Role, Scope
from cairn.ports import RecordPlacement, Stores
from cairn.rollout.index import TriggerPolicy
from tests.conformance.samples import FACTS, OTHER_MEMORY, SCOPE, new_fact

NEW_ACTOR = Scope(memory_id=SCOPE.memory_id, actor_id="newcomer")


def _placement(record_id: str, scope: Scope = NEW_ACTOR) -> RecordPlacement:
    return RecordPlacement(record_id=record_id, actor_id=scope.actor_id, namespace=FACTS)


def _marked(stores: Stores) -> Stores:
    if stores.memories is None:
        pytest.skip("this backend keeps no memory configurations")
    stores.memories.mark_deleting(SCOPE.memory_id)
    return stores


def test_a_fenced_apply_after_the_mark_writes_nothing(stores: Stores) -> None:
    record = new_fact("The newcomer's passport is 8841")  # planned before the mark
    _marked(stores)

    with pytest.raises(MemoryDeletingError, match="being deleted"):
        stores.records.apply(NEW_ACTOR, [Create(record=record)], deletion_fence=True)

    assert stores.records.list_records(NEW_ACTOR, include_inactive=True).items == ()
    assert stores.records.actors(SCOPE.memory_id) == ()


def test_a_fenced_placement_after_the_mark_places_nothing(stores: Stores) -> None:
    _marked(stores)
    if stores.directory is None:
        pytest.skip("this backend keeps no record directory")

    record_id = new_fact("Planned before the mark").record_id

    with pytest.raises(MemoryDeletingError):
        stores.directory.place(SCOPE.memory_id, [_placement(record_id)], deletion_fence=True)

    with pytest.raises(RecordNotFoundError):
        stores.directory.locate(SCOPE.memory_id, record_id)
    assert stores.directory.actors(SCOPE.memory_id) == ()


def test_the_mark_fences_only_its_own_memory_and_marking_twice_changes_nothing(
    stores: Stores,
) -> None:
    _marked(stores)
    assert stores.memories is not None
    stores.memories.mark_deleting(SCOPE.memory_id)

    elsewhere = Scope(memory_id=OTHER_MEMORY.memory_id, actor_id="newcomer")
    (written,) = stores.records.apply(
        elsewhere, [Create(record=new_fact("Likes tea"))], deletion_fence=True
    )
    if stores.directory is not None:
        placement = _placement(written.record_id, elsewhere)
        stores.directory.place(elsewhere.memory_id, [placement], deletion_fence=True)
        assert stores.directory.locate(elsewhere.memory_id, written.record_id) == placement
    with pytest.raises(MemoryDeletingError):
        stores.records.apply(NEW_ACTOR, [Create(record=new_fact("x"))], deletion_fence=True)


def test_a_fenced_write_in_an_unmarked_memory_commits(stores: Stores) -> None:
    (written,) = stores.records.apply(
        NEW_ACTOR, [Create(record=new_fact("Likes tea"))], deletion_fence=True
    )

    assert [v.record_id for v in stores.records.list_records(NEW_ACTOR).items] == [
        written.record_id
    ]


def _turn() -> EventInput:
    return EventInput(
        session_id="s1",
        event_timestamp=datetime(2026, 1, 1, 12, tzinfo=UTC),
        payload=(Conversational(role=Role.USER, text="My passport is 8841"),),
    )


def test_a_fenced_event_append_after_the_mark_stores_nothing(stores: Stores) -> None:
    _marked(stores)

    with pytest.raises(MemoryDeletingError):
        stores.events.append(NEW_ACTOR, _turn(), idempotency_key="k1", deletion_fence=True)

    assert stores.events.list_sessions(NEW_ACTOR).items == ()
    assert stores.events.list_actors(SCOPE.memory_id).items == ()


def test_a_fenced_counted_append_after_the_mark_stores_and_counts_nothing(stores: Stores) -> None:
    _marked(stores)
    if stores.rollouts is None:
        pytest.skip("this backend keeps no rollout index")
    policy = TriggerPolicy(strategy_ids=("facts",), message_count=1)

    with pytest.raises(MemoryDeletingError):
        stores.rollouts.append_counted(NEW_ACTOR, _turn(), policy=policy, deletion_fence=True)

    assert stores.events.list_sessions(NEW_ACTOR).items == ()
    assert stores.rollouts.counters(NEW_ACTOR, "s1") is None
