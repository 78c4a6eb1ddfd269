"""Erase destroys content along the lineage and leaves tombstones whose digests still add up."""

from __future__ import annotations

from datetime import timedelta

import pytest

from cairn.changes import FoldIn, RecordPatch, Revise, Supersede
from cairn.clock import FixedClock
from cairn.errors import (
    EventNotFoundError,
    InvalidChangeError,
    JournalNotFoundError,
    RecordNotFoundError,
)
from cairn.models import ERASED_CONTENT, RecordVersion, Status
from cairn.ports import Stores
from tests.conformance.samples import (
    EMBEDDER,
    OTHER_ACTOR,
    OTHER_MEMORY,
    SCOPE,
    create,
    event_input,
    journal_entry,
    listed_ids,
    new_fact,
    vector,
)

PRIVATE = "Takes medication for a heart condition"


def supersede(stores: Stores, old: RecordVersion, content: str) -> RecordVersion:
    replacement = new_fact(content, embedding=vector(0, 0, 0, 1))
    stores.records.apply(SCOPE, [Supersede(record_id=old.record_id, replacement=replacement)])
    return stores.records.get(SCOPE, replacement.record_id)


def every_ref(stores: Stores, record_id: str) -> list[object]:
    return [v.ref for v in stores.records.history(SCOPE, record_id)]


def assert_tombstones(stores: Stores, before: tuple[RecordVersion, ...]) -> None:
    """Each version is erased: same identity, times and digest; none of the content."""
    after = stores.records.history(SCOPE, before[0].record_id)
    assert len(after) == len(before)
    for old, new in zip(before, after, strict=True):
        assert (new.record_id, new.version) == (old.record_id, old.version)
        assert new.status is Status.ERASED
        assert new.content == ERASED_CONTENT
        assert new.content_digest == old.content_digest
        assert new.created_at == old.created_at
        assert new.embedding is None
        assert old.content not in new.model_dump_json()
        assert stores.records.get_version(SCOPE, old.record_id, old.version) == new
    assert stores.records.vectors(SCOPE, [v.ref for v in after], EMBEDDER) == {}
    assert stores.records.vectors(SCOPE, [v.ref for v in before], EMBEDDER) == {}


def test_erase_destroys_every_version_and_every_successor(
    stores: Stores, clock: FixedClock
) -> None:
    root = create(stores, "Takes medication", embedding=vector(1, 0, 0, 0))
    clock.advance(minutes=1)
    middle = supersede(stores, root, PRIVATE)
    stores.records.apply(
        SCOPE,
        [
            Revise(
                record_id=middle.record_id, patch=RecordPatch(body="daily, 10mg", tags=("health",))
            )
        ],
    )
    stores.records.apply(SCOPE, [FoldIn(record_id=middle.record_id)])
    clock.advance(minutes=1)
    middle = stores.records.get(SCOPE, middle.record_id)
    last = supersede(stores, middle, PRIVATE + ", twice a day")
    unrelated = create(stores, "Plays tennis", embedding=vector(0, 1, 0, 0))
    root_history = stores.records.history(SCOPE, root.record_id)
    middle_history = stores.records.history(SCOPE, middle.record_id)
    last_history = stores.records.history(SCOPE, last.record_id)

    report = stores.records.erase(SCOPE, middle.record_id)

    assert set(report.record_ids) == {middle.record_id, last.record_id}
    assert report.versions == len(middle_history) + len(last_history)
    assert_tombstones(stores, middle_history)
    assert_tombstones(stores, last_history)
    assert stores.records.history(SCOPE, root.record_id) == root_history
    assert stores.records.history(SCOPE, unrelated.record_id) == (unrelated,)
    assert stores.records.vectors(SCOPE, [root.ref, unrelated.ref], EMBEDDER).keys() == {
        root.ref,
        unrelated.ref,
    }


def test_erasing_the_root_erases_the_whole_lineage(stores: Stores) -> None:
    root = create(stores, PRIVATE)
    successor = supersede(stores, root, PRIVATE + " (updated)")
    histories = [stores.records.history(SCOPE, r.record_id) for r in (root, successor)]

    report = stores.records.erase(SCOPE, root.record_id)

    assert set(report.record_ids) == {root.record_id, successor.record_id}
    for history in histories:
        assert_tombstones(stores, history)


def test_erased_records_are_never_listed(stores: Stores, clock: FixedClock) -> None:
    erased = create(stores, PRIVATE)
    kept = create(stores, "Likes cycling")
    while_live = clock.advance(minutes=30)
    clock.advance(minutes=30)

    stores.records.erase(SCOPE, erased.record_id)

    assert listed_ids(stores) == [kept.record_id]
    assert listed_ids(stores, include_inactive=True) == [kept.record_id]
    assert listed_ids(stores, as_of=while_live) == [kept.record_id]
    assert listed_ids(stores, as_of=while_live, include_inactive=True) == [kept.record_id]


def test_as_of_reads_never_resurrect_erased_content(stores: Stores, clock: FixedClock) -> None:
    erased = create(stores, PRIVATE)
    while_live = clock.advance(minutes=30)
    clock.advance(minutes=30)

    stores.records.erase(SCOPE, erased.record_id)

    for include_inactive in (False, True):
        page = stores.records.list_records(
            SCOPE, as_of=while_live, include_inactive=include_inactive
        )
        assert all(PRIVATE not in v.model_dump_json() for v in page.items)


def test_an_erased_record_cannot_change(stores: Stores) -> None:
    erased = create(stores, PRIVATE)
    stores.records.erase(SCOPE, erased.record_id)
    before = stores.records.history(SCOPE, erased.record_id)

    with pytest.raises(InvalidChangeError):
        stores.records.apply(
            SCOPE, [Revise(record_id=erased.record_id, patch=RecordPatch(content=PRIVATE))]
        )
    with pytest.raises(InvalidChangeError):
        stores.records.apply(SCOPE, [FoldIn(record_id=erased.record_id)])

    assert stores.records.history(SCOPE, erased.record_id) == before


def test_erasing_an_unknown_record_is_not_found(stores: Stores) -> None:
    with pytest.raises(RecordNotFoundError):
        stores.records.erase(SCOPE, new_fact("never written").record_id)


def test_erase_scope_erases_every_record_of_that_scope_only(
    stores: Stores, clock: FixedClock
) -> None:
    mine = [create(stores, PRIVATE, embedding=vector(1, 0, 0, 0)), create(stores, "Has a dog")]
    successor = supersede(stores, mine[1], "Has two dogs")
    theirs = [
        create(stores, PRIVATE, scope=OTHER_ACTOR, embedding=vector(1, 0, 0, 0)),
        create(stores, PRIVATE, scope=OTHER_MEMORY),
    ]
    histories = [stores.records.history(SCOPE, r.record_id) for r in (*mine, successor)]
    clock.advance(hours=1)

    report = stores.records.erase_scope(SCOPE)

    assert set(report.record_ids) == {mine[0].record_id, mine[1].record_id, successor.record_id}
    assert report.versions == sum(len(h) for h in histories)
    for history in histories:
        assert_tombstones(stores, history)
    for other in theirs:
        scope = other.scope
        assert stores.records.history(scope, other.record_id) == (other,)
        assert listed_ids(stores, scope) == [other.record_id]
    assert stores.records.vectors(OTHER_ACTOR, [theirs[0].ref], EMBEDDER)
    assert listed_ids(stores) == []
    assert listed_ids(stores, as_of=clock.now() - timedelta(minutes=30)) == []
    assert listed_ids(stores, include_inactive=True) == []


def test_event_erase_scope_deletes_only_that_actors_events(stores: Stores) -> None:
    mine = [stores.events.append(SCOPE, event_input(s)) for s in ("s1", "s1", "s2")]
    theirs = [
        stores.events.append(scope, event_input("s1")) for scope in (OTHER_ACTOR, OTHER_MEMORY)
    ]

    assert stores.events.erase_scope(SCOPE) == len(mine)

    for event in mine:
        with pytest.raises(EventNotFoundError):
            stores.events.get_event(SCOPE, event.session_id, event.event_id)
    assert stores.events.list_events(SCOPE, "s1").items == ()
    assert stores.events.list_sessions(SCOPE).items == ()
    assert SCOPE.actor_id not in stores.events.list_actors(SCOPE.memory_id).items
    for event, scope in zip(theirs, (OTHER_ACTOR, OTHER_MEMORY), strict=True):
        assert stores.events.get_event(scope, "s1", event.event_id) == event
    assert stores.events.erase_scope(SCOPE) == 0


def test_journal_erase_scope_deletes_only_that_scopes_entries(stores: Stores) -> None:
    for journal_id in ("j-1", "j-2"):
        stores.journal.put(journal_entry(journal_id))
    stores.journal.put(journal_entry("j-1", OTHER_ACTOR))
    stores.journal.put(journal_entry("j-3", OTHER_MEMORY))

    assert stores.journal.erase_scope(SCOPE) == 2

    for journal_id in ("j-1", "j-2"):
        with pytest.raises(JournalNotFoundError):
            stores.journal.get(SCOPE, journal_id)
    first_link = {"sequence": 1}  # each scope's own chain starts at 1
    assert stores.journal.get(OTHER_ACTOR, "j-1") == journal_entry("j-1", OTHER_ACTOR).model_copy(
        update=first_link
    )
    assert stores.journal.get(OTHER_MEMORY, "j-3") == journal_entry("j-3", OTHER_MEMORY).model_copy(
        update=first_link
    )
    assert stores.journal.head(SCOPE) is None
    assert stores.journal.chain(SCOPE) == ()
