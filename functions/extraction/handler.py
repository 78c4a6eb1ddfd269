"""The extraction Lambda: SQS FIFO batch of rollout notices -> ``cairn.extract.delivery.consume``.

Powertools' ``SqsFifoPartialProcessor`` reports partial batch failures: a record whose
extraction raised (a retryable error: model timeout or throttling, a busy store) is reported
failed together with the later records of its message group (FIFO order holds per scope), and
SQS delivers them again; when every record failed, Powertools fails the invocation instead,
which returns the whole batch the same way. After the queue's ``maxReceiveCount`` a poison
message moves to the dead-letter queue, while its rollout stays announced for the sweep to
announce again.

A notice is taken only while the invocation's remaining time covers its worst case
(``wiring.record_budget_ms``, sized by the stack): the rest of the batch is reported failed
untouched (``RolloutsDeferred``, not an error) and comes back after the visibility timeout, so
a batch never outruns the function. The stack's timeout holds the worst case twice, so the
first notice of a batch is always taken.

Idempotent per rollout id through the rollout index, not Powertools' idempotency utility: the
index already records each rollout's state, so ``consume`` skips a consumed one without a second
table or item per message (and the extractor is itself idempotent per rollout id).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from cairn.extract.delivery import consume
from cairn.rollout.payload import decode_notice
from functions._common import wiring
from functions._common.observability import count, logger, metrics, tracer

# A failed record holds back only the later records of its own message group (its scope):
# other scopes in the batch go on (FIFO order is per group).
processor = SqsFifoPartialProcessor(skip_group_on_error=True)


class NoTimeForNoticeError(Exception):
    """What is left of the invocation cannot cover one more notice's worst case."""


@tracer.capture_method
def record_handler(record: SQSRecord, lambda_context: Any) -> None:
    if lambda_context.get_remaining_time_in_millis() < wiring.record_budget_ms():
        count("RolloutsDeferred", 1)
        raise NoTimeForNoticeError("deferred to a later invocation: not enough time left")
    outcome = consume(decode_notice(record.body), wiring.consumer())
    logger.info(
        "rollout handled", extra={"rollout_id": outcome.rollout_id, "status": outcome.status}
    )
    count("RecordsFormed", outcome.written)
    count(f"Rollouts{outcome.status.capitalize()}", 1)


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
