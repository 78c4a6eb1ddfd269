"""Rollout notifications: an SNS FIFO topic fanning out to one SQS FIFO queue per worker.

A producer publishes one message per staged rollout with the scope as message group, so every
subscriber sees a scope's rollouts in order while different scopes proceed in parallel (both
topic and queues use per-message-group throughput). Each queue has a FIFO dead-letter queue
and an alarm that fires as soon as anything lands in it. Each subscription filters on the
``kind`` message attribute: ``extraction`` rollouts go to the extraction queue, a completed
run's ``evidence`` to the consolidation queue. Bring-your-own extractors subscribe another
queue to the same topic, filtered on ``kind = extraction``.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

# FIFO ordering means a poisoned message blocks its scope until it moves to the DLQ, so keep
# the number of attempts small; five still rides out a throttled model or a deploy.
MAX_RECEIVE_COUNT = 5
DEAD_LETTER_RETENTION = Duration.days(14)  # the SQS maximum: time to inspect and redrive


class WorkQueue(Construct):
    """A FIFO queue, its FIFO dead-letter queue, and an alarm on the dead-letter depth."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        key: kms.IKey,
        visibility_timeout: Duration,
        alarm_action: cloudwatch.IAlarmAction | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = _fifo_queue(
            self, "DeadLetters", key=key, retention_period=DEAD_LETTER_RETENTION
        )
        self.queue = _fifo_queue(
            self,
            "Queue",
            key=key,
            visibility_timeout=visibility_timeout,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letters, max_receive_count=MAX_RECEIVE_COUNT
            ),
        )
        self.alarm = cloudwatch.Alarm(
            self,
            "DeadLettersAlarm",
            alarm_description=f"{construct_id}: rollouts failed {MAX_RECEIVE_COUNT} times and "
            "wait in the dead-letter queue; inspect, fix, then redrive them",
            metric=self.dead_letters.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(5), statistic="Maximum"
            ),
            threshold=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        if alarm_action is not None:
            self.alarm.add_alarm_action(alarm_action)


class RolloutFanout(Construct):
    """The rollout topic and its extraction and consolidation queues."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        key: kms.IKey,
        alarm_action: cloudwatch.IAlarmAction | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(
            self,
            "Topic",
            fifo=True,
            # Producers pass the rollout id as deduplication id; content-based dedup would
            # silently drop two rollouts that happen to carry the same notification body.
            content_based_deduplication=False,
            fifo_throughput_scope=sns.FifoThroughputScope.MESSAGE_GROUP,
            master_key=key,
            enforce_ssl=True,
        )
        # Visibility is six times the consuming function's timeout (AWS guidance for SQS event
        # sources): extraction functions get at most 60 s, consolidation 130 s (a 60 s pass
        # plus one retry after 5 s, design §6).
        self.extraction = WorkQueue(
            self,
            "Extraction",
            key=key,
            visibility_timeout=Duration.minutes(6),
            alarm_action=alarm_action,
        )
        self.consolidation = WorkQueue(
            self,
            "Consolidation",
            key=key,
            visibility_timeout=Duration.minutes(13),
            alarm_action=alarm_action,
        )
        # Each queue takes only its kind of rollout (the ``kind`` message attribute that
        # cairn.aws.sns_notifier sets): a run's evidence never reaches extraction, nor an extraction
        # rollout consolidation.
        for worker, kind in ((self.extraction, "extraction"), (self.consolidation, "evidence")):
            self.topic.add_subscription(
                subscriptions.SqsSubscription(
                    worker.queue,
                    raw_message_delivery=True,
                    filter_policy={"kind": sns.SubscriptionFilter.string_filter(allowlist=[kind])},
                )
            )


def _fifo_queue(
    scope: Construct,
    construct_id: str,
    *,
    key: kms.IKey,
    visibility_timeout: Duration | None = None,
    retention_period: Duration | None = None,
    dead_letter_queue: sqs.DeadLetterQueue | None = None,
) -> sqs.Queue:
    """A KMS-encrypted, TLS-only FIFO queue with per-message-group (high) throughput."""
    return sqs.Queue(
        scope,
        construct_id,
        fifo=True,
        content_based_deduplication=False,
        deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
        fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        encryption=sqs.QueueEncryption.KMS,
        encryption_master_key=key,
        enforce_ssl=True,
        visibility_timeout=visibility_timeout,
        retention_period=retention_period,
        dead_letter_queue=dead_letter_queue,
    )
