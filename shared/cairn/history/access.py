"""Access counts: how many recalls showed each record, counted from the recall journal.

Recall stays a read: it files a journal entry and writes nothing on the records. This job
(``run_access_job(stores, memory_id, clock=...)``) reads, for every actor of the memory holding
records, the journal chain past the scope's counted cursor (``AccessCounts.cursor``), counts
each record once per entry that selected it, and adds the counts and the cursor's move in one
transaction (``AccessCounts.add``). So a rerun, or two runs at once, never counts an entry
twice: the second commit finds the cursor moved and adds nothing (``CountedMeanwhileError``,
logged as a reason). Counts are kept beside the records, never as record versions, and are
not ``seen_count`` (a recall is no confirmation).

Bounded per run: at most ``max_entries`` journal entries over the memory; the rest are counted
by the next run.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from cairn.errors import CountedMeanwhileError
from cairn.history.job_runs import Countdown, RunTally, start_run, switched_off
from cairn.jobs import JobName, JobRun
from cairn.links import MAX_COUNTS_PER_ADD
from cairn.models import JournalEntry, Scope
from cairn.ports import AccessCounts, Clock, JournalStore, Stores

DEFAULT_MAX_ENTRIES = 10_000
_PAGE = 100


def run_access_job(
    stores: Stores,
    memory_id: str,
    *,
    clock: Clock,
    max_entries: int = DEFAULT_MAX_ENTRIES,
    until: datetime | None = None,
) -> JobRun:
    """One access-counting run over the memory; see the module."""
    tally = start_run(JobName.ACCESS, memory_id, clock, until)
    skipped = switched_off(stores, memory_id, JobName.ACCESS)
    if stores.access is None:
        skipped = "these stores keep no access counts"
    if skipped is not None:
        return tally.finish(stores, clock, skipped=skipped)
    assert stores.access is not None
    budget = Countdown(max_entries)
    for scope in tally.scopes(stores, memory_id, budget.spent):
        budget.take(_count_scope(stores.journal, stores.access, scope, budget.left, tally))
    return tally.finish(stores, clock)


def _count_scope(
    journal: JournalStore, access: AccessCounts, scope: Scope, left: int, tally: RunTally
) -> int:
    """Count the scope's entries past its cursor, at most ``left``; returns how many were read."""
    cursor = access.cursor(scope)
    read = 0
    pending: Counter[str] = Counter()
    upto = cursor
    while read < left:
        entries = journal.chain(scope, after=upto, limit=min(_PAGE, left - read))
        if not entries:
            break
        for entry in entries:
            shown = _shown(entry)
            if len(set(pending) | shown) > MAX_COUNTS_PER_ADD and upto > cursor:
                if not _commit(access, scope, pending, cursor, upto, tally):
                    return read
                cursor, pending = upto, Counter()
            pending.update(shown)
            upto = entry.sequence
            read += 1
    if upto > cursor and not _commit(access, scope, pending, cursor, upto, tally):
        return read
    if read >= left and journal.chain(scope, after=upto, limit=1):
        tally.reasons["scope(s) with entries left for the next run: the run's bound"] += 1
    return read


def _shown(entry: JournalEntry) -> set[str]:
    return {selected.record_id for selected in entry.selected}


def _commit(
    access: AccessCounts,
    scope: Scope,
    counts: Counter[str],
    after: int,
    upto: int,
    tally: RunTally,
) -> bool:
    try:
        access.add(scope, dict(counts), after=after, upto=upto)
    except CountedMeanwhileError:
        tally.reasons["scope(s) counted meanwhile by another run: left to it"] += 1
        return False
    tally.changed += len(counts)
    return True
