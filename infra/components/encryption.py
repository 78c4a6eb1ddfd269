"""How the stack encrypts at rest: AWS-managed keys (the default) or one customer-managed key.

- ``aws-managed`` (``key`` is ``None``): DynamoDB's AWS-owned key, SSE-S3 buckets, SSE-SQS
  queues, the ``alias/aws/sns`` key on the rollout topic. No monthly fee and no KMS request
  charge on the tables, buckets and queues; nothing to grant (each AWS-managed key's policy lets
  the account's principals use it through its service). You cannot restrict or audit those keys
  by policy, nor destroy them to make retained copies unreadable.
- ``customer-key``: one rotating KMS key, aliased ``alias/<stack name>``, encrypts everything;
  $1 a month (and $1 for each of its first two yearly rotations) plus its requests. Its policy
  is yours, CloudTrail logs every use, and scheduling its deletion crypto-shreds every retained
  table, backup and payload (docs/deploy.md, teardown).
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_kms as kms
from constructs import Construct

# Retained through a stack deletion or a replacement, deleted when its own first create fails
# (DeletionPolicy RetainExceptOnCreate, UpdateReplacePolicy Retain): a rolled-back first deploy
# leaves nothing behind, and nothing that holds data is ever deleted by CloudFormation.
RETAINED = RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE


class EncryptionKey(Construct):
    """The customer-managed key of a ``customer-key`` stack, kept when the stack is deleted."""

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
            removal_policy=RETAINED,
        )
