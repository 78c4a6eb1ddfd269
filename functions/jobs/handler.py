"""The scheduled jobs Lambda: ``cairn.history.scheduled.run_scheduled_jobs`` over every memory.

Woken by its EventBridge rule (``infra.components.jobs``). For each memory the store configures
it runs access counting and link generation (each honouring the memory's switch, each leaving
its run in the run log: counts and reasons, never content) and publishes the counts as metrics.
"""

from __future__ import annotations

from typing import Any

from cairn.history.scheduled import memory_ids, run_scheduled_jobs
from functions._common import wiring
from functions._common.observability import count, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, int]:
    stores, space = wiring.stores(), wiring.embedder().identity
    report = {"memories": 0, "runs": 0, "changed": 0, "skipped": 0}
    for memory_id in memory_ids(stores):
        report["memories"] += 1
        for run in run_scheduled_jobs(
            stores, wiring.model(), memory_id, embedder=space, clock=wiring.clock()
        ):
            report["runs"] += 1
            report["changed"] += run.changed
            report["skipped"] += run.outcome == "skipped"
            count(f"Job{run.job.value.title()}Changes", run.changed)
    logger.info("jobs done", extra=report)
    return report
