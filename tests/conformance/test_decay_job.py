"""Decay on every backend: a salience per record beside it, halving per idle half-life, reset
by a showing or a confirmation, never a version and never a deletion (``cairn.history.decay``)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from cairn.changes import FoldIn
from cairn.clock import FixedClock
from cairn.erasure import erase_actor
from cairn.erasure_lineage import erase_record
from cairn.errors import InvalidInputError
from cairn.history.access import run_access_job
from cairn.history.decay import DEFAULT_HALF_LIFE, run_decay_job
from cairn.history.scheduled import run_scheduled_jobs
from cairn.jobs import JobName, JobSwitches
from cairn.links import Salience
from cairn.local import offline_model
from cairn.ports import AccessCounts, Stores
from tests.conformance.samples import OTHER_ACTOR, SCOPE, create
from tests.conformance.test_access_job import recalled
from tests.conformance.test_erase_races import stored_bytes


def access_of(stores: Stores) -> AccessCounts:
    assert stores.access is not None, "every backend keeps salience beside its access counts"
    return stores.access


def switch_on(stores: Stores) -> None:
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id="m1").switched(JobName.DECAY, True))


def value(stores: Stores, record_id: str) -> float:
    return access_of(stores).salience(SCOPE)[record_id].value


def test_decay_is_off_by_default_and_a_skipped_run_stores_nothing(
    stores: Stores, clock: FixedClock
) -> None:
    create(stores, "one")

    run = run_decay_job(stores, "m1", clock=clock)
    clock.advance(seconds=1)
    (scheduled,) = [
        r
        for r in run_scheduled_jobs(stores, offline_model(), "m1", embedder=None, clock=clock)
        if r.job is JobName.DECAY
    ]

    assert (run.outcome, run.reasons) == ("skipped", ("decay is switched off for this memory",))
    assert scheduled.outcome == "skipped"
    assert access_of(stores).salience(SCOPE) == {}
    assert stores.jobs is not None
    assert [r.run_id for r in stores.jobs.runs("m1", JobName.DECAY)] == [
        scheduled.run_id,
        run.run_id,
    ]


def test_salience_halves_per_idle_half_life_and_never_touches_the_records(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    a = create(stores, "one")
    b = create(stores, "two")

    first = run_decay_job(stores, "m1", clock=clock)
    clock.advance(DEFAULT_HALF_LIFE)
    second = run_decay_job(stores, "m1", clock=clock)
    clock.advance(DEFAULT_HALF_LIFE)
    run_scheduled_jobs(stores, offline_model(), "m1", embedder=None, clock=clock)

    assert (first.outcome, first.actors, first.changed) == ("done", 1, 2)
    assert second.changed == 2
    assert value(stores, a.record_id) == pytest.approx(0.25)
    assert value(stores, b.record_id) == pytest.approx(0.25)
    for record in (a, b):
        assert stores.records.get(SCOPE, record.record_id) == record  # no version, same trust


def test_a_showing_or_a_confirmation_makes_a_record_live_again(
    stores: Stores, clock: FixedClock
) -> None:
    switch_on(stores)
    shown, confirmed, idle = create(stores, "one"), create(stores, "two"), create(stores, "three")
    run_decay_job(stores, "m1", clock=clock)
    clock.advance(DEFAULT_HALF_LIFE * 2)

    recalled(stores, clock, 1, shown)
    run_access_job(stores, "m1", clock=clock)
    stores.records.apply(SCOPE, [FoldIn(record_id=confirmed.record_id)])
    run_decay_job(stores, "m1", clock=clock)
    clock.advance(DEFAULT_HALF_LIFE)
    run_decay_job(stores, "m1", clock=clock)  # no new showing: idle again since the last one

    assert value(stores, shown.record_id) == pytest.approx(0.5)
    assert value(stores, confirmed.record_id) == pytest.approx(0.5)
    assert value(stores, idle.record_id) == pytest.approx(0.125)
    assert access_of(stores).salience(SCOPE)[shown.record_id].shown == 1


def test_a_run_is_bounded_and_the_rest_waits(stores: Stores, clock: FixedClock) -> None:
    switch_on(stores)
    for text in ("one", "two", "three"):
        create(stores, text)

    run = run_decay_job(stores, "m1", clock=clock, max_records=2)

    assert (run.outcome, run.changed) == ("partial", 2)
    assert len(access_of(stores).salience(SCOPE)) == 2


def test_a_bad_salience_put_is_refused_and_changes_nothing(
    stores: Stores, clock: FixedClock
) -> None:
    def one(i: int) -> Salience:
        now = clock.now()
        return Salience(
            record_id=f"mem-{i:036d}", shown=0, active_at=now, value=1.0, measured_at=now
        )

    with pytest.raises(InvalidInputError, match="at most 90"):
        access_of(stores).put_salience(SCOPE, [one(i) for i in range(91)])
    with pytest.raises(InvalidInputError, match="twice"):
        access_of(stores).put_salience(SCOPE, [one(1), one(1)])

    assert access_of(stores).salience(SCOPE) == {}


def test_erasing_a_record_or_an_actor_removes_its_salience(
    backend_name: str, stores: Stores, clock: FixedClock, tmp_path: Path
) -> None:
    switch_on(stores)
    a, b = create(stores, "one"), create(stores, "two")
    theirs = create(stores, "theirs", scope=OTHER_ACTOR, namespace="/facts/a2/")
    run_decay_job(stores, "m1", clock=clock)
    assert set(access_of(stores).salience(OTHER_ACTOR)) == {theirs.record_id}

    erase_record(stores, SCOPE, b.record_id, staging=None, clock=clock)
    erase_actor(stores, OTHER_ACTOR, staging=None)

    assert set(access_of(stores).salience(SCOPE)) == {a.record_id}
    assert access_of(stores).salience(OTHER_ACTOR) == {}
    if backend_name != "memory":  # only salience is stored as JSON naming "measured_at"
        assert b'"measured_at"' in stored_bytes(backend_name, tmp_path)

    erase_actor(stores, SCOPE, staging=None)

    assert access_of(stores).salience(SCOPE) == {}
    if backend_name != "memory":
        assert b'"measured_at"' not in stored_bytes(backend_name, tmp_path)


def test_salience_is_one_when_active_now_and_never_above(clock: FixedClock) -> None:
    from cairn.history.decay import salience_at

    now = clock.now()
    assert salience_at(now, now, DEFAULT_HALF_LIFE) == 1.0
    assert salience_at(now + timedelta(days=1), now, DEFAULT_HALF_LIFE) == 1.0
    assert salience_at(now - DEFAULT_HALF_LIFE * 3, now, DEFAULT_HALF_LIFE) == pytest.approx(0.125)
