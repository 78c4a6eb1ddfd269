"""The cairn stack: every AWS resource of one deployment, composed from ``infra.components``.

Functions plug in here as later issues add them: build each with ``self.lambdas.function(...)``
and grant it, in this class, exactly the access it needs (``self.tables.items.grant_read_data``,
``self.rollouts.bucket.grant_read``, ``self.fanout.topic.grant_publish`` ...). Components never
grant anything themselves, so every permission of the stack is visible in one file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import Acknowledgment, CfnOutput, Duration, Stack, Tags, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from cairn.rollout.staging_keys import KEY_PREFIX
from cairn.store.dynamodb.schema import DUE_INDEX, EVENT_ID_INDEX, LIVE_INDEX
from infra.components.alarm_notifications import AlarmNotifications
from infra.components.api import AgentCoreApi
from infra.components.consolidation import ConsolidationFunction
from infra.components.encryption import EncryptionKey
from infra.components.extraction import (
    WAKE_UP_PREFIX,
    ExtractionFunctions,
    acknowledge_profile_regions,
    bedrock_invoke_statement,
)
from infra.components.fanout import RolloutFanout
from infra.components.jobs import BackgroundJobs
from infra.components.lambda_code import ASSET_ROOT, LambdaCode
from infra.components.lambda_defaults import LambdaDefaults
from infra.components.model_provider import (
    api_key_statements,
    bedrock_models,
    invoke_statements,
    model_environment,
)
from infra.components.rollout_bucket import RolloutBucket
from infra.components.stream_delivery import StreamDelivery
from infra.components.tables import MemoryTables
from infra.components.telegram import TelegramBot
from infra.permissions import (
    INDEX_PREFIX,
    RECORD_WRITES,
    acknowledge_index_objects,
    acknowledge_persona_objects,
    acknowledge_rollout_objects,
    allow,
    table_key_statement,
)
from infra.principals import principals_environment
from infra.settings import StackSettings


class CairnStack(Stack):
    """Tables, rollout bucket, rollout fan-out, functions and alarms, per ``settings``.

    (Over 300 lines: every grant of the stack is here, in one place, by design.)
    """

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
        self.key = EncryptionKey(self, "Encryption").key if settings.customer_key else None
        self.tables = MemoryTables(
            self, "Tables", key=self.key, items_stream=settings.record_stream_arn is not None
        )
        self.rollouts = RolloutBucket(
            self, "Rollouts", key=self.key, retention_days=settings.retention_days
        )
        self.fanout = RolloutFanout(self, "Fanout", key=self.key)
        self.lambdas = LambdaDefaults(
            self,
            "Lambdas",
            environment=self.function_environment(),
            log_retention_days=settings.retention_days,
            code=lambda_code(settings),
            metrics=settings.metrics,
        )
        self.extraction = ExtractionFunctions(
            self,
            "Extraction",
            lambdas=self.lambdas,
            queue=self.fanout.extraction.queue,
            max_concurrency=settings.max_concurrency,
        )
        self._grant_extraction()
        self.consolidation = ConsolidationFunction(
            self,
            "Consolidation",
            lambdas=self.lambdas,
            queue=self.fanout.consolidation.queue,
            max_concurrency=settings.max_concurrency,
        )
        self._grant_consolidation()
        self.api = AgentCoreApi(
            self,
            "Api",
            lambdas=self.lambdas,
            environment=principals_environment(settings.principals_file),
        )
        self._grant_api()
        self.jobs = BackgroundJobs(self, "Jobs", lambdas=self.lambdas)
        self._grant_jobs()
        self.telegram = self._telegram() if settings.telegram else None
        self.streaming = self._stream_delivery(settings.record_stream_arn)
        self.alarms = self._alarms(settings.alarm_email) if settings.alarm_email else None
        Tags.of(self).add("app", "cairn")
        self._outputs()

    def _key_use(self, *actions: str) -> list[iam.PolicyStatement]:
        """SSE-KMS on payloads, the topic and the queues: ``actions`` on the key, if any."""
        if self.key is None:
            return []
        return [allow(*actions, resources=[self.key.key_arn]), table_key_statement(self.key)]

    def _index_objects(self, function: Any, *, erases: bool) -> None:
        """Recall index objects (docs/dynamodb.md, "Recall over DynamoDB"): a function that
        recalls reads a scope's object and rewrites it when stale; one that erases deletes
        them. Bucket listing (erase, and 404 instead of AccessDenied for a missing object) is
        granted with the rollout payloads."""
        actions = ["s3:GetObject", "s3:PutObject", *(["s3:DeleteObject"] if erases else [])]
        objects = self.rollouts.bucket.arn_for_objects(f"{INDEX_PREFIX}*")
        function.add_to_role_policy(allow(*actions, resources=[objects]))
        acknowledge_index_objects(function, self.rollouts.bucket)

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
        models = [*bedrock_models(self.settings), *self.embedding_models()]
        for statement in (
            allow(
                *RECORD_WRITES,
                resources=[items.table_arn, f"{items.table_arn}/index/{LIVE_INDEX.name}"],
            ),
            allow("s3:GetObject", "s3:DeleteObject", resources=[objects]),
            # Without ListBucket S3 reports a missing payload as AccessDenied
            # (cairn.aws.s3_staging).
            allow("s3:ListBucket", resources=[self.rollouts.bucket.bucket_arn]),
            *self._key_use("kms:Decrypt"),
            *invoke_statements(models),
            *api_key_statements(self.settings),
        ):
            extraction.add_to_role_policy(statement)
        for statement in (
            allow(
                "dynamodb:GetItem",
                "dynamodb:Query",
                "dynamodb:PutItem",
                "dynamodb:ConditionCheckItem",
                resources=[items.table_arn, f"{items.table_arn}/index/{DUE_INDEX.name}"],
            ),
            allow("dynamodb:BatchGetItem", resources=[events.table_arn]),
            allow("s3:PutObject", "s3:GetObject", resources=[objects]),
            # Without ListBucket S3 reports a payload not staged yet as AccessDenied, and the
            # staging store's read-back of a retried put fails (cairn.aws.s3_staging).
            allow("s3:ListBucket", resources=[self.rollouts.bucket.bucket_arn]),
            # SSE-KMS on the payloads and on the topic: encrypt to write, decrypt to read back.
            *self._key_use("kms:GenerateDataKey", "kms:Decrypt"),
            allow("sns:Publish", resources=[self.fanout.topic.topic_arn]),
        ):
            sweep.add_to_role_policy(statement)
        acknowledge_profile_regions(extraction, models)
        for function in (extraction, sweep):
            acknowledge_rollout_objects(function, self.rollouts.bucket)
        # The Scheduler, at a wake-up: invoke the sweep; a delivery that failed goes to the
        # sweep's failures queue (SSE-SQS: no key to use).
        role = self.extraction.scheduler_role
        role.add_to_policy(allow("lambda:InvokeFunction", resources=[sweep.function_arn]))
        role.add_to_policy(
            allow("sqs:SendMessage", resources=[self.extraction.sweep_failures.queue_arn])
        )
        self._allow_arming(sweep, target=None)

    def _grant_jobs(self) -> None:
        """Least privilege for the scheduled jobs (docs/history.md, "Background jobs").

        They list the memories and their actors, read the recall journal and the live heads
        with their vectors, write links (a Put with a ConditionCheck on both heads), add access
        counts with their cursor (Update), record their runs (Put), all in the items table; and
        call the extraction model to propose links and roll up. The rollup reads the events
        table's actors, sessions, turns and chunks, and writes a chunk in one transaction (the
        chunk's Put, its level cursor's and the history generation's Updates, a ConditionCheck
        per child chunk): never a delete there, nor its ``by_event_id`` index. No payloads or
        topic; the embedding model (when embeddings come from Bedrock) only for the reflection
        job, which embeds the insight it files (a link's neighbours, a reflection's cluster and
        a contradiction's pair are found among vectors already stored).
        """
        function, items = self.jobs.function, self.tables.items
        models = [*bedrock_models(self.settings), *self.embedding_models()]
        for statement in (
            allow(
                "dynamodb:GetItem",
                "dynamodb:BatchGetItem",
                "dynamodb:Query",
                "dynamodb:PutItem",
                "dynamodb:UpdateItem",
                "dynamodb:ConditionCheckItem",
                resources=[items.table_arn],
            ),
            allow(
                "dynamodb:GetItem",
                "dynamodb:BatchGetItem",
                "dynamodb:Query",
                "dynamodb:PutItem",
                "dynamodb:UpdateItem",
                "dynamodb:ConditionCheckItem",
                resources=[self.tables.events.table_arn],
            ),
            *([table_key_statement(self.key)] if self.key is not None else []),
            *invoke_statements(models),
        ):
            function.add_to_role_policy(statement)
        acknowledge_profile_regions(function, models)

    def _allow_arming(
        self, function: lambda_.Function, *, target: lambda_.IFunction | None
    ) -> None:
        """Let ``function`` arm the sweep's wake-ups: create one-time schedules in the group
        (only ``sweep-*`` ones), passing the Scheduler's role, and tell it where they are;
        ``target`` is the sweep it names (``None``: the sweep itself, from its context)."""
        wake_ups = self.extraction
        function.add_to_role_policy(
            allow("scheduler:CreateSchedule", resources=[wake_ups.wake_up_schedules()])
        )
        function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["iam:PassRole"],
                resources=[wake_ups.scheduler_role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}},
            )
        )
        for name, value in wake_ups.timer_environment().items():
            function.add_environment(name, value)
        if target is not None:
            function.add_environment("CAIRN_SWEEP_FUNCTION_ARN", target.function_arn)
        if function.role is not None:
            group = self.get_logical_id(wake_ups.wake_ups)
            Validations.of(function.role).acknowledge(
                Acknowledgment(
                    id="AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:"
                    f"<AWS::Region>:<AWS::AccountId>:schedule/<{group}>/{WAKE_UP_PREFIX}*]",
                    reason="A wake-up schedule is named by its minute (cairn.aws.sweep_timer): "
                    "only sweep-* schedules of the stack's own group.",
                )
            )

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
        models = bedrock_models(self.settings)
        for statement in (
            allow(
                *RECORD_WRITES,
                resources=[items.table_arn, f"{items.table_arn}/index/{LIVE_INDEX.name}"],
            ),
            allow("s3:GetObject", "s3:DeleteObject", resources=[objects]),
            # Without ListBucket S3 reports a missing payload as AccessDenied
            # (cairn.aws.s3_staging).
            allow("s3:ListBucket", resources=[self.rollouts.bucket.bucket_arn]),
            *self._key_use("kms:Decrypt"),
            *invoke_statements(models),
            *api_key_statements(self.settings),
        ):
            function.add_to_role_policy(statement)
        acknowledge_profile_regions(function, models)
        acknowledge_rollout_objects(function, self.rollouts.bucket)

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
        writes = (*RECORD_WRITES, "dynamodb:BatchWriteItem")
        for statement in (
            allow(
                *writes, resources=[items.table_arn, f"{items.table_arn}/index/{LIVE_INDEX.name}"]
            ),
            allow(
                *writes,
                resources=[events.table_arn, f"{events.table_arn}/index/{EVENT_ID_INDEX.name}"],
            ),
            allow(
                "s3:PutObject",
                "s3:GetObject",
                "s3:DeleteObject",
                resources=[self.rollouts.bucket.arn_for_objects(f"{KEY_PREFIX}*")],
            ),
            # An erase lists the scope's payloads; without it a missing one reads AccessDenied.
            allow("s3:ListBucket", resources=[self.rollouts.bucket.bucket_arn]),
            *self._key_use("kms:GenerateDataKey", "kms:Decrypt"),
            allow("sns:Publish", resources=[self.fanout.topic.topic_arn]),
        ):
            function.add_to_role_policy(statement)
        if self.embedding_models():
            function.add_to_role_policy(bedrock_invoke_statement(self.embedding_models()))
        acknowledge_rollout_objects(function, self.rollouts.bucket)
        self._allow_arming(function, target=self.extraction.sweep)
        self._index_objects(function, erases=True)
        # Which stream a memory may deliver to ("": none; docs/deploy.md, "Record streaming").
        function.add_environment("CAIRN_RECORD_STREAM_ARN", self.settings.record_stream_arn or "")

    def _stream_delivery(self, stream_arn: str | None) -> StreamDelivery | None:
        """Record streaming (``-c recordStreamArn=...``), granted action by action.

        The delivery function reads change items, record versions and memory configurations
        (items table: GetItem, Query), moves its delivery cursors (UpdateItem), and puts events
        to the one stream the operator named. It writes no record and reads no event; its
        trigger (the items table's stream) is granted by the event source mapping.
        """
        if stream_arn is None:
            return None
        delivery = StreamDelivery(
            self, "Streaming", lambdas=self.lambdas, table=self.tables.items, stream_arn=stream_arn
        )
        for statement in (
            allow(
                "dynamodb:GetItem",
                "dynamodb:Query",
                "dynamodb:UpdateItem",
                resources=[self.tables.items.table_arn],
            ),
            allow("kinesis:PutRecords", resources=[stream_arn]),
            *self._key_use("kms:Decrypt"),
        ):
            delivery.function.add_to_role_policy(statement)
        CfnOutput(self, "StreamDeliveryFailuresQueueUrl", value=delivery.failures.queue_url)
        return delivery

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
            model_id=self.settings.telegram_model,
            timezone=self.settings.telegram_timezone,
        )
        items, events = self.tables.items, self.tables.events
        # It answers through the stack's provider: Bedrock may be invoked for its model only
        # under ``bedrock`` (and for embeddings under the Bedrock embedder).
        models = bedrock_models(self.settings, self.settings.telegram_model)
        models += self.embedding_models()
        for statement in (
            allow("secretsmanager:GetSecretValue", resources=[bot.secret.secret_arn]),
            allow("s3:GetObject", resources=[bot.persona.arn_for_objects("*")]),
            # Without ListBucket S3 reports a missing persona file as AccessDenied, not 404.
            allow("s3:ListBucket", resources=[bot.persona.bucket_arn]),
            allow(
                *RECORD_WRITES,
                resources=[items.table_arn, f"{items.table_arn}/index/{LIVE_INDEX.name}"],
            ),
            allow(
                "dynamodb:GetItem",
                "dynamodb:BatchGetItem",
                "dynamodb:Query",
                "dynamodb:PutItem",
                "dynamodb:UpdateItem",
                "dynamodb:ConditionCheckItem",
                resources=[events.table_arn],
            ),
            allow(
                "s3:PutObject",
                "s3:GetObject",
                resources=[self.rollouts.bucket.arn_for_objects(f"{KEY_PREFIX}*")],
            ),
            # Recall index objects: a missing one reads 404, not AccessDenied, with listing.
            allow("s3:ListBucket", resources=[self.rollouts.bucket.bucket_arn]),
            *self._key_use("kms:GenerateDataKey", "kms:Decrypt"),
            allow("sns:Publish", resources=[self.fanout.topic.topic_arn]),
            *invoke_statements(models),
            *api_key_statements(self.settings),
        ):
            bot.function.add_to_role_policy(statement)
        self._index_objects(bot.function, erases=False)
        acknowledge_profile_regions(bot.function, models)
        acknowledge_rollout_objects(bot.function, self.rollouts.bucket)
        acknowledge_persona_objects(bot)
        self._allow_arming(bot.function, target=self.extraction.sweep)
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
            # Empty with AWS-managed encryption: payloads take the bucket's SSE-S3 default.
            "CAIRN_KMS_KEY_ID": self.key.key_arn if self.key is not None else "",
            "CAIRN_ROLLOUT_TOPIC_ARN": self.fanout.topic.topic_arn,
            "CAIRN_EMBEDDER": self.settings.embedder,
            "CAIRN_EMBEDDING_MODEL_ID": self.settings.embedding_model_id,
            "CAIRN_EXTRACTION_MODEL_ID": self.settings.extraction_model_id,
            **model_environment(self.settings),
            "CAIRN_RETENTION_DAYS": str(self.settings.retention_days),
        }

    def _outputs(self) -> None:
        values = {
            "ItemsTableName": self.tables.items.table_name,
            "EventsTableName": self.tables.events.table_name,
            "RolloutBucketName": self.rollouts.bucket.bucket_name,
            "EncryptionMode": self.settings.encryption,
            "RolloutTopicArn": self.fanout.topic.topic_arn,
            "ExtractionQueueUrl": self.fanout.extraction.queue.queue_url,
            "ExtractionDeadLetterQueueUrl": self.fanout.extraction.dead_letters.queue_url,
            "ConsolidationQueueUrl": self.fanout.consolidation.queue.queue_url,
            "ConsolidationDeadLetterQueueUrl": self.fanout.consolidation.dead_letters.queue_url,
            "Embedder": self.settings.embedder,
            "EmbeddingModelId": self.settings.embedding_model_id,
            "ExtractionModelId": self.settings.extraction_model_id,
            "ModelProvider": self.settings.model_provider,
            # Where AWS_ENDPOINT_URL_BEDROCK_AGENTCORE(_CONTROL) point; sign for execute-api.
            "ApiEndpoint": self.api.url,
            # What an agent appending through the library arms the sweep's wake-ups with
            # (cairn.aws.sweep_timer.SchedulerSweepTimer; docs/extraction.md).
            "SweepScheduleGroup": self.extraction.wake_ups.ref,
            "SweepFunctionArn": self.extraction.sweep.function_arn,
            "SweepSchedulerRoleArn": self.extraction.scheduler_role.role_arn,
            "SweepFailuresQueueArn": self.extraction.sweep_failures.queue_arn,
        }
        if self.key is not None:
            values["KeyArn"] = self.key.key_arn
        for name, value in values.items():
            CfnOutput(self, name, value=value)

    def _alarms(self, email: str) -> AlarmNotifications:
        """The operator's alarms (their meanings: infra.components.alarm_notifications)."""
        alarms = AlarmNotifications(self, "Alarms", key=self.key, email=email)
        for name, worker in (
            ("Extraction", self.fanout.extraction),
            ("Consolidation", self.fanout.consolidation),
        ):
            alarms.add_queue(
                name,
                queue=worker.queue,
                dead_letters=worker.dead_letters,
                visibility=worker.visibility_timeout,
            )
        functions = {
            "Api": self.api.function,
            "Extract": self.extraction.extraction,
            "Sweep": self.extraction.sweep,
            "Consolidate": self.consolidation.function,
            "Jobs": self.jobs.function,
        }
        if self.telegram is not None:
            functions["TelegramWebhook"] = self.telegram.function
        if self.streaming is not None:
            functions["StreamDelivery"] = self.streaming.function
        for name, function in functions.items():
            alarms.add_function(name, function)
        alarms.add(
            "ApiServerErrors",
            metric=self.api.http_api.metric_server_error(
                period=Duration.minutes(5), statistic="Sum"
            ),
            meaning="Api: the HTTP API answered 5xx (the function failed, timed out or was "
            "throttled); see the Api function's alarms and log group",
        )
        alarms.add(
            "SweepFailures",
            metric=self.extraction.sweep_failures.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(5), statistic="Maximum"
            ),
            meaning="Sweep: a sweep failed after its retries (the event waits in the "
            "SweepFailures queue, kept 14 days); idle sessions are not released until sweeps "
            "succeed again: read the Sweep log group",
        )
        if self.streaming is not None:
            failures = self.streaming.failures
            alarms.add(
                "StreamDeliveryFailures",
                metric=failures.metric_approximate_number_of_messages_visible(
                    period=Duration.minutes(5), statistic="Maximum"
                ),
                meaning="StreamDelivery: a batch of record changes failed its retries (its "
                "stream records wait in the DeliveryFailures queue, kept 14 days); the scope's "
                "next change delivers what is due, or read the StreamDelivery log group",
            )
        alarms.add(
            "JobFailures",
            metric=self.jobs.failures.metric_approximate_number_of_messages_visible(
                period=Duration.minutes(5), statistic="Maximum"
            ),
            meaning="Jobs: a scheduled run of the background jobs failed (the event waits in "
            "the JobFailures queue, kept 14 days); the next run continues where the cursors "
            "left off: read the Jobs log group and each memory's run log (`cairn jobs`)",
        )
        return alarms


def lambda_code(settings: StackSettings) -> LambdaCode:
    """Where the functions' code comes from, and the extras it must have been built with."""
    return LambdaCode(
        root=Path(settings.lambda_assets) if settings.lambda_assets else ASSET_ROOT,
        placeholder=settings.lambda_code == "placeholder",
        extras=frozenset({"aws", "onnx"} if settings.embedder == "onnx" else {"aws"}),
    )
