"""Record streaming on AWS (``-c recordStreamArn=<Kinesis stream ARN>``): the delivery function.

The items table's DynamoDB stream (keys only: no content ever enters it) triggers
``Deliver`` with the table's change items only (a filter on ``sk`` beginning ``CH#``; every
other item's stream record is dropped before any invocation, so an idle or read-only stack
invokes nothing). The function delivers each scope the batch names from its delivery cursor
(``functions/stream_delivery/handler.py``); a batch it keeps failing is split, retried, then
its stream records go to ``DeliveryFailures`` (a dead-letter queue, 14 days) while the stream
moves on, and the next change of that scope delivers what was missed, since the cursor, not
the trigger, says what is due. The function may put only to the one stream the operator
named, and the API refuses a memory naming another (docs/deploy.md).

Grants are the stack's (``infra.stack``); this component only wires the trigger.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Duration, Validations
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from cairn.store.dynamodb.change_feed import CHANGES_PREFIX
from infra.components.lambda_defaults import LambdaDefaults

DELIVERY_TIMEOUT = Duration.seconds(60)
BATCH_SIZE = 100
RETRY_ATTEMPTS = 5
MAX_RECORD_AGE = Duration.hours(24)  # the stream's own retention


class StreamDelivery(Construct):
    """The delivery function on ``table``'s stream, and its failure destination."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        lambdas: LambdaDefaults,
        table: ddb.Table,
        stream_arn: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self.stream_arn = stream_arn
        self.failures = sqs.Queue(
            self,
            "DeliveryFailures",
            # Stream record metadata only (shard, sequence numbers): SSE-SQS whatever the key.
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        Validations.of(self.failures).acknowledge(
            Acknowledgment(
                id="AwsSolutions::AwsSolutions-SQS3",
                reason="It is the delivery function's failure destination: a dead-letter "
                "queue itself.",
            )
        )
        self.function: lambda_.Function = lambdas.function(
            self,
            "Deliver",
            asset="stream_delivery",
            description="cairn: deliver record changes to the memory's Kinesis stream",
            timeout=DELIVERY_TIMEOUT,
        )
        self.function.add_environment("CAIRN_RECORD_STREAM_ARN", stream_arn)
        self.function.add_event_source(
            sources.DynamoEventSource(
                table,
                starting_position=lambda_.StartingPosition.TRIM_HORIZON,
                batch_size=BATCH_SIZE,
                bisect_batch_on_error=True,
                retry_attempts=RETRY_ATTEMPTS,
                max_record_age=MAX_RECORD_AGE,
                report_batch_item_failures=True,
                on_failure=sources.SqsDlq(self.failures),
                filters=[
                    lambda_.FilterCriteria.filter(
                        {
                            "dynamodb": {
                                "Keys": {
                                    "sk": {"S": lambda_.FilterRule.begins_with(CHANGES_PREFIX)}
                                }
                            }
                        }
                    )
                ],
            )
        )
