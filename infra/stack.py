"""The cairn stack: every AWS resource of one deployment, composed from ``infra.components``.

Functions plug in here as later issues add them: build each with ``self.lambdas.function(...)``
and grant it, in this class, exactly the access it needs (``self.tables.items.grant_read_data``,
``self.rollouts.bucket.grant_read``, ``self.fanout.topic.grant_publish`` ...). Components never
grant anything themselves, so every permission of the stack is visible in one file.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Stack, Tags, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cairn.rollout.staging_keys import KEY_PREFIX
from cairn.store.dynamodb.schema import DUE_INDEX, EVENT_ID_INDEX, LIVE_INDEX
from infra.components.alarm_notifications import AlarmNotifications
from infra.components.api import AgentCoreApi
from infra.components.consolidation import ConsolidationFunction
from infra.components.encryption import EncryptionKey
from infra.components.extraction import (
    ExtractionFunctions,
    acknowledge_profile_regions,
    bedrock_invoke_statement,
)
from infra.components.fanout import RolloutFanout
from infra.components.lambda_defaults import LambdaDefaults
from infra.components.rollout_bucket import RolloutBucket
from infra.components.tables import MemoryTables
from infra.components.telegram import TelegramBot
from infra.settings import StackSettings


class CairnStack(Stack):
    """Tables, rollout bucket, rollout fan-out and alarms under one KMS key, per ``settings``."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: StackSettings, **kwargs: Any
    ) -> None:
        super().__init__(
            scope,
            construct_id,
            description="cairn: durable, governed long-term memory for AI agents",
            **kwargs,
        )
        self.settings = settings
        self.key = EncryptionKey(self, "Encryption").key
        self.tables = MemoryTables(self, "Tables", key=self.key)
        self.rollouts = RolloutBucket(
            self, "Rollouts", key=self.key, retention_days=settings.retention_days
        )
        self.alarms = (
            AlarmNotifications(self, "Alarms", key=self.key, email=settings.alarm_email)
            if settings.alarm_email
            else None
        )
        self.fanout = RolloutFanout(
            self, "Fanout", key=self.key, alarm_action=self.alarms.action if self.alarms else None
        )
        self.lambdas = LambdaDefaults(
            self,
            "Lambdas",
            environment=self.function_environment(),
            log_retention_days=settings.retention_days,
        )
        self.extraction = ExtractionFunctions(
            self, "Extraction", lambdas=self.lambdas, queue=self.fanout.extraction.queue
        )
        self._grant_extraction()
        self.consolidation = ConsolidationFunction(
            self, "Consolidation", lambdas=self.lambdas, queue=self.fanout.consolidation.queue
        )
        self._grant_consolidation()
        self.api = AgentCoreApi(self, "Api", lambdas=self.lambdas)
        self._grant_api()
        self.telegram = self._telegram() if settings.telegram else None
        Tags.of(self).add("app", "cairn")
        self._outputs()

    def _grant_extraction(self) -> None:
        """Least privilege for extraction, written out action by action (docs/extraction.md).

        Extraction writes records and moves rollouts (items table, ``live`` index), reads then
        deletes consumed payloads, and calls the extraction model (and the embedding model when
        embeddings come from Bedrock). The sweep claims idle sessions and finds due rollouts
        (items table, ``due`` index), reads the events it stages (events table), stages
        payloads (a put, read back when retried) and publishes notices.
        """
        extraction, sweep = self.extraction.extraction, self.extraction.sweep
        items, events = self.tables.items, self.tables.events
        objects = self.rollouts.bucket.arn_for_objects(f"{KEY_PREFIX}*")
        models = [self.settings.extraction_model_id, *self.embedding_models()]
        for statement in (
            _allow(
                *_RECORD_WRITES,
                resources=[items.table_arn, f"{items.table_arn}/index/{LIVE_INDEX.name}"],
            ),
            _allow("s3:GetObject", "s3:DeleteObject", resources=[objects]),
            # Without ListBucket S3 reports a missing payload as AccessDenied
            # (cairn.aws.s3_staging).
            _allow("s3:ListBucket", resources=[self.rollouts.bucket.bucket_arn]),
            _allow("kms:Decrypt", resources=[self.key.key_arn]),
            bedrock_invoke_statement(models),
        ):
            extraction.add_to_role_policy(statement)
        for statement in (
            _allow(
                "dynamodb:GetItem",
                "dynamodb:Query",
                "dynamodb:PutItem",
                "dynamodb:ConditionCheckItem",
                resources=[items.table_arn, f"{items.table_arn}/index/{DUE_INDEX.name}"],
            ),
            _allow("dynamodb:BatchGetItem", resources=[events.table_arn]),
            _allow("s3:PutObject", "s3:GetObject", resources=[objects]),
            # SSE-KMS on the payloads and on the topic: encrypt to write, decrypt to read back.
            _allow("kms:GenerateDataKey", "kms:Decrypt", resources=[self.key.key_arn]),
            _allow("sns:Publish", resources=[self.fanout.topic.topic_arn]),
        ):
            sweep.add_to_role_policy(statement)
        acknowledge_profile_regions(extraction, models)
        for function in (extraction, sweep):
            _acknowledge_rollout_objects(function, self.rollouts.bucket)

    def _grant_consolidation(self) -> None:
        """Least privilege for consolidation, action by action (docs/consolidation.md).

        A pass reads the scope's pending evidence and live records (items table, ``live``
        index), commits its changes and consumes the evidence in one transaction (Put, Delete,
        ConditionCheck), places new records in the record directory, reads the memory's
        configuration, reads then deletes the consumed payloads, and calls the extraction
        model. It neither stages nor publishes anything, and touches no events.
        """
        function, items = self.consolidation.function, self.tables.items
        objects = self.rollouts.bucket.arn_for_objects(f"{KEY_PREFIX}*")
        models = [self.settings.extraction_model_id]
        for statement in (
            _allow(
                *_RECORD_WRITES,
                resources=[items.table_arn, f"{items.table_arn}/index/{LIVE_INDEX.name}"],
            ),
            _allow("s3:GetObject", "s3:DeleteObject", resources=[objects]),
            # Without ListBucket S3 reports a missing payload as AccessDenied
            # (cairn.aws.s3_staging).
            _allow("s3:ListBucket", resources=[self.rollouts.bucket.bucket_arn]),
            _allow("kms:Decrypt", resources=[self.key.key_arn]),
            bedrock_invoke_statement(models),
        ):
            function.add_to_role_policy(statement)
        acknowledge_profile_regions(function, models)
        _acknowledge_rollout_objects(function, self.rollouts.bucket)

    def _grant_api(self) -> None:
        """Least privilege for the API function (docs/agentcore-compatibility.md).

        It reads and writes records, the journal, memory configurations, client-token claims
        and the record directory (items table, ``live`` index), appends, reads and deletes
        events (events table, ``by_event_id`` index), counts appended events and stages and
        announces what they release (items table, payloads, topic), erases a deleted memory
        (BatchWriteItem deletes, payload listing and deletes), and embeds recall queries and
        written records (the embedding model, when embeddings come from Bedrock).
        """
        function, items, events = self.api.function, self.tables.items, self.tables.events
        writes = (*_RECORD_WRITES, "dynamodb:BatchWriteItem")
        for statement in (
            _allow(
                *writes, resources=[items.table_arn, f"{items.table_arn}/index/{LIVE_INDEX.name}"]
            ),
            _allow(
                *writes,
                resources=[events.table_arn, f"{events.table_arn}/index/{EVENT_ID_INDEX.name}"],
            ),
            _allow(
                "s3:PutObject",
                "s3:GetObject",
                "s3:DeleteObject",
                resources=[self.rollouts.bucket.arn_for_objects(f"{KEY_PREFIX}*")],
            ),
            # An erase lists the scope's payloads; without it a missing one reads AccessDenied.
            _allow("s3:ListBucket", resources=[self.rollouts.bucket.bucket_arn]),
            _allow("kms:GenerateDataKey", "kms:Decrypt", resources=[self.key.key_arn]),
            _allow("sns:Publish", resources=[self.fanout.topic.topic_arn]),
        ):
            function.add_to_role_policy(statement)
        if self.embedding_models():
            function.add_to_role_policy(bedrock_invoke_statement(self.embedding_models()))
        _acknowledge_rollout_objects(function, self.rollouts.bucket)

    def _telegram(self) -> TelegramBot:
        """The Telegram backend (``-c telegram=true``), granted action by action.

        The webhook reads the bot's secret and persona, recalls (items table, ``live`` index),
        claims updates and keeps chat sessions (items table), appends and counts turns
        (events and items tables; a fired trigger stages the payload and publishes the
        notice, as the sweep does) and calls its model.
        """
        bot = TelegramBot(
            self,
            "Telegram",
            lambdas=self.lambdas,
            key=self.key,
            model_id=self.settings.telegram_model_id,
            timezone=self.settings.telegram_timezone,
        )
        items, events = self.tables.items, self.tables.events
        models = [self.settings.telegram_model_id, *self.embedding_models()]
        for statement in (
            _allow("secretsmanager:GetSecretValue", resources=[bot.secret.secret_arn]),
            _allow("s3:GetObject", resources=[bot.persona.arn_for_objects("*")]),
            # Without ListBucket S3 reports a missing persona file as AccessDenied, not 404.
            _allow("s3:ListBucket", resources=[bot.persona.bucket_arn]),
            _allow(
                *_RECORD_WRITES,
                resources=[items.table_arn, f"{items.table_arn}/index/{LIVE_INDEX.name}"],
            ),
            _allow(
                "dynamodb:GetItem",
                "dynamodb:BatchGetItem",
                "dynamodb:Query",
                "dynamodb:PutItem",
                "dynamodb:UpdateItem",
                "dynamodb:ConditionCheckItem",
                resources=[events.table_arn],
            ),
            _allow(
                "s3:PutObject",
                "s3:GetObject",
                resources=[self.rollouts.bucket.arn_for_objects(f"{KEY_PREFIX}*")],
            ),
            _allow("kms:GenerateDataKey", "kms:Decrypt", resources=[self.key.key_arn]),
            _allow("sns:Publish", resources=[self.fanout.topic.topic_arn]),
            bedrock_invoke_statement(models),
        ):
            bot.function.add_to_role_policy(statement)
        acknowledge_profile_regions(bot.function, models)
        _acknowledge_rollout_objects(bot.function, self.rollouts.bucket)
        _acknowledge_persona_objects(bot)
        CfnOutput(self, "TelegramWebhookUrl", value=bot.url.url)
        CfnOutput(self, "TelegramBotSecretArn", value=bot.secret.secret_arn)
        CfnOutput(self, "TelegramPersonaBucketName", value=bot.persona.bucket_name)
        return bot

    def embedding_models(self) -> list[str]:
        """What a function that embeds (extraction, the API, the Telegram webhook) must be
        allowed to invoke: the Titan v2 model for the ``bedrock`` embedder, nothing for ``onnx``
        (the model runs inside the function)."""
        return [self.settings.embedding_model_id] if self.settings.embedder == "bedrock" else []

    def function_environment(self) -> dict[str, str]:
        """What every function is told about this deployment (read by its composition root)."""
        return {
            "CAIRN_ITEMS_TABLE": self.tables.items.table_name,
            "CAIRN_EVENTS_TABLE": self.tables.events.table_name,
            "CAIRN_ROLLOUT_BUCKET": self.rollouts.bucket.bucket_name,
            "CAIRN_KMS_KEY_ID": self.key.key_arn,
            "CAIRN_ROLLOUT_TOPIC_ARN": self.fanout.topic.topic_arn,
            "CAIRN_EMBEDDER": self.settings.embedder,
            "CAIRN_EMBEDDING_MODEL_ID": self.settings.embedding_model_id,
            "CAIRN_EXTRACTION_MODEL_ID": self.settings.extraction_model_id,
            "CAIRN_RETENTION_DAYS": str(self.settings.retention_days),
        }

    def _outputs(self) -> None:
        values = {
            "ItemsTableName": self.tables.items.table_name,
            "EventsTableName": self.tables.events.table_name,
            "RolloutBucketName": self.rollouts.bucket.bucket_name,
            "KeyArn": self.key.key_arn,
            "RolloutTopicArn": self.fanout.topic.topic_arn,
            "ExtractionQueueUrl": self.fanout.extraction.queue.queue_url,
            "ExtractionDeadLetterQueueUrl": self.fanout.extraction.dead_letters.queue_url,
            "ConsolidationQueueUrl": self.fanout.consolidation.queue.queue_url,
            "ConsolidationDeadLetterQueueUrl": self.fanout.consolidation.dead_letters.queue_url,
            "Embedder": self.settings.embedder,
            "EmbeddingModelId": self.settings.embedding_model_id,
            "ExtractionModelId": self.settings.extraction_model_id,
            # Where AWS_ENDPOINT_URL_BEDROCK_AGENTCORE(_CONTROL) point; sign for execute-api.
            "ApiEndpoint": self.api.url,
        }
        for name, value in values.items():
            CfnOutput(self, name, value=value)


# TransactWriteItems needs no action of its own: each item it holds is authorised as a
# Put / Update / Delete / ConditionCheck.
_RECORD_WRITES = (
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
)


def _allow(*actions: str, resources: list[str]) -> iam.PolicyStatement:
    return iam.PolicyStatement(actions=list(actions), resources=resources)


def _acknowledge_rollout_objects(function: lambda_.Function, bucket: s3.IBucket) -> None:
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


def _acknowledge_persona_objects(bot: TelegramBot) -> None:
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
