"""Decay: a salience per record that halves per idle half-life, kept beside the record.

``run_decay_job(stores, memory_id, clock=...)`` visits every actor of the memory holding
records and measures each active head: it is active when last confirmed (``last_seen_at``,
which a repeat folded in moves; a revision alone does not) or when last shown, and its
salience is ``0.5 ** (idle / half_life)``, 1.0 when active now. Recall writes nothing, so
"last shown" is what this job can tell: a record whose access count (``AccessCounts.counts``)
grew since its last measurement was shown in between, and is taken as active at this run.
The values go to ``AccessCounts.put_salience`` (never a record version, never a change of
trust), at most ``MAX_COUNTS_PER_ADD`` a put. Nothing is deleted: a record idle for years
keeps a salience near 0 and stays recallable.

Recall does not read salience (yet): the recall index's results are exact by contract
(``tests/unit/test_recall_index_exact.py``), and a prior folded into its ranking would change
them. It is a reported value (``cairn ls records``, ``cairn stats``).

Bounded per run: at most ``max_records`` records over the memory; the rest wait.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from cairn.history.job_runs import Countdown, RunTally, start_run, switched_off
from cairn.jobs import JobName, JobRun
from cairn.links import MAX_COUNTS_PER_ADD, Salience
from cairn.models import RecordVersion, Scope
from cairn.ports import MAX_PAGE_SIZE, AccessCounts, Clock, RecordStore, Stores

DEFAULT_HALF_LIFE = timedelta(days=30)
DEFAULT_MAX_RECORDS = 10_000


def salience_at(active_at: datetime, now: datetime, half_life: timedelta) -> float:
    """1.0 when active at ``now``, halving per ``half_life`` idle since (never above 1)."""
    idle = max((now - active_at).total_seconds(), 0.0)
    return float(0.5 ** (idle / half_life.total_seconds()))


def measure(
    record: RecordVersion,
    shown: int,
    prior: Salience | None,
    now: datetime,
    half_life: timedelta,
) -> Salience:
    """The record's salience now, from its last measurement (if any) and its access count."""
    active_at = record.last_seen_at
    if prior is not None:
        active_at = max(active_at, now if shown > prior.shown else prior.active_at)
    return Salience(
        record_id=record.record_id,
        shown=shown,
        active_at=active_at,
        value=salience_at(active_at, now, half_life),
        measured_at=now,
    )


def run_decay_job(
    stores: Stores,
    memory_id: str,
    *,
    clock: Clock,
    half_life: timedelta = DEFAULT_HALF_LIFE,
    max_records: int = DEFAULT_MAX_RECORDS,
    until: datetime | None = None,
) -> JobRun:
    """One decay run over the memory; see the module."""
    tally = start_run(JobName.DECAY, memory_id, clock, until)
    skipped = switched_off(stores, memory_id, JobName.DECAY)
    if stores.access is None:
        skipped = "these stores keep no access counts, so no salience"
    if skipped is not None:
        return tally.finish(stores, clock, skipped=skipped)
    assert stores.access is not None
    budget = Countdown(max_records)
    for scope in tally.scopes(stores, memory_id, budget.spent):
        budget.take(
            _measure_scope(
                stores.records, stores.access, scope, budget.left, half_life, tally, clock
            )
        )
    return tally.finish(stores, clock)


def _measure_scope(
    records: RecordStore,
    access: AccessCounts,
    scope: Scope,
    left: int,
    half_life: timedelta,
    tally: RunTally,
    clock: Clock,
) -> int:
    """Measure the scope's active heads, at most ``left``; returns how many were measured."""
    now = clock.now()
    counts, prior = access.counts(scope), access.salience(scope)
    measured = 0
    cursor: str | None = None
    while True:
        page = records.list_records(scope, limit=min(MAX_PAGE_SIZE, left - measured), cursor=cursor)
        for start in range(0, len(page.items), MAX_COUNTS_PER_ADD):
            batch = page.items[start : start + MAX_COUNTS_PER_ADD]
            access.put_salience(
                scope,
                [
                    measure(r, counts.get(r.record_id, 0), prior.get(r.record_id), now, half_life)
                    for r in batch
                ],
            )
            tally.changed += len(batch)
        measured += len(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return measured
        if measured >= left:
            tally.reasons["scope(s) with records left for the next run: the run's bound"] += 1
            return measured
