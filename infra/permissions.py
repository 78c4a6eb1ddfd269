"""The vocabulary of the stack's grants: action lists and statements, never a grant itself.

``infra.stack`` makes every grant; this module only spells the statements it is made of, and
the cdk-nag acknowledgments their wildcards need.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Aws, Stack, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3

from cairn.aws.s3_index_objects import KEY_PREFIX as INDEX_PREFIX
from cairn.rollout.staging_keys import KEY_PREFIX
from infra.components.telegram import TelegramBot

# TransactWriteItems needs no action of its own: each item it holds is authorised as a
# Put / Update / Delete / ConditionCheck.
RECORD_WRITES = (
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
)


def allow(*actions: str, resources: list[str]) -> iam.PolicyStatement:
    return iam.PolicyStatement(actions=list(actions), resources=resources)


def acknowledge_rollout_objects(function: lambda_.Function, bucket: s3.IBucket) -> None:
    """Object ARNs need a wildcard: one object per rollout, all under the rollouts/ prefix."""
    if function.role is None:  # pragma: no cover - LambdaDefaults always makes a role
        return
    logical_id = Stack.of(bucket).get_logical_id(bucket.node.default_child)  # type: ignore[arg-type]
    Validations.of(function.role).acknowledge(
        Acknowledgment(
            id=f"AwsSolutions::AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/{KEY_PREFIX}*]",
            reason="One staged payload per rollout id: access is scoped to the rollouts/ prefix.",
        )
    )


def acknowledge_index_objects(function: lambda_.Function, bucket: s3.IBucket) -> None:
    """Object ARNs need a wildcard: one recall index object per scope, under recall-index/."""
    if function.role is None:  # pragma: no cover - LambdaDefaults always makes a role
        return
    logical_id = Stack.of(bucket).get_logical_id(bucket.node.default_child)  # type: ignore[arg-type]
    Validations.of(function.role).acknowledge(
        Acknowledgment(
            id=f"AwsSolutions::AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/{INDEX_PREFIX}*]",
            reason="One recall index object per scope: access is scoped to recall-index/.",
        )
    )


def acknowledge_persona_objects(bot: TelegramBot) -> None:
    """The webhook reads whichever persona files the operator puts in its bucket."""
    if bot.function.role is None:  # pragma: no cover - LambdaDefaults always makes a role
        return
    logical_id = Stack.of(bot).get_logical_id(bot.persona.node.default_child)  # type: ignore[arg-type]
    Validations.of(bot.function.role).acknowledge(
        Acknowledgment(
            id=f"AwsSolutions::AwsSolutions-IAM5[Resource::<{logical_id}.Arn>/*]",
            reason="Any persona file of the persona bucket, read-only.",
        )
    )


# What a principal needs of the key that encrypts a DynamoDB table it writes: the actions the
# CDK's own Table.grant_read_write_data grants (its ReEncrypt* and GenerateDataKey* spelled
# out, so no action wildcard), through DynamoDB only.
TABLE_KEY_ACTIONS = (
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
)


def table_key_statement(key: kms.IKey) -> iam.PolicyStatement:
    """Use of ``key`` for the tables, and only through DynamoDB in this region."""
    return iam.PolicyStatement(
        actions=list(TABLE_KEY_ACTIONS),
        resources=[key.key_arn],
        conditions={"StringEquals": {"kms:ViaService": f"dynamodb.{Aws.REGION}.amazonaws.com"}},
    )
