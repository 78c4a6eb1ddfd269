"""Background jobs' switches and run log (``cairn.jobs``): per memory, newest first, durable."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cairn.clock import FixedClock
from cairn.errors import InvalidInputError
from cairn.jobs import JobName, JobRun, JobSwitches, job_run_id
from cairn.ports import JobLog, Stores
from tests.conformance.backends import open_backend

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def log_of(stores: Stores) -> JobLog:
    assert stores.jobs is not None, "every backend keeps the job log"
    return stores.jobs


def run(memory_id: str, minutes: int, *, changed: int = 0, suffix: str = "a") -> JobRun:
    started = T0 + timedelta(minutes=minutes)
    return JobRun(
        memory_id=memory_id,
        job=JobName.ROLLUP,
        run_id=job_run_id(started, suffix),
        started_at=started,
        finished_at=started + timedelta(seconds=3),
        outcome="done",
        actors=2,
        changed=changed,
    )


def test_a_memory_never_switched_runs_every_job_by_its_default(stores: Stores) -> None:
    switches = log_of(stores).switches("m1")

    assert switches == JobSwitches(memory_id="m1")
    assert switches.is_on(JobName.ROLLUP)


def test_switches_are_kept_per_memory(stores: Stores) -> None:
    log = log_of(stores)
    log.set_switches(JobSwitches(memory_id="m1").switched(JobName.ROLLUP, False))

    assert not log.switches("m1").is_on(JobName.ROLLUP)
    assert log.switches("m2").is_on(JobName.ROLLUP)
    log.set_switches(log.switches("m1").switched(JobName.ROLLUP, True))
    assert log.switches("m1").is_on(JobName.ROLLUP)


def test_runs_are_listed_newest_first_per_memory(stores: Stores) -> None:
    log = log_of(stores)
    for minutes in (5, 1, 3):
        log.record_run(run("m1", minutes, changed=minutes))
    log.record_run(run("m2", 9))

    listed = log.runs("m1", JobName.ROLLUP)

    assert [r.changed for r in listed] == [5, 3, 1]
    assert [r.changed for r in log.runs("m1", JobName.ROLLUP, limit=2)] == [5, 3]
    assert [r.memory_id for r in log.runs("m2", JobName.ROLLUP)] == ["m2"]
    assert log.runs("m3", JobName.ROLLUP) == ()


def test_recording_a_run_again_replaces_it(stores: Stores) -> None:
    log = log_of(stores)
    log.record_run(run("m1", 1, changed=1))
    log.record_run(run("m1", 1, changed=7))

    assert [r.changed for r in log.runs("m1", JobName.ROLLUP)] == [7]


@pytest.mark.parametrize("limit", [0, 101])
def test_a_page_of_runs_out_of_range_is_refused(stores: Stores, limit: int) -> None:
    with pytest.raises(InvalidInputError, match="limit must be between 1 and 100"):
        log_of(stores).runs("m1", JobName.ROLLUP, limit=limit)


def test_the_log_survives_reopen(
    persistent_backend: str, clock: FixedClock, tmp_path: Path
) -> None:
    first = open_backend(persistent_backend, clock, tmp_path)
    try:
        log_of(first).record_run(run("m1", 1, changed=4))
        log_of(first).set_switches(JobSwitches(memory_id="m1").switched(JobName.ROLLUP, False))
    finally:
        first.close()
    again = open_backend(persistent_backend, clock, tmp_path)
    try:
        assert [r.changed for r in log_of(again).runs("m1", JobName.ROLLUP)] == [4]
        assert not log_of(again).switches("m1").is_on(JobName.ROLLUP)
    finally:
        again.close()
