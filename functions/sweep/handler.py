"""The trigger sweep Lambda, run by an EventBridge schedule: ``cairn.extract.sweep.sweep``.

Claims idle sessions, finishes stalled releases and re-announces unconsumed rollouts; the
library returns counts and this shell publishes them as metrics.
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
    report = sweep(wiring.pipeline())
    for name, value in report.model_dump().items():
        count("Sweep" + name.title().replace("_", ""), value)
    logger.info("sweep done", extra=report.model_dump())
    return report.model_dump()
