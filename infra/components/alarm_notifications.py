"""Where alarms go: an encrypted SNS topic with the operator's e-mail subscribed."""

from __future__ import annotations

from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct


class AlarmNotifications(Construct):
    """An alarm topic (KMS-encrypted, TLS-only) that e-mails ``email``; ``action`` targets it.

    CloudWatch publishes to an encrypted topic only if the key policy lets it use the key, so
    the key gains the statement the CloudWatch guide prescribes for ``cloudwatch.amazonaws.com``
    ("Using Amazon SNS to notify users", encrypted topics).
    """

    def __init__(self, scope: Construct, construct_id: str, *, key: kms.IKey, email: str) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(
            self, "Topic", display_name="cairn alarms", master_key=key, enforce_ssl=True
        )
        self.topic.add_subscription(subscriptions.EmailSubscription(email))
        key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchAlarmsPublishToEncryptedTopic",
                principals=[iam.ServicePrincipal("cloudwatch.amazonaws.com")],
                actions=["kms:Decrypt", "kms:GenerateDataKey*"],
                resources=["*"],  # in a key policy, "*" means this key
            )
        )
        self.action = cloudwatch_actions.SnsAction(self.topic)
