"""The trigger sweep Lambda, run by an EventBridge schedule: ``cairn.extract.sweep.sweep``.

Claims idle sessions, finishes stalled releases and re-announces unconsumed rollouts; the
library returns counts and this shell publishes them as metrics. It runs 43,800 times a month,
nearly always with nothing to do: such a run publishes no metric and logs at debug level only,
so an idle sweep adds no metric-month and no log line beyond Lambda's own.
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
    report = sweep(wiring.pipeline()).model_dump()
    done = {name: value for name, value in report.items() if value}
    for name, value in done.items():
        count("Sweep" + name.title().replace("_", ""), value)
    (logger.info if done else logger.debug)("sweep done", extra=report)
    return report
