"""The rollup as a background job: every actor of a memory, switchable, with a run log.

``run_rollup_job(stores, model, memory_id, clock=...)`` checks the memory's switch
(``cairn.jobs.JobSwitches``; the rollup is on unless switched off), rolls up every session of
every actor that has events (``cairn.history.rollup.roll_up_scope``) and records one
``JobRun``: how many actors it visited, how many chunks it wrote, and why any session stopped
early (the reasons, counted, never with content or ids).

An actor whose history did not change is skipped, named in the reasons (the outcome stays
``done``): when a pass over its sessions stops for no reason, the scope's history generation
read before it (``Stores.history_generations``) is noted in the job log
(``JobLog.set_marker``), and the next run skips the scope while the generation is that one
(one point read instead of a Query per session); any append, deletion or chunk write moves
it, and so does a chunk the pass wrote itself (the next run looks once more).

A run that is switched off, or whose stores keep no pyramid, is recorded as ``skipped`` with
the reason. The embedded host runs it with ``cairn jobs run rollup``; on AWS the scheduled
jobs function (``functions/jobs``) calls it with a time limit (``until``) inside its own.
Like every job's (``cairn.history.job_runs``), its walk over the actors resumes after the last
actor it started before ``until`` and wraps around, so a run cut short by its time does not
leave the same later actors behind on every run.
"""

from __future__ import annotations

import secrets
from collections import Counter
from datetime import datetime

from cairn.history.job_runs import WALK_KEY, WALK_SCOPE_ACTOR, resumed
from cairn.history.rollup import DEFAULT_MAX_CALLS, roll_up_scope
from cairn.jobs import MAX_REASONS, JobName, JobRun, job_run_id
from cairn.models import Scope
from cairn.ports import MAX_PAGE_SIZE, Clock, ModelProvider, Stores

# Why an actor was not visited: nothing it holds changed since a run left nothing to do.
UNCHANGED = "no turn or chunk changed since a run left nothing to roll up"


def run_rollup_job(
    stores: Stores,
    model: ModelProvider,
    memory_id: str,
    *,
    clock: Clock,
    max_calls: int = DEFAULT_MAX_CALLS,
    until: datetime | None = None,
) -> JobRun:
    """One rollup run over the memory, logged in ``stores.jobs`` when the stores have one; no
    session is started at or after ``until`` (a partial run: the next one continues)."""
    started = clock.now()
    run_id = job_run_id(started, secrets.token_hex(4))
    skipped = _why_not(stores, memory_id)
    if skipped is not None:
        run = JobRun(
            memory_id=memory_id,
            job=JobName.ROLLUP,
            run_id=run_id,
            started_at=started,
            finished_at=clock.now(),
            outcome="skipped",
            reasons=(skipped,),
        )
    else:
        assert stores.chunks is not None  # checked by _why_not
        actors = changed = unchanged = 0
        reasons: Counter[str] = Counter()
        walk = Scope(memory_id=memory_id, actor_id=WALK_SCOPE_ACTOR)
        noted = _walked(stores, walk)
        last = noted
        for actor_id in resumed(_actors(stores, memory_id), noted):
            actors += 1
            if until is None or clock.now() < until:
                last = actor_id
            scope = Scope(memory_id=memory_id, actor_id=actor_id)
            generation = _generation(stores, scope)
            if generation is not None and _noted(stores, scope) == generation:
                unchanged += 1
                continue
            wrote, stopped = 0, 0
            for report in roll_up_scope(
                stores.events,
                stores.chunks,
                model,
                scope,
                clock=clock,
                max_calls=max_calls,
                until=until,
            ):
                wrote += report.chunks
                if report.skipped is not None:
                    reasons[report.skipped] += 1
                    stopped += 1
            changed += wrote
            if generation is not None and stores.jobs is not None and not stopped:
                # Nothing was left to roll up as of ``generation`` (read before the pass), so
                # the scope is skipped until it moves. A pass that wrote chunks moved it
                # itself: the next run looks once more, and notes the generation then.
                stores.jobs.set_marker(scope, JobName.ROLLUP, generation)
        if stores.jobs is not None and last is not None and last != noted:
            stores.jobs.set_marker(walk, JobName.ROLLUP, last, key=WALK_KEY)
        listed = [
            f"{count} session(s): {why}"[:300] for why, count in reasons.most_common(MAX_REASONS)
        ]
        if unchanged:
            listed.append(f"{unchanged} actor(s) skipped: {UNCHANGED}")
        run = JobRun(
            memory_id=memory_id,
            job=JobName.ROLLUP,
            run_id=run_id,
            started_at=started,
            finished_at=clock.now(),
            outcome="partial" if reasons else "done",
            actors=actors,
            changed=changed,
            reasons=tuple(listed[:MAX_REASONS]),
        )
    if stores.jobs is not None:
        stores.jobs.record_run(run)
    return run


def _why_not(stores: Stores, memory_id: str) -> str | None:
    if stores.chunks is None:
        return "these stores keep no history pyramid"
    if stores.jobs is not None and not stores.jobs.switches(memory_id).is_on(JobName.ROLLUP):
        return "the rollup is switched off for this memory"
    return None


def _generation(stores: Stores, scope: Scope) -> str | None:
    """The scope's history generation as a marker, ``None`` when the stores keep none."""
    if stores.history_generations is None or stores.jobs is None:
        return None
    return str(stores.history_generations.generation(scope))


def _walked(stores: Stores, walk: Scope) -> str | None:
    """The last actor the previous run started before its time was up."""
    return None if stores.jobs is None else stores.jobs.marker(walk, JobName.ROLLUP, key=WALK_KEY)


def _noted(stores: Stores, scope: Scope) -> str | None:
    assert stores.jobs is not None
    return stores.jobs.marker(scope, JobName.ROLLUP)


def _actors(stores: Stores, memory_id: str) -> list[str]:
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = stores.events.list_actors(memory_id, limit=MAX_PAGE_SIZE, cursor=cursor)
        found += page.items
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor
