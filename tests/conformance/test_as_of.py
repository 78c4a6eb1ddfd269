"""Reads as of a time: what the actor's memory held at T, version by version."""

from __future__ import annotations

from datetime import datetime, timedelta

from cairn.changes import RecordPatch, Retract, Revise
from cairn.clock import FixedClock
from cairn.models import Status
from cairn.ports import Stores
from tests.conformance.samples import SCOPE, create

HALF = timedelta(minutes=30)


def test_as_of_reads_return_the_version_current_at_that_time(
    stores: Stores, clock: FixedClock
) -> None:
    t1 = clock.advance(hours=1)
    created = create(stores, "Drives a blue car")
    rid = created.record_id
    t2 = clock.advance(hours=1)
    stores.records.apply(
        SCOPE, [Revise(record_id=rid, patch=RecordPatch(content="Drives a red car"))]
    )
    t3 = clock.advance(hours=1)
    stores.records.apply(SCOPE, [Retract(record_id=rid)])
    clock.advance(hours=1)

    def as_of(
        when: datetime | None, *, include_inactive: bool = False
    ) -> list[tuple[int, str, Status]]:
        page = stores.records.list_records(SCOPE, as_of=when, include_inactive=include_inactive)
        return [(v.version, v.content, v.status) for v in page.items]

    assert as_of(t1 - HALF) == []
    assert as_of(t1 - HALF, include_inactive=True) == []
    assert as_of(t1 + HALF) == [(1, "Drives a blue car", Status.ACTIVE)]
    assert as_of(t2 + HALF) == [(2, "Drives a red car", Status.ACTIVE)]
    assert as_of(t3 + HALF) == []
    assert as_of(t3 + HALF, include_inactive=True) == [(3, "Drives a red car", Status.RETRACTED)]
    assert as_of(clock.now()) == as_of(None) == []


def test_as_of_reads_keep_each_record_on_its_own_timeline(
    stores: Stores, clock: FixedClock
) -> None:
    first = create(stores, "Reads science fiction")
    t_first = clock.advance(hours=1)
    second = create(stores, "Reads poetry")
    clock.advance(hours=1)
    stores.records.apply(SCOPE, [Retract(record_id=first.record_id)])

    at_first = stores.records.list_records(SCOPE, as_of=t_first - HALF).items
    at_second = stores.records.list_records(SCOPE, as_of=t_first + HALF).items
    now = stores.records.list_records(SCOPE).items

    assert [v.record_id for v in at_first] == [first.record_id]
    assert sorted(v.record_id for v in at_second) == sorted([first.record_id, second.record_id])
    assert [v.record_id for v in now] == [second.record_id]
