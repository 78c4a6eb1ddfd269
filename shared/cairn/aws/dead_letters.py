"""The deployed stack's dead-letter queues: list what waits there, and move it back (redrive).

A rollout notice lands in its queue's FIFO dead-letter queue after ``MAX_RECEIVE_COUNT`` failed
deliveries (infra/components/fanout.py). ``cairn dlq`` shows an operator what waits there and,
once the cause is fixed, moves it back to the work queue; the SQS client is injected.

- Listing changes nothing an operator would notice: messages are received hidden for
  ``LIST_HIDDEN_FOR`` (so one listing sees each once) and made visible again at once. It shows
  ids, kinds, receive counts and times: a notice names where a rollout's payload is staged,
  never what it says, and the message body itself is never printed.
- Redrive sends each message to the work queue with its own ``MessageGroupId`` and
  ``MessageDeduplicationId`` (the rollout id), then deletes it from the dead-letter queue. A
  redrive run twice finds nothing the second time; one interrupted between the send and the
  delete sends it again with the same deduplication id, which SQS drops within its five-minute
  window, and past it the consumer's own check makes a consumed rollout's second delivery a
  no-op (docs/extraction.md). So a redrive never doubles work.

The caller needs ``sqs:ReceiveMessage``, ``sqs:ChangeMessageVisibility`` and
``sqs:DeleteMessage`` on the dead-letter queue, ``sqs:SendMessage`` on the work queue, and the
queues' KMS key. ``botocore`` errors are translated here, always chained.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from cairn.aws.stack_outputs import stack_outputs
from cairn.errors import CairnError, ConfigurationError, InvalidInputError, StoreUnavailableError
from cairn.rollout.index import rollout_kind
from cairn.rollout.payload import decode_notice

LIST_HIDDEN_FOR = 30  # seconds a listed message is hidden before it is made visible again
REDRIVE_HIDDEN_FOR = 60  # seconds a message being moved is hidden from another redrive
_BATCH = 10  # SQS's ReceiveMessage maximum
_RETRYABLE = frozenset({"ThrottlingException", "RequestThrottled", "ServiceUnavailable"})


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """One message in a dead-letter queue; ``rollout_id`` and ``kind`` are ``None`` when the
    body is not a cairn rollout notice (someone else's message)."""

    message_id: str
    rollout_id: str | None
    kind: str | None
    receive_count: int
    first_sent_at: datetime


class DeadLetterQueue:
    """The dead-letter queue at ``dead_letter_url`` of the work queue at ``queue_url``."""

    def __init__(self, sqs: Any, *, dead_letter_url: str, queue_url: str) -> None:
        self._sqs = sqs
        self.dead_letter_url = dead_letter_url
        self.queue_url = queue_url

    def waiting(self, *, limit: int = 100) -> list[DeadLetter]:
        """Up to ``limit`` messages waiting, oldest group first; they stay in the queue."""
        seen: dict[str, DeadLetter] = {}
        handles: list[str] = []
        try:
            for message in self._receive(limit, hidden_for=LIST_HIDDEN_FOR):
                handles.append(message["ReceiptHandle"])
                seen.setdefault(message["MessageId"], _dead_letter(message))
        finally:
            self._show_again(handles)
        return list(seen.values())

    def redrive(self, *, limit: int = 1000) -> int:
        """Move up to ``limit`` messages back to the work queue; how many were moved."""
        moved = 0
        for message in self._receive(limit, hidden_for=REDRIVE_HIDDEN_FOR):
            attributes = message.get("Attributes", {})
            send: dict[str, Any] = {
                "QueueUrl": self.queue_url,
                "MessageBody": message["Body"],
                "MessageGroupId": attributes["MessageGroupId"],
                "MessageDeduplicationId": attributes["MessageDeduplicationId"],
            }
            if message.get("MessageAttributes"):
                send["MessageAttributes"] = message["MessageAttributes"]
            self._call("send_message", **send)
            # Deleted only once the work queue has it: a crash in between sends it again.
            self._call(
                "delete_message",
                QueueUrl=self.dead_letter_url,
                ReceiptHandle=message["ReceiptHandle"],
            )
            moved += 1
        return moved

    def _receive(self, limit: int, *, hidden_for: int) -> Iterator[dict[str, Any]]:
        if limit < 1:
            raise InvalidInputError("the limit must be at least 1; nothing was read")
        taken = 0
        while taken < limit:
            batch = self._call(
                "receive_message",
                QueueUrl=self.dead_letter_url,
                MaxNumberOfMessages=min(_BATCH, limit - taken),
                VisibilityTimeout=hidden_for,
                WaitTimeSeconds=0,
                AttributeNames=["All"],
                MessageAttributeNames=["All"],
            ).get("Messages", [])
            if not batch:
                return
            for message in batch:
                taken += 1
                yield message

    def _show_again(self, handles: list[str]) -> None:
        for start in range(0, len(handles), _BATCH):
            entries = [
                {"Id": str(n), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                for n, handle in enumerate(handles[start : start + _BATCH])
            ]
            self._call(
                "change_message_visibility_batch", QueueUrl=self.dead_letter_url, Entries=entries
            )

    def _call(self, operation: str, **params: Any) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = getattr(self._sqs, operation)(**params)
        except ClientError as exc:
            raise _translate(exc, operation) from exc
        except NoCredentialsError as exc:
            raise ConfigurationError(
                "no AWS credentials were found for SQS; configure a profile, role or keys"
            ) from exc
        except BotoCoreError as exc:
            raise StoreUnavailableError(
                f"SQS is unreachable ({type(exc).__name__} on {operation}); run it again: "
                "a redrive never doubles work"
            ) from exc
        return answer


def _dead_letter(message: dict[str, Any]) -> DeadLetter:
    attributes = message.get("Attributes", {})
    try:
        rollout_id: str | None = decode_notice(message["Body"]).rollout_id
    except InvalidInputError:
        rollout_id = None
    sent_ms = int(attributes.get("SentTimestamp", "0"))
    return DeadLetter(
        message_id=message["MessageId"],
        rollout_id=rollout_id,
        kind=rollout_kind(rollout_id) if rollout_id is not None else None,
        receive_count=int(attributes.get("ApproximateReceiveCount", "0")),
        first_sent_at=datetime.fromtimestamp(sent_ms / 1000, tz=UTC),
    )


def _translate(exc: ClientError, operation: str) -> CairnError:
    code = str(exc.response.get("Error", {}).get("Code", ""))
    status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))
    if code in _RETRYABLE or status >= 500:
        return StoreUnavailableError(f"SQS is busy or failing ({code} on {operation}); run again")
    return ConfigurationError(
        f"SQS refused {operation} ({code}); check the queue URLs (the stack's outputs "
        "ExtractionDeadLetterQueueUrl, ...) and that the caller may use the queues and their key"
    )


# The stack's outputs naming each worker's queues (infra/stack.py, ``_outputs``).
STACK_OUTPUTS = {
    "extraction": ("ExtractionDeadLetterQueueUrl", "ExtractionQueueUrl"),
    "consolidation": ("ConsolidationDeadLetterQueueUrl", "ConsolidationQueueUrl"),
}


def stack_queues(cloudformation: Any, stack: str, worker: str) -> tuple[str, str]:
    """(dead-letter queue URL, work queue URL) of ``worker`` in the deployed ``stack``, read
    from its CloudFormation outputs."""
    outputs = stack_outputs(cloudformation, stack, otherwise="--dead-letter-url and --queue-url")
    dead_letters, queue = STACK_OUTPUTS[worker]
    if dead_letters not in outputs or queue not in outputs:
        raise ConfigurationError(
            f"stack {stack!r} has no {dead_letters} / {queue} outputs; is it a cairn stack?"
        )
    return outputs[dead_letters], outputs[queue]


def open_dead_letters(
    worker: str,
    *,
    stack: str | None,
    dead_letter_url: str | None,
    queue_url: str | None,
    region: str | None,
) -> DeadLetterQueue:
    """The dead-letter queue of ``worker``, named by the stack or by both URLs; clients from
    the default boto3 session (credentials and region as the AWS CLI finds them)."""
    import boto3  # the aws extra; imported here so the module imports without it

    session = boto3.session.Session(region_name=region)
    if dead_letter_url is None or queue_url is None:
        if stack is None:
            raise InvalidInputError(
                "name the queues: pass --stack NAME, or both --dead-letter-url and --queue-url"
            )
        dead_letter_url, queue_url = stack_queues(session.client("cloudformation"), stack, worker)
    return DeadLetterQueue(
        session.client("sqs"), dead_letter_url=dead_letter_url, queue_url=queue_url
    )
