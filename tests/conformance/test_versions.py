"""Writes append versions and move heads; nothing is edited in place; fold-in counts repeats."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cairn.changes import Create, FoldIn, NewRecord, RecordPatch, Retract, Revise
from cairn.clock import FixedClock
from cairn.errors import InvalidChangeError, RecordNotFoundError
from cairn.models import Edge, EdgeKind, Status, content_digest
from cairn.ports import Stores
from tests.conformance.samples import (
    FACTS,
    MODEL,
    SCOPE,
    SYSTEM,
    USER,
    create,
    listed_ids,
    new_fact,
    vector,
)


def test_create_starts_a_record_at_version_one(stores: Stores, clock: FixedClock) -> None:
    created = create(stores, "Likes green tea")

    head = stores.records.get(SCOPE, created.record_id)
    assert head.version == 1
    assert head.status is Status.ACTIVE
    assert head.content == "Likes green tea"
    assert head.content_digest == content_digest("Likes green tea")
    assert (head.memory_id, head.actor_id) == (SCOPE.memory_id, SCOPE.actor_id)
    assert head.created_at == head.first_seen_at == head.last_seen_at == clock.now()
    assert head.seen_count == 1


def test_revise_appends_a_version_and_moves_the_head(stores: Stores, clock: FixedClock) -> None:
    created = create(stores, "Lives in Lyon")
    clock.advance(hours=1)

    (revised,) = stores.records.apply(
        SCOPE, [Revise(record_id=created.record_id, patch=RecordPatch(content="Lives in Paris"))]
    )

    assert revised.version == 2
    assert revised.content == "Lives in Paris"
    assert revised.created_at == clock.now()
    assert stores.records.get(SCOPE, created.record_id) == revised
    assert stores.records.get_version(SCOPE, created.record_id, 1).content == "Lives in Lyon"
    assert listed_ids(stores) == [created.record_id]


def test_history_lists_every_version_oldest_first(stores: Stores, clock: FixedClock) -> None:
    created = create(stores, "Runs on Mondays")
    rid = created.record_id
    for day in ("Tuesdays", "Wednesdays"):
        clock.advance(minutes=5)
        stores.records.apply(
            SCOPE, [Revise(record_id=rid, patch=RecordPatch(content=f"Runs on {day}"))]
        )

    history = stores.records.history(SCOPE, rid)

    assert [v.version for v in history] == [1, 2, 3]
    assert [v.content for v in history] == [
        "Runs on Mondays",
        "Runs on Tuesdays",
        "Runs on Wednesdays",
    ]
    assert history[0] == created
    assert history[-1] == stores.records.get(SCOPE, rid)


def test_old_versions_stay_unchanged_after_later_changes(stores: Stores, clock: FixedClock) -> None:
    created = create(stores, "Owns a cat named Miso", embedding=vector(1, 0, 0, 0))
    rid = created.record_id
    clock.advance(minutes=1)
    (revised,) = stores.records.apply(
        SCOPE, [Revise(record_id=rid, patch=RecordPatch(content="Owns two cats", tags=("pets",)))]
    )
    clock.advance(minutes=1)
    stores.records.apply(SCOPE, [FoldIn(record_id=rid, add_sources=(MODEL,))])
    clock.advance(minutes=1)
    stores.records.apply(SCOPE, [Retract(record_id=rid, reason="user asked")])

    assert stores.records.get_version(SCOPE, rid, 1) == created
    assert stores.records.get_version(SCOPE, rid, 2) == revised
    assert len(stores.records.history(SCOPE, rid)) == 4


def test_apply_returns_exactly_what_is_stored(stores: Stores) -> None:
    created = create(stores, "Allergic to peanuts")
    (folded,) = stores.records.apply(SCOPE, [FoldIn(record_id=created.record_id)])

    assert stores.records.get_version(SCOPE, created.record_id, 1) == created
    assert stores.records.get_version(SCOPE, created.record_id, 2) == folded


def test_every_field_round_trips(stores: Stores, clock: FixedClock) -> None:
    clock.advance(microseconds=123_456)  # sub-second precision must survive storage
    record = NewRecord(
        namespace="/preferences/a1/",
        strategy="user_preference",
        category="preference",
        content="Prefers 緑茶 over coffee ☕, «always»",
        body="Said twice.\nOnce in French: « thé vert ».",
        confidence=0.9,
        importance=0.25,
        tags=("drinks", "morning"),
        entities=("green tea", "coffee"),
        keywords=("tea",),
        edges=(Edge(kind=EdgeKind.DISCUSSED_IN, target="s1"),),
        sources=(USER, SYSTEM),
        valid_from=datetime(2025, 12, 1, 8, 30, 0, 654_321, tzinfo=UTC),
        metadata={"origin": "chat", "lang": "fr"},
        seen_at=datetime(2025, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
    )

    (created,) = stores.records.apply(SCOPE, [Create(record=record)])
    stored = stores.records.get(SCOPE, record.record_id)

    assert stored == created
    for name in type(record).model_fields.keys() - {"record_id", "vector", "seen_at"}:
        assert getattr(stored, name) == getattr(record, name), name
    assert stored.first_seen_at == stored.last_seen_at == record.seen_at
    assert stored.created_at == clock.now()


def test_unknown_record_is_not_found(stores: Stores) -> None:
    created = create(stores, "Speaks Portuguese")
    missing = new_fact("never written").record_id

    with pytest.raises(RecordNotFoundError):
        stores.records.get(SCOPE, missing)
    with pytest.raises(RecordNotFoundError):
        stores.records.history(SCOPE, missing)
    with pytest.raises(RecordNotFoundError):
        stores.records.get_version(SCOPE, missing, 1)
    with pytest.raises(RecordNotFoundError):
        stores.records.get_version(SCOPE, created.record_id, 2)


def test_create_with_an_existing_id_is_refused(stores: Stores) -> None:
    created = create(stores, "Works at a bakery")
    again = NewRecord(
        record_id=created.record_id, namespace=FACTS, content="Works at a bank", sources=(USER,)
    )

    with pytest.raises(InvalidChangeError):
        stores.records.apply(SCOPE, [Create(record=again)])

    assert stores.records.history(SCOPE, created.record_id) == (created,)


def test_fold_in_bumps_seen_count_instead_of_appending_a_paraphrase(
    stores: Stores, clock: FixedClock
) -> None:
    created = create(stores, "Drinks coffee black")
    clock.advance(days=2)

    (folded,) = stores.records.apply(SCOPE, [FoldIn(record_id=created.record_id)])

    head = stores.records.get(SCOPE, created.record_id)
    assert head == folded
    assert head.version == 2
    assert head.seen_count == 2
    assert head.last_seen_at == clock.now()
    assert head.first_seen_at == created.first_seen_at
    assert (head.content, head.content_digest) == (created.content, created.content_digest)
    assert listed_ids(stores) == [created.record_id]


def test_fold_in_never_moves_last_seen_backwards(stores: Stores, clock: FixedClock) -> None:
    created = create(stores, "Plays the cello")
    clock.advance(days=3)
    stores.records.apply(SCOPE, [FoldIn(record_id=created.record_id)])
    late = clock.now()
    clock.advance(days=1)

    (folded,) = stores.records.apply(
        SCOPE, [FoldIn(record_id=created.record_id, seen_at=late - timedelta(days=2))]
    )

    assert folded.seen_count == 3
    assert folded.last_seen_at == late
