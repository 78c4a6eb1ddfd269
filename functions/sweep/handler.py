"""The trigger sweep Lambda: ``cairn.extract.sweep.sweep``, woken when something falls due.

Claims idle sessions, finishes stalled releases and re-announces unconsumed rollouts, then arms
its next wake-up (a one-time schedule invoking this function, its own ARN from the context) for
what is still due, or none; the hourly safety rule runs it too. The library returns counts and
this shell publishes them as metrics. A run with nothing to do publishes no metric and logs at
debug level only, so it adds no metric-month and no log line beyond Lambda's own.
"""

from __future__ import annotations

from typing import Any

from cairn.extract.sweep import sweep
from functions._common import wiring
from functions._common.observability import count, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, int]:
    timer = wiring.sweep_timer(context.invoked_function_arn)
    report = sweep(wiring.pipeline(), timer=timer).model_dump()
    done = {name: value for name, value in report.items() if value and name != "armed"}
    for name, value in done.items():
        count("Sweep" + name.title().replace("_", ""), value)
    (logger.info if done else logger.debug)("sweep done", extra=report)
    return report
