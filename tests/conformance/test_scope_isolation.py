"""Every call is pinned to a scope: an id from another scope is not found, and nothing leaks."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from cairn.changes import Create, FoldIn, NewRecord, RecordPatch, Retract, Revise, Supersede
from cairn.clock import FixedClock
from cairn.errors import EventNotFoundError, JournalNotFoundError, RecordNotFoundError
from cairn.models import Scope
from cairn.ports import Stores
from tests.conformance.samples import (
    EMBEDDER,
    FACTS,
    OTHER_ACTOR,
    OTHER_MEMORY,
    SCOPE,
    USER,
    create,
    event_input,
    journal_entry,
    listed_ids,
    new_fact,
    vector,
)

FOREIGN = pytest.mark.parametrize(
    "foreign", [OTHER_ACTOR, OTHER_MEMORY], ids=["other-actor", "other-memory"]
)

RecordCall = Callable[[Stores, Scope, str], object]
RECORD_CALLS: dict[str, RecordCall] = {
    "get": lambda s, scope, rid: s.records.get(scope, rid),
    "get_version": lambda s, scope, rid: s.records.get_version(scope, rid, 1),
    "history": lambda s, scope, rid: s.records.history(scope, rid),
    "revise": lambda s, scope, rid: s.records.apply(
        scope, [Revise(record_id=rid, patch=RecordPatch(content="hijacked"))]
    ),
    "fold_in": lambda s, scope, rid: s.records.apply(scope, [FoldIn(record_id=rid)]),
    "retract": lambda s, scope, rid: s.records.apply(scope, [Retract(record_id=rid)]),
    "supersede": lambda s, scope, rid: s.records.apply(
        scope, [Supersede(record_id=rid, replacement=new_fact("hijacked"))]
    ),
    "erase": lambda s, scope, rid: s.records.erase(scope, rid),
}


@FOREIGN
@pytest.mark.parametrize("call", sorted(RECORD_CALLS))
def test_a_record_is_not_found_from_another_scope(
    stores: Stores, foreign: Scope, call: str
) -> None:
    created = create(stores, "Has a sister in Oslo", embedding=vector(0, 1, 0, 0))

    with pytest.raises(RecordNotFoundError):
        RECORD_CALLS[call](stores, foreign, created.record_id)

    assert stores.records.history(SCOPE, created.record_id) == (created,)
    assert listed_ids(stores, foreign, include_inactive=True) == []
    assert stores.records.vectors(SCOPE, [created.ref], EMBEDDER)


@FOREIGN
def test_list_records_never_shows_another_scopes_records(
    stores: Stores, clock: FixedClock, foreign: Scope
) -> None:
    create(stores, "Is a night owl")
    gone = create(stores, "Was a morning person")
    stores.records.apply(SCOPE, [Retract(record_id=gone.record_id)])
    clock.advance(hours=1)

    for prefix in (None, "/", FACTS):
        assert listed_ids(stores, foreign, namespace_prefix=prefix) == []
        assert listed_ids(stores, foreign, namespace_prefix=prefix, include_inactive=True) == []
    assert listed_ids(stores, foreign, as_of=clock.now() - timedelta(minutes=30)) == []


@FOREIGN
def test_vectors_are_not_readable_from_another_scope(stores: Stores, foreign: Scope) -> None:
    created = create(stores, "Sleeps eight hours", embedding=vector(0, 0, 1, 0))

    assert stores.records.vectors(foreign, [created.ref], EMBEDDER) == {}


@FOREIGN
def test_the_same_record_id_in_two_scopes_stays_independent(stores: Stores, foreign: Scope) -> None:
    mine = create(stores, "Likes hiking")
    theirs = NewRecord(
        record_id=mine.record_id, namespace="/facts/other/", content="Likes diving", sources=(USER,)
    )

    stores.records.apply(foreign, [Create(record=theirs)])
    stores.records.apply(foreign, [Retract(record_id=mine.record_id)])

    assert stores.records.history(SCOPE, mine.record_id) == (mine,)
    assert [v.content for v in stores.records.history(foreign, mine.record_id)] == [
        "Likes diving",
        "Likes diving",
    ]
    assert listed_ids(stores) == [mine.record_id]


@FOREIGN
def test_a_journal_entry_is_not_found_from_another_scope(stores: Stores, foreign: Scope) -> None:
    stores.journal.put(journal_entry("j-1"))

    with pytest.raises(JournalNotFoundError):
        stores.journal.get(foreign, "j-1")
    assert stores.journal.get(SCOPE, "j-1") == journal_entry("j-1").model_copy(
        update={"sequence": 1}  # filed as the first link of the scope's chain
    )


@FOREIGN
def test_events_of_one_actor_are_invisible_to_another(stores: Stores, foreign: Scope) -> None:
    event = stores.events.append(SCOPE, event_input("s1"))

    with pytest.raises(EventNotFoundError):
        stores.events.get_event(foreign, "s1", event.event_id)
    with pytest.raises(EventNotFoundError):
        stores.events.delete_event(foreign, "s1", event.event_id)
    assert stores.events.list_events(foreign, "s1").items == ()
    assert stores.events.list_sessions(foreign).items == ()
    assert stores.events.get_event(SCOPE, "s1", event.event_id) == event


def test_an_event_is_not_found_in_another_session(stores: Stores) -> None:
    event = stores.events.append(SCOPE, event_input("s1"))
    stores.events.append(SCOPE, event_input("s2"))

    with pytest.raises(EventNotFoundError):
        stores.events.get_event(SCOPE, "s2", event.event_id)
    assert event not in stores.events.list_events(SCOPE, "s2").items
