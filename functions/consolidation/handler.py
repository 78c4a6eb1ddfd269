"""The consolidation Lambda: SQS FIFO batch of evidence notices -> one pass per notice's scope.

Powertools' ``SqsFifoPartialProcessor`` reports partial batch failures; the event source takes
one notice at a time (a pass may take 60 s, and its retry as long again). A pass that failed on
its deadline or on a conflicting write is retried once after 5 s in the same invocation
(``consolidate_with_retry``); what still fails that way, and invalid answers, leave the
evidence pending for a later notice (the message is acknowledged). A store outage or model
throttling raises: SQS delivers the notice again, and after five receives it waits in the
dead-letter queue (alarm). The pass's model usage is published apart from any agent's.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from cairn.consolidate.commit import consolidate_with_retry
from cairn.rollout.payload import decode_notice
from functions._common import wiring
from functions._common.observability import count, logger, metrics, tracer

processor = SqsFifoPartialProcessor(skip_group_on_error=True)


@tracer.capture_method
def record_handler(record: SQSRecord) -> None:
    outcome = consolidate_with_retry(decode_notice(record.body).scope, wiring.consolidator())
    logger.info("consolidation pass", extra={"status": outcome.status})
    count(f"Consolidation{outcome.status.capitalize()}", 1)
    count("EvidenceConsumed", len(outcome.consumed))
    count("ConsolidationRecordsWritten", len(outcome.written))
    count("ConsolidationModelCalls", outcome.usage.calls)
    count("ConsolidationInputTokens", outcome.usage.input_tokens)
    count("ConsolidationOutputTokens", outcome.usage.output_tokens)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
