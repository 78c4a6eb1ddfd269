"""The Telegram webhook Lambda (behind a function URL): delivery -> ``TelegramBackend.handle``.

Telegram POSTs each update here with its secret-token header. The answer is only a status: 200
(answered, ignored or a duplicate), 401 (no or wrong secret), 400 (not an update). A retryable
failure raises, the URL answers 5xx, and Telegram redelivers the update later.
"""

from __future__ import annotations

import base64
from typing import Any

from functions._common.observability import count, logger, metrics, tracer
from functions.telegram import wiring


def _body(event: dict[str, Any]) -> bytes:
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return base64.b64decode(body)
    return str(body).encode("utf-8")


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    outcome = wiring.backend().handle(event.get("headers") or {}, _body(event))
    logger.info("telegram delivery", extra={"outcome": outcome.outcome})
    count("Telegram" + outcome.outcome.title(), 1)
    return {"statusCode": outcome.status, "headers": {"content-type": "text/plain"}, "body": ""}
