"""The operator's alarms and where they go: an SNS topic that e-mails ``alarmEmail``.

Created only when the stack has an address (an alarm nobody receives still costs $0.10 a month).
Every alarm fires on the first bad data point and says, in its description, what it means and
what to do first; docs/deploy.md ("Alarms") lists them for the runbook:

- ``<queue>DeadLetters``: a notice failed ``MAX_RECEIVE_COUNT`` times and waits in the DLQ.
- ``<queue>OldestMessage``: the queue's oldest notice is older than its visibility timeout:
  it has been returned at least once, or nothing consumes the queue.
- ``<function>Errors`` / ``<function>Throttles``: an invocation raised (or timed out), or was
  refused for concurrency.
- ``ApiServerErrors``: the HTTP API answered 5xx.
- ``SweepFailures``: a sweep invocation failed after its retries and its event was kept in the
  sweep's failure queue.

The topic's policy keeps the TLS-only deny (``enforce_ssl``) and adds the one allow CloudWatch
needs, from this account's alarms only. With a customer-managed key the topic is encrypted and the
key lets CloudWatch use it, from this account only ("Using Amazon SNS to notify users",
encrypted topics); CloudWatch cannot publish to a topic under the AWS-managed ``alias/aws/sns``
key, so with AWS-managed encryption the topic stays unencrypted: it carries alarm names and
states, never memory content.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Aws, Duration, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from constructs import Construct

PERIOD = Duration.minutes(5)


class AlarmNotifications(Construct):
    """The alarm topic that e-mails ``email``; the ``add_*`` methods add alarms acting on it."""

    def __init__(
        self, scope: Construct, construct_id: str, *, key: kms.IKey | None, email: str
    ) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(
            self, "Topic", display_name="cairn alarms", master_key=key, enforce_ssl=True
        )
        self.topic.add_subscription(subscriptions.EmailSubscription(email))
        from_this_account = {"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}}
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchAlarmsPublish",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    **from_this_account,
                    "ArnLike": {
                        "aws:SourceArn": f"arn:{Aws.PARTITION}:cloudwatch:{Aws.REGION}:"
                        f"{Aws.ACCOUNT_ID}:alarm:*"
                    },
                },
            )
        )
        if key is not None:
            key.add_to_resource_policy(
                iam.PolicyStatement(
                    sid="CloudWatchAlarmsPublishToEncryptedTopic",
                    principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                    actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                    resources=["*"],  # in a key policy, "*" means this key
                    conditions=from_this_account,
                )
            )
        else:
            Validations.of(self.topic).acknowledge(
                Acknowledgment(
                    id="AwsSolutions::AwsSolutions-SNS2",
                    reason="CloudWatch cannot publish to the AWS-managed SNS key; alarm "
                    "messages carry alarm names and states, no memory content.",
                )
            )
        self.action = cloudwatch_actions.SnsAction(self.topic)
        self.alarms: list[cloudwatch.Alarm] = []

    def add(
        self, construct_id: str, *, metric: cloudwatch.IMetric, meaning: str, threshold: int = 1
    ) -> None:
        """An alarm on ``metric`` reaching ``threshold`` in a period; ``meaning`` describes it."""
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_description=meaning,
            metric=metric,
            threshold=threshold,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluation_periods=1,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(self.action)
        self.alarms.append(alarm)

    def add_function(self, name: str, function: lambda_.IFunction) -> None:
        """Errors (an invocation raised or timed out) and throttles of ``function``."""
        self.add(
            f"{name}Errors",
            metric=function.metric_errors(period=PERIOD, statistic="Sum"),
            meaning=f"{name}: an invocation failed (raised or timed out); read its log group "
            "for the error, then the runbook entry for this function",
        )
        self.add(
            f"{name}Throttles",
            metric=function.metric_throttles(period=PERIOD, statistic="Sum"),
            meaning=f"{name}: an invocation was refused for concurrency; check the account's "
            "concurrency quota and the maxConcurrency setting",
        )

    def add_queue(
        self, name: str, *, queue: sqs.IQueue, dead_letters: sqs.IQueue, visibility: Duration
    ) -> None:
        """A notice in the dead-letter queue, and a notice older than the visibility timeout."""
        self.add(
            f"{name}DeadLetters",
            metric=dead_letters.metric_approximate_number_of_messages_visible(
                period=PERIOD, statistic="Maximum"
            ),
            meaning=f"{name}: a notice failed every delivery and waits in the dead-letter "
            "queue (kept 14 days); inspect it, fix the cause, then redrive it",
        )
        seconds = int(visibility.to_seconds())
        self.add(
            f"{name}OldestMessage",
            metric=queue.metric_approximate_age_of_oldest_message(
                period=PERIOD, statistic="Maximum"
            ),
            threshold=seconds,
            meaning=f"{name}: the oldest notice has waited longer than the visibility timeout "
            f"({seconds} s): it was returned at least once (failed, timed out or deferred) "
            "or nothing consumes the queue; check the consumer's errors and throttles",
        )
