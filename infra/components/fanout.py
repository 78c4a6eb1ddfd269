"""Rollout notifications: an SNS FIFO topic fanning out to one SQS FIFO queue per worker.

A producer publishes one message per staged rollout with the scope as message group, so every
subscriber sees a scope's rollouts in order while different scopes proceed in parallel (both
topic and queues use per-message-group throughput). Each queue has a FIFO dead-letter queue
(its alarms are ``infra.components.alarm_notifications``'s, when the stack has an alarm address).
Each queue's visibility timeout is six times its consumer's timeout (AWS's advice for SQS event
sources: room for Lambda to retry a throttled batch). Each subscription filters on the
``kind`` message attribute: ``extraction`` rollouts go to the extraction queue, a completed
run's ``evidence`` to the consolidation queue. Bring-your-own extractors subscribe another
queue to the same topic, filtered on ``kind = extraction``.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from infra.components.consolidation import CONSOLIDATION_TIMEOUT
from infra.components.extraction import EXTRACTION_TIMEOUT

# FIFO ordering means a poisoned message blocks its scope until it moves to the DLQ, so keep
# the number of attempts small; five still rides out a throttled model or a deploy.
MAX_RECEIVE_COUNT = 5
DEAD_LETTER_RETENTION = Duration.days(14)  # the SQS maximum: time to inspect and redrive
VISIBILITY_PER_TIMEOUT = 6  # AWS: "at least six times the configuration timeout on your function"


def visibility_for(timeout: Duration) -> Duration:
    """The visibility timeout of a queue consumed by a function with ``timeout``."""
    return Duration.seconds(VISIBILITY_PER_TIMEOUT * int(timeout.to_seconds()))


class WorkQueue(Construct):
    """A FIFO queue and its FIFO dead-letter queue."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        key: kms.IKey | None,
        visibility_timeout: Duration,
    ) -> None:
        super().__init__(scope, construct_id)
        self.visibility_timeout = visibility_timeout
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


class RolloutFanout(Construct):
    """The rollout topic and its extraction and consolidation queues."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        key: kms.IKey | None,
    ) -> None:
        super().__init__(scope, construct_id)
        # AWS-managed encryption: SNS's own key, which publishers in the account may use
        # through SNS without a grant (queues then use SSE-SQS, which needs no key grant).
        topic_key = key or kms.Alias.from_alias_name(self, "SnsManagedKey", "alias/aws/sns")
        self.topic = sns.Topic(
            self,
            "Topic",
            fifo=True,
            # Producers pass the rollout id as deduplication id; content-based dedup would
            # silently drop two rollouts that happen to carry the same notification body.
            content_based_deduplication=False,
            fifo_throughput_scope=sns.FifoThroughputScope.MESSAGE_GROUP,
            master_key=topic_key,
            enforce_ssl=True,
        )
        self.extraction = WorkQueue(
            self, "Extraction", key=key, visibility_timeout=visibility_for(EXTRACTION_TIMEOUT)
        )
        self.consolidation = WorkQueue(
            self,
            "Consolidation",
            key=key,
            visibility_timeout=visibility_for(CONSOLIDATION_TIMEOUT),
        )
        # Each queue takes only its kind of rollout (the ``kind`` message attribute that
        # cairn.aws.sns_notifier sets): a run's evidence never reaches extraction, nor an extraction
        # rollout consolidation.
        for worker, kind in ((self.extraction, "extraction"), (self.consolidation, "evidence")):
            self._subscribe(worker.queue, kind)
        if key is not None:
            # SNS encrypts what it delivers with the queues' key: from this account only.
            # (CDK's SqsSubscription adds this without a condition, and its SourceArn variant
            # would make the key's policy and the topic it encrypts depend on each other.)
            key.add_to_resource_policy(
                iam.PolicyStatement(
                    sid="SnsDeliversToEncryptedQueues",
                    principals=[iam.ServicePrincipal("sns.amazonaws.com")],
                    actions=["kms:Decrypt", "kms:GenerateDataKey"],
                    resources=["*"],  # in a key policy, "*" means this key
                    conditions={"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}},
                )
            )

    def _subscribe(self, queue: sqs.Queue, kind: str) -> None:
        """``queue`` subscribed, raw, to the ``kind`` rollouts of the topic; only this topic
        may send to it (what ``SqsSubscription`` builds, without its key statement)."""
        allowed = queue.add_to_resource_policy(
            iam.PolicyStatement(
                principals=[iam.ServicePrincipal("sns.amazonaws.com")],
                actions=["sqs:SendMessage"],
                resources=[queue.queue_arn],
                conditions={"ArnEquals": {"aws:SourceArn": self.topic.topic_arn}},
            )
        )
        subscription = sns.Subscription(
            self,
            f"{queue.node.scope.node.id}Subscription",  # type: ignore[union-attr]
            topic=self.topic,
            endpoint=queue.queue_arn,
            protocol=sns.SubscriptionProtocol.SQS,
            raw_message_delivery=True,
            filter_policy={"kind": sns.SubscriptionFilter.string_filter(allowlist=[kind])},
        )
        if allowed.policy_dependable is not None:
            subscription.node.add_dependency(allowed.policy_dependable)


def _fifo_queue(
    scope: Construct,
    construct_id: str,
    *,
    key: kms.IKey | None,
    visibility_timeout: Duration | None = None,
    retention_period: Duration | None = None,
    dead_letter_queue: sqs.DeadLetterQueue | None = None,
) -> sqs.Queue:
    """An encrypted (``key``, else SSE-SQS), TLS-only FIFO queue with per-message-group (high)
    throughput."""
    return sqs.Queue(
        scope,
        construct_id,
        fifo=True,
        content_based_deduplication=False,
        deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
        fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        encryption=sqs.QueueEncryption.KMS if key else sqs.QueueEncryption.SQS_MANAGED,
        encryption_master_key=key,
        enforce_ssl=True,
        visibility_timeout=visibility_timeout,
        retention_period=retention_period,
        dead_letter_queue=dead_letter_queue,
    )
