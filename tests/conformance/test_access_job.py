"""The access-count job on every backend: counted from the journal, once, beside the records
(``cairn.history.access``)."""

from __future__ import annotations

import pytest

from cairn.clock import FixedClock
from cairn.errors import CountedMeanwhileError
from cairn.history.access import run_access_job
from cairn.jobs import JobName, JobSwitches
from cairn.models import JournalEntry, RecordVersion, SelectedEntry
from cairn.ports import Stores
from tests.conformance.samples import SCOPE, create


def recalled(stores: Stores, clock: FixedClock, n: int, *shown: RecordVersion) -> None:
    stores.journal.put(
        JournalEntry(
            journal_id=f"jr-{n}",
            memory_id=SCOPE.memory_id,
            actor_id=SCOPE.actor_id,
            created_at=clock.now(),
            query="q",
            selected=tuple(
                SelectedEntry(
                    record_id=r.record_id,
                    version=r.version,
                    content_digest=r.content_digest,
                    score=0.5,
                )
                for r in shown
            ),
            block_digest="0" * 64,
        )
    )


def test_counts_come_from_the_journal_once_and_never_touch_the_records(
    stores: Stores, clock: FixedClock
) -> None:
    a = create(stores, "one")
    b = create(stores, "two")
    recalled(stores, clock, 1, a, b)
    recalled(stores, clock, 2, a)

    run = run_access_job(stores, "m1", clock=clock)
    clock.advance(seconds=1)
    rerun = run_access_job(stores, "m1", clock=clock)
    recalled(stores, clock, 3, b)
    clock.advance(seconds=1)
    later = run_access_job(stores, "m1", clock=clock)

    assert stores.access is not None
    assert stores.access.counts(SCOPE) == {a.record_id: 2, b.record_id: 2}
    assert stores.access.cursor(SCOPE) == 3
    assert (run.outcome, run.actors, run.changed) == ("done", 1, 2)
    assert (rerun.changed, later.changed) == (0, 1)
    for record in (a, b):
        head = stores.records.get(SCOPE, record.record_id)
        assert head == record  # no new version, seen_count untouched
    assert stores.jobs is not None
    assert [r.run_id for r in stores.jobs.runs("m1", JobName.ACCESS)] == [
        later.run_id,
        rerun.run_id,
        run.run_id,
    ]


def test_a_run_that_lost_the_race_adds_nothing(stores: Stores, clock: FixedClock) -> None:
    a = create(stores, "one")
    recalled(stores, clock, 1, a)
    assert stores.access is not None
    stores.access.add(SCOPE, {a.record_id: 1}, after=0, upto=1)  # another run committed first

    with pytest.raises(CountedMeanwhileError):  # a run that read the cursor before that
        stores.access.add(SCOPE, {a.record_id: 1}, after=0, upto=1)
    run = run_access_job(stores, "m1", clock=clock)

    assert stores.access.counts(SCOPE) == {a.record_id: 1}
    assert run.changed == 0


def test_a_bounded_run_leaves_the_rest_for_the_next(stores: Stores, clock: FixedClock) -> None:
    a = create(stores, "one")
    for n in range(1, 6):
        recalled(stores, clock, n, a)

    first = run_access_job(stores, "m1", clock=clock, max_entries=3)
    second = run_access_job(stores, "m1", clock=clock, max_entries=3)

    assert stores.access is not None
    assert stores.access.counts(SCOPE) == {a.record_id: 5}
    assert first.outcome == "partial"
    assert second.outcome == "done"


def test_a_memory_that_switched_counting_off_is_skipped(stores: Stores, clock: FixedClock) -> None:
    a = create(stores, "one")
    recalled(stores, clock, 1, a)
    assert stores.jobs is not None
    stores.jobs.set_switches(JobSwitches(memory_id="m1").switched(JobName.ACCESS, False))

    run = run_access_job(stores, "m1", clock=clock)

    assert (run.outcome, run.reasons) == ("skipped", ("access is switched off for this memory",))
    assert stores.access is not None
    assert stores.access.counts(SCOPE) == {}
    assert stores.jobs.runs("m1", JobName.ACCESS) == (run,)
