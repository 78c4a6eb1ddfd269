"""The AWS side of the pipeline tests: the deployment's resources in moto, and a Lambda runtime
stand-in that feeds the handlers SQS events built from what really arrived on the queue.

Resources mirror the stack (``infra``): tables from the shared schema, a KMS-encrypted bucket,
an SNS FIFO topic with raw delivery into an SQS FIFO queue whose dead-letter queue takes a
message after ``MAX_RECEIVES`` receives. Lambdas cannot run in moto (no Docker), so
``LambdaRuntime`` does what the event source mapping would: receive a batch, invoke the handler
in-process, delete what succeeded and release the reported failures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from cairn.store.dynamodb.schema import TABLES, create_table_request

REGION = "us-east-1"
MAX_RECEIVES = 3
SWEEP_FUNCTION_ARN = f"arn:aws:lambda:{REGION}:123456789012:function:cairn-sweep"
SCHEDULE_GROUP = "cairn-sweep"


@dataclass(frozen=True)
class Deployment:
    """Names of the moto resources, and the environment the stack would give a function."""

    items_table: str
    events_table: str
    bucket: str
    key_arn: str
    topic_arn: str
    queue_url: str
    queue_arn: str
    dead_letter_url: str
    # The consolidation queue (run evidence), subscribed beside the extraction queue.
    consolidation_url: str = ""
    consolidation_arn: str = ""
    consolidation_dead_letter_url: str = ""
    # The sweep's wake-ups (infra.components.sweep_timer): a schedule group, the role the
    # Scheduler assumes, the failures queue, and the sweep function they invoke.
    schedule_group: str = ""
    scheduler_role_arn: str = ""
    sweep_failures_arn: str = ""
    sweep_function_arn: str = SWEEP_FUNCTION_ARN

    def consolidation(self) -> Deployment:
        """The same deployment seen from the consolidation queue (for a ``LambdaRuntime``)."""
        return replace(
            self,
            queue_url=self.consolidation_url,
            queue_arn=self.consolidation_arn,
            dead_letter_url=self.consolidation_dead_letter_url,
        )

    def environment(self) -> dict[str, str]:
        return {
            "CAIRN_ITEMS_TABLE": self.items_table,
            "CAIRN_EVENTS_TABLE": self.events_table,
            "CAIRN_ROLLOUT_BUCKET": self.bucket,
            "CAIRN_KMS_KEY_ID": self.key_arn,
            "CAIRN_ROLLOUT_TOPIC_ARN": self.topic_arn,
            "CAIRN_EMBEDDER": "onnx",
            "CAIRN_EXTRACTION_MODEL_ID": "amazon.nova-lite-v1:0",
            "CAIRN_SWEEP_SCHEDULE_GROUP": self.schedule_group,
            "CAIRN_SWEEP_SCHEDULER_ROLE_ARN": self.scheduler_role_arn,
            "CAIRN_SWEEP_FAILURES_ARN": self.sweep_failures_arn,
            "CAIRN_SWEEP_FUNCTION_ARN": self.sweep_function_arn,
            "POWERTOOLS_SERVICE_NAME": "cairn",
            "POWERTOOLS_METRICS_NAMESPACE": "cairn",
            "POWERTOOLS_TRACE_DISABLED": "true",
        }


def _fifo_queue(sqs: Any, name: str, **attributes: str) -> tuple[str, str]:
    url = sqs.create_queue(
        QueueName=f"{name}.fifo",
        Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "false", **attributes},
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    return url, arn["QueueArn"]


def create_deployment(session: Any) -> Deployment:
    """Every resource the extraction path touches, created in the active moto mock."""
    dynamodb = session.client("dynamodb", region_name=REGION)
    names = {table.logical_name: f"cairn-{table.logical_name}" for table in TABLES}
    for table in TABLES:
        dynamodb.create_table(**create_table_request(table, names[table.logical_name]))
    key_arn = session.client("kms", region_name=REGION).create_key()["KeyMetadata"]["Arn"]
    session.client("s3", region_name=REGION).create_bucket(Bucket="cairn-rollouts")
    sqs = session.client("sqs", region_name=REGION)
    dead_url, dead_arn = _fifo_queue(sqs, "cairn-extraction-dlq")
    redrive = json.dumps({"deadLetterTargetArn": dead_arn, "maxReceiveCount": MAX_RECEIVES})
    queue_url, queue_arn = _fifo_queue(
        sqs, "cairn-extraction", RedrivePolicy=redrive, VisibilityTimeout="360"
    )
    sns = session.client("sns", region_name=REGION)
    topic_arn = sns.create_topic(
        Name="cairn-rollouts.fifo",
        Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "false"},
    )["TopicArn"]
    dead_consolidation, dead_consolidation_arn = _fifo_queue(sqs, "cairn-consolidation-dlq")
    consolidation_url, consolidation_arn = _fifo_queue(
        sqs,
        "cairn-consolidation",
        RedrivePolicy=json.dumps(
            {"deadLetterTargetArn": dead_consolidation_arn, "maxReceiveCount": MAX_RECEIVES}
        ),
        VisibilityTimeout="780",
    )
    # Each queue takes only its kind, as the stack's subscriptions do (infra.components.fanout).
    for endpoint, kind in ((queue_arn, "extraction"), (consolidation_arn, "evidence")):
        sns.subscribe(
            TopicArn=topic_arn,
            Protocol="sqs",
            Endpoint=endpoint,
            Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps({"kind": [kind]})},
        )
    failures = sqs.create_queue(QueueName="cairn-sweep-failures")["QueueUrl"]
    failures_arn = sqs.get_queue_attributes(QueueUrl=failures, AttributeNames=["QueueArn"])
    session.client("scheduler", region_name=REGION).create_schedule_group(Name=SCHEDULE_GROUP)
    role = session.client("iam", region_name=REGION).create_role(
        RoleName="cairn-sweep-scheduler",
        AssumeRolePolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "scheduler.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            }
        ),
    )
    return Deployment(
        schedule_group=SCHEDULE_GROUP,
        scheduler_role_arn=role["Role"]["Arn"],
        sweep_failures_arn=failures_arn["Attributes"]["QueueArn"],
        items_table=names["items"],
        events_table=names["events"],
        bucket="cairn-rollouts",
        key_arn=key_arn,
        topic_arn=topic_arn,
        queue_url=queue_url,
        queue_arn=queue_arn,
        dead_letter_url=dead_url,
        consolidation_url=consolidation_url,
        consolidation_arn=consolidation_arn,
        consolidation_dead_letter_url=dead_consolidation,
    )


@dataclass(frozen=True)
class LambdaContext:
    """What Powertools reads from a Lambda context object."""

    function_name: str = "cairn-extraction"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = f"arn:aws:lambda:{REGION}:123456789012:function:cairn-extraction"
    aws_request_id: str = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self) -> int:
        return 600_000  # the extraction function's timeout (infra.components.extraction)


@dataclass(frozen=True)
class CountdownContext(LambdaContext):
    """A context whose remaining time is read from ``remaining``, one value per call."""

    remaining: list[int] = field(default_factory=list)

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining.pop(0)


def sqs_record(message: dict[str, Any], queue_arn: str) -> dict[str, Any]:
    """The Lambda event record for one received SQS message (the shape the ESM delivers)."""
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes", {}),
        "messageAttributes": message.get("MessageAttributes", {}),
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": REGION,
    }


@dataclass
class LambdaRuntime:
    """Polls the queue like the event source mapping and invokes a handler in-process."""

    sqs: Any
    deployment: Deployment
    handler: Any
    invocations: list[dict[str, Any]] = field(default_factory=list)

    def receive(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.sqs.receive_message(
            QueueUrl=self.deployment.queue_url,
            MaxNumberOfMessages=10,
            AttributeNames=["All"],
            VisibilityTimeout=360,
        ).get("Messages", [])
        return messages

    def deliver(self, messages: list[dict[str, Any]], context: Any = None) -> list[str]:
        """Invoke the handler with ``messages``; delete successes, release failures (every
        message, when the invocation itself fails). Returns the ids of the failed messages."""
        event = {"Records": [sqs_record(m, self.deployment.queue_arn) for m in messages]}
        self.invocations.append(event)
        try:
            response = self.handler(event, context or LambdaContext())
        except Exception:  # an invocation error returns the whole batch to the queue
            failed = {m["MessageId"] for m in messages}
        else:
            failed = {f["itemIdentifier"] for f in response.get("batchItemFailures", [])}
        for message in messages:
            if message["MessageId"] in failed:
                self.sqs.change_message_visibility(
                    QueueUrl=self.deployment.queue_url,
                    ReceiptHandle=message["ReceiptHandle"],
                    VisibilityTimeout=0,
                )
            else:
                self.sqs.delete_message(
                    QueueUrl=self.deployment.queue_url, ReceiptHandle=message["ReceiptHandle"]
                )
        return sorted(failed)

    def poll(self) -> list[str]:
        """One receive and delivery; the failed message ids (empty if nothing arrived)."""
        messages = self.receive()
        return self.deliver(messages) if messages else []

    def dead_letters(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.sqs.receive_message(
            QueueUrl=self.deployment.dead_letter_url, MaxNumberOfMessages=10
        ).get("Messages", [])
        return found
