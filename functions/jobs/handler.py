"""The scheduled jobs Lambda: ``run_scheduled_jobs``, then the rollup, over every memory.

Woken by its EventBridge rule (``infra.components.jobs``). For each memory the store configures
it runs access counting, link generation, and evolution, reflection and decay where switched
on (``cairn.history.scheduled``, each bounded by its own caps), then rolls up every actor's
sessions (``cairn.history.job.run_rollup_job``: complete batches of ten turns, and of ten
chunks, become the next level up). Each job honours the
memory's switch and leaves its run in the run log (counts and reasons, never content); the
counts are published as metrics.

The rollup of a large backlog could outlast the invocation, so it goes last, makes at most
``ROLLUP_CALLS`` model calls a session, and starts no session once less than
``ROLLUP_RESERVE`` (one session's worst case) is left of the function's time: its run is then
``partial`` and says so, and the next run continues where the chunks end. Reflection, when
switched on, leaves the rollup that time: it starts no model call it could not finish before;
and every scheduled job starts no actor after that point either (its run is ``partial``; the
next run resumes after the last actor it visited, ``cairn.history.job_runs``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from cairn.history.job import run_rollup_job
from cairn.history.scheduled import memory_ids, run_scheduled_jobs
from functions._common import wiring
from functions._common.observability import count, logger, metrics, tracer

ROLLUP_CALLS = 8  # as link generation: 8 calls a run at most 45 s each
ROLLUP_RESERVE = timedelta(seconds=ROLLUP_CALLS * wiring.model_timeout_seconds() + 30)
MODEL_CALL = timedelta(seconds=wiring.model_timeout_seconds())


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, int]:
    stores, embedder, model, clock = (
        wiring.stores(),
        wiring.embedder(),
        wiring.model(),
        wiring.clock(),
    )
    report = {"memories": 0, "runs": 0, "changed": 0, "skipped": 0}
    for memory_id in memory_ids(stores):
        report["memories"] += 1
        left = timedelta(milliseconds=context.get_remaining_time_in_millis())
        until = clock.now() + left - ROLLUP_RESERVE
        ran = run_scheduled_jobs(
            stores,
            model,
            memory_id,
            embedder=embedder.identity,
            clock=clock,
            embed_with=embedder,
            # Every job leaves the rollup its time: no actor started, and no reflection call
            # (off by default) it cannot finish, after this (a ``partial`` run).
            until=until - MODEL_CALL,
        )
        rolled = run_rollup_job(
            stores, model, memory_id, clock=clock, max_calls=ROLLUP_CALLS, until=until
        )
        for run in (*ran, rolled):
            report["runs"] += 1
            report["changed"] += run.changed
            report["skipped"] += run.outcome == "skipped"
            count(f"Job{run.job.value.title()}Changes", run.changed)
    logger.info("jobs done", extra=report)
    return report
