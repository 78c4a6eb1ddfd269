"""The record stream delivery Lambda: ``cairn.streaming.delivery.deliver_scope`` per scope.

Triggered by the items table's DynamoDB stream (keys only, filtered to change items,
``sk`` beginning ``CH#``: docs/dynamodb.md, "The record change feed"), it delivers each scope
named in the batch from that scope's delivery cursor to its memory's Kinesis stream. A stream
record is only a wake-up: the feed and the cursor say what to deliver, so a lost or repeated
trigger delivers nothing twice beyond at-least-once (events keep their ``eventId``). A scope
that fails reports its records as batch item failures; the event source mapping retries them,
then sends them to the delivery dead-letter queue. No content is logged.
"""

from __future__ import annotations

from typing import Any

from cairn.errors import CairnError, ConfigurationError
from cairn.models import Scope
from cairn.store.dynamodb.change_feed import scope_of_change_key
from cairn.streaming.delivery import deliver_scope
from functions._common import wiring
from functions._common.observability import count, logger, metrics, tracer


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return deliver(event)


def deliver(event: dict[str, Any]) -> dict[str, Any]:
    """Deliver every scope the stream records name; the records of a scope that failed are
    reported (``ReportBatchItemFailures``) so they are retried."""
    scopes: dict[Scope, list[str]] = {}
    for record in event.get("Records", []):
        change = record.get("dynamodb", {})
        scope = scope_of_change_key(change.get("Keys", {}))
        if scope is not None:
            scopes.setdefault(scope, []).append(str(change.get("SequenceNumber", "")))
    stores = wiring.stores()
    if stores.changes is None or stores.memories is None:  # pragma: no cover - DynamoDB has both
        raise ConfigurationError("the backend keeps no change feed or memories; upgrade cairn")
    failed: list[str] = []
    delivered = 0
    for scope, sequence_numbers in scopes.items():
        try:
            delivered += deliver_scope(
                scope,
                feed=stores.changes,
                records=stores.records,
                memories=stores.memories,
                cursors=wiring.stream_cursors(),
                sink=wiring.event_sink(),
            )
        except CairnError as exc:
            logger.warning("stream delivery failed", extra={"error": type(exc).__name__})
            failed.extend(sequence_numbers)
    if delivered:
        count("StreamEventsDelivered", delivered)
    return {"batchItemFailures": [{"itemIdentifier": n} for n in failed]}
