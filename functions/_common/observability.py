"""The one owner of Powertools' Logger, Metrics and Tracer for every cairn function.

``cairn`` itself logs through plain ``logging`` (it never imports Powertools); this module pulls
those records into the same structured JSON as the function's own. Nothing here logs memory
content: handlers log ids and counts, and ``POWERTOOLS_LOGGER_LOG_EVENT`` stays off (the
stack's Lambda defaults), because an SQS event body is a rollout notice and an API event carries
user text.
"""

from __future__ import annotations

import logging

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging.utils import copy_config_to_registered_loggers
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger()
metrics = Metrics()
tracer = Tracer()

# cairn's own loggers ("cairn.*") must emit through the function's JSON formatter. With the
# stack's service name, "cairn", the Powertools logger IS their parent and they propagate to it;
# under any other name its configuration is copied onto the "cairn" logger.
if logger.name.split(".")[0] != "cairn":
    logging.getLogger("cairn")  # registered, so the copy below finds it
    copy_config_to_registered_loggers(source_logger=logger, include={"cairn"})


def count(name: str, value: int) -> None:
    """Add ``value`` to the PascalCase metric ``name`` (zero counts are published too)."""
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


__all__ = ["count", "logger", "metrics", "tracer"]
