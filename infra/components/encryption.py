"""The one customer-managed KMS key that encrypts the tables, the bucket, the topic and queues."""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from constructs import Construct


class EncryptionKey(Construct):
    """A rotating KMS key, aliased ``alias/<stack name>``, kept when the stack is deleted."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        stack_name = Stack.of(self).stack_name
        self.key = kms.Key(
            self,
            "Key",
            description=f"{stack_name}: memory tables, staged rollouts, topic and queues",
            alias=f"alias/{stack_name}",
            enable_key_rotation=True,
            # Retained: PITR backups and retained tables stay readable only with this key.
            removal_policy=RemovalPolicy.RETAIN,
        )
