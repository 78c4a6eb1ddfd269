"""The composition root of every cairn Lambda: adapters built once per warm container.

Reads the ``CAIRN_*`` variables ``infra.stack.CairnStack.function_environment`` sets, builds the
boto3 clients (retries and timeouts configured here, the one place), and wires them into the
library's ports. Nothing happens at import: every builder is a cached function, called by the
handler on its first invocation and reused by later ones in the same container, and each
imports what it builds, so a function loads only the library it uses (the sweep never imports
extraction's consumer nor consolidation: a shorter cold start). Tests call
``configure`` to point the clients at moto and inject test providers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from cairn.clock import SystemClock
from cairn.errors import ConfigurationError
from cairn.extract.staging import RolloutPipeline
from cairn.ports import Clock, Embedder, ModelProvider, Stores, SweepTimer

if TYPE_CHECKING:
    from cairn.consolidate.commit import Consolidator
    from cairn.consolidate.evidence import EvidenceStager
    from cairn.extract.delivery import Consumer

# Inside a Lambda: a few quick retries, and answers well within the function's timeout.
_AWS_CONFIG = {"retries": {"mode": "standard", "max_attempts": 3}, "connect_timeout": 2}
_READ_TIMEOUT_SECONDS = 5
# One model call's bound; infra.components.extraction sizes the extraction function from it
# (MODEL_TIMEOUT: a test keeps the two equal).
_MODEL_TIMEOUT_SECONDS = 45.0
# One Titan embedding answers in tens of milliseconds; recall may embed a few dozen texts.
_EMBED_TIMEOUT_SECONDS = 5.0


@dataclass(frozen=True)
class Deployment:
    """The deployment's names and choices, as the stack sets them in the environment."""

    items_table: str
    events_table: str
    rollout_bucket: str
    rollout_topic_arn: str
    embedder: str
    extraction_model_id: str
    # Optional: older stacks did not set it, and the embedder's own default is the stack's.
    embedding_model_id: str = ""
    # Empty with AWS-managed encryption: payloads take the bucket's default (SSE-S3).
    kms_key_id: str = ""
    # The sweep's wake-ups (infra.components.extraction), empty in a stack without them; the
    # function a wake-up invokes is set on those that append (the API, the Telegram webhook).
    sweep_schedule_group: str = ""
    sweep_scheduler_role_arn: str = ""
    sweep_failures_arn: str = ""
    sweep_function_arn: str = ""

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> Deployment:
        names = {
            "items_table": "CAIRN_ITEMS_TABLE",
            "events_table": "CAIRN_EVENTS_TABLE",
            "rollout_bucket": "CAIRN_ROLLOUT_BUCKET",
            "rollout_topic_arn": "CAIRN_ROLLOUT_TOPIC_ARN",
            "embedder": "CAIRN_EMBEDDER",
            "extraction_model_id": "CAIRN_EXTRACTION_MODEL_ID",
        }
        missing = sorted(variable for variable in names.values() if not environ.get(variable))
        if missing:
            raise ConfigurationError(
                f"the function's environment lacks {', '.join(missing)}; deploy it with the "
                "cairn stack, which sets every CAIRN_* variable"
            )
        return cls(
            **{field: environ[variable] for field, variable in names.items()},
            embedding_model_id=environ.get("CAIRN_EMBEDDING_MODEL_ID", ""),
            kms_key_id=environ.get("CAIRN_KMS_KEY_ID", ""),
            **{field: environ.get(variable, "") for field, variable in _SWEEP_TIMER.items()},
            sweep_function_arn=environ.get("CAIRN_SWEEP_FUNCTION_ARN", ""),
        )


_SWEEP_TIMER = {
    "sweep_schedule_group": "CAIRN_SWEEP_SCHEDULE_GROUP",
    "sweep_scheduler_role_arn": "CAIRN_SWEEP_SCHEDULER_ROLE_ARN",
    "sweep_failures_arn": "CAIRN_SWEEP_FAILURES_ARN",
}


def record_budget_ms() -> int:
    """The invocation time one more extraction notice needs at worst (``CAIRN_RECORD_BUDGET_MS``,
    set by ``infra.components.extraction``); 0 where it is not set (no check)."""
    return int(os.environ.get("CAIRN_RECORD_BUDGET_MS") or 0)


def model_timeout_seconds() -> float:
    """One model call's bound (a caller budgeting its invocation's time reads it)."""
    return _MODEL_TIMEOUT_SECONDS


@dataclass
class _Injected:
    """What a test may put in place of the real thing (never set in a deployed function)."""

    session: Any = None
    model: ModelProvider | None = None
    embedder: Embedder | None = None
    clock: Clock | None = None


_injected = _Injected()


def configure(
    *,
    session: Any = None,
    model: ModelProvider | None = None,
    embedder: Embedder | None = None,
    clock: Clock | None = None,
) -> None:
    """Build clients from ``session`` (a boto3 session, e.g. under moto) and use ``model``,
    ``embedder`` and ``clock`` instead of the deployment's; for tests. Resets the caches."""
    global _injected  # the composition root's one mutable setting
    _injected = _Injected(session=session, model=model, embedder=embedder, clock=clock)
    reset()


def reset() -> None:
    """Forget every cached adapter (tests; a new deployment)."""
    for builder in (
        deployment,
        client,
        stores,
        staging,
        sweep_timer,
        pipeline,
        embedder,
        model_api_key,
        model,
        consumer,
        consolidator,
        stream_cursors,
        event_sink,
    ):
        builder.cache_clear()


@cache
def deployment() -> Deployment:
    return Deployment.from_environment(os.environ)


@cache
def client(service: str) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(**_AWS_CONFIG, read_timeout=_READ_TIMEOUT_SECONDS)
    return (_injected.session or boto3.session.Session()).client(service, config=config)


@cache
def stores() -> Stores:
    """The DynamoDB stores; recall index objects go in the rollout bucket under
    ``recall-index/`` (docs/dynamodb.md, "Recall over DynamoDB"), so a cold function fetches a
    scope's index instead of reading every record."""
    from cairn.aws.s3_index_objects import S3IndexObjects
    from cairn.store.dynamodb import DynamoDBBackend

    found = deployment()
    objects = S3IndexObjects(client("s3"), bucket=found.rollout_bucket, kms_key_id=found.kms_key_id)
    return DynamoDBBackend(
        client("dynamodb"),
        items_table=found.items_table,
        events_table=found.events_table,
        clock=clock(),
        index_objects=objects,
    ).stores()


@cache
def stream_cursors() -> Any:
    """Record streaming's delivery cursors, in the items table (one item per scope)."""
    from cairn.store.dynamodb import DynamoDBClient
    from cairn.store.dynamodb.stream_cursors import DynamoDBStreamCursors

    return DynamoDBStreamCursors(DynamoDBClient(client("dynamodb")), deployment().items_table)


@cache
def event_sink() -> Any:
    """Record streaming's Kinesis sink (each memory names its own stream)."""
    from cairn.aws.kinesis_events import KinesisEventSink

    return KinesisEventSink(client("kinesis"))


@cache
def staging() -> Any:
    from cairn.aws.s3_staging import S3StagingStore

    found = deployment()
    return S3StagingStore(client("s3"), bucket=found.rollout_bucket, kms_key_id=found.kms_key_id)


def clock() -> Clock:
    return _injected.clock or SystemClock()


def _rollouts(built: Stores) -> Any:
    if built.rollouts is None:  # pragma: no cover - the DynamoDB backend always has one
        raise ConfigurationError("the DynamoDB backend keeps no rollout index; upgrade cairn")
    return built.rollouts


@cache
def sweep_timer(target_arn: str = "") -> SweepTimer | None:
    """The sweep's wake-ups, invoking ``target_arn`` (the sweep re-arming itself passes its
    own ARN; an appending function's comes from ``CAIRN_SWEEP_FUNCTION_ARN``); ``None`` where
    the stack sets none (an older stack, swept every minute by its rule)."""
    found = deployment()
    missing = sorted(v for f, v in _SWEEP_TIMER.items() if not getattr(found, f))
    if len(missing) == len(_SWEEP_TIMER) or not (target := target_arn or found.sweep_function_arn):
        return None
    if missing:  # some but not all: a half-deployed function says what it lacks
        raise ConfigurationError(f"the function's environment lacks {', '.join(missing)}")
    from cairn.aws.sweep_timer import SchedulerSweepTimer

    return SchedulerSweepTimer(
        client("scheduler"),
        group=found.sweep_schedule_group,
        target_arn=target,
        role_arn=found.sweep_scheduler_role_arn,
        dead_letter_arn=found.sweep_failures_arn,
        clock=clock(),
    )


@cache
def pipeline() -> RolloutPipeline:
    """Counting, staging and announcing: what appends events and what the sweep drives; an
    append arms the sweep's wake-up for what it left due (``sweep_timer``)."""
    from cairn.aws.sns_notifier import SNSNotifier

    topic = deployment().rollout_topic_arn  # first: a misdeployed function says what is missing
    notifier = SNSNotifier(client("sns"), topic_arn=topic)
    return RolloutPipeline(
        rollouts=_rollouts(stores()),
        staging=staging(),
        notifier=notifier,
        clock=clock(),
        timer=sweep_timer(),
    )


@cache
def embedder() -> Embedder:
    if _injected.embedder is not None:
        return _injected.embedder
    kind = deployment().embedder
    if kind == "onnx":
        from cairn.embed.onnx import OnnxEmbedder

        return OnnxEmbedder()
    if kind == "bedrock":
        from cairn.embed.bedrock import MODEL_ID, BedrockEmbedder
        from cairn.llm.bedrock import bedrock_runtime_client

        runtime = bedrock_runtime_client(
            timeout_seconds=_EMBED_TIMEOUT_SECONDS, session=_injected.session
        )
        model_id = deployment().embedding_model_id or MODEL_ID
        return BedrockEmbedder(runtime, model_id=model_id, timeout_seconds=_EMBED_TIMEOUT_SECONDS)
    raise ConfigurationError(
        f"embedder {kind!r} is not one cairn knows; deploy with -c embedder=bedrock or onnx"
    )


@cache
def model() -> ModelProvider:
    """The provider ``CAIRN_MODEL_PROVIDER`` names (``infra.components.model_provider``):
    Bedrock Converse (the default, and what stacks older than the setting use), an
    OpenAI-compatible server at ``CAIRN_MODEL_BASE_URL``, or the offline rules."""
    if _injected.model is not None:
        return _injected.model
    provider = os.environ.get("CAIRN_MODEL_PROVIDER") or "bedrock"
    if provider == "heuristic":
        from cairn.local.offline import offline_model

        return offline_model()
    if provider == "openai":
        from cairn.llm.openai_compat import OpenAICompatibleModel

        base_url = os.environ.get("CAIRN_MODEL_BASE_URL") or ""
        return OpenAICompatibleModel(
            base_url, deployment().extraction_model_id, api_key=model_api_key()
        )
    if provider != "bedrock":
        raise ConfigurationError(
            f"model provider {provider!r} is not one cairn knows; deploy with "
            "-c modelProvider=bedrock, openai or heuristic"
        )
    from cairn.llm.bedrock import BedrockModel, bedrock_runtime_client

    runtime = bedrock_runtime_client(
        timeout_seconds=_MODEL_TIMEOUT_SECONDS, session=_injected.session
    )
    return BedrockModel(runtime, deployment().extraction_model_id)


@cache
def model_api_key() -> str | None:
    """The OpenAI-compatible server's API key: the string of the Secrets Manager secret
    ``CAIRN_MODEL_API_KEY_SECRET`` names (``-c modelApiKeySecret``), read once per container
    through Powertools' parameters utility; ``None`` when the stack names none. Never logged,
    never in an error message."""
    secret_arn = os.environ.get("CAIRN_MODEL_API_KEY_SECRET") or ""
    if not secret_arn:
        return None
    from aws_lambda_powertools.utilities.parameters import SecretsProvider
    from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

    try:
        key = SecretsProvider(boto3_client=client("secretsmanager")).get(secret_arn)
    except GetParameterError as exc:
        raise ConfigurationError(
            "cannot read the model server's API key from the secret -c modelApiKeySecret "
            "names: store the key as the secret's string, in the stack's region"
        ) from exc  # an AWS error names the secret, never its value
    if not isinstance(key, str) or not key.strip():
        raise ConfigurationError(
            "the secret -c modelApiKeySecret names holds no API key: store the key as its string"
        )
    return key.strip()


@cache
def consumer() -> Consumer:
    """Consuming rollouts: the stores, the staged payloads, the model and the embedder (a
    memory nobody configured extracts with the built-in strategies, as embedded)."""
    from cairn.extract.delivery import build_consumer

    return build_consumer(stores(), staging(), model=model(), embedder=embedder(), clock=clock())


@cache
def consolidator() -> Consolidator:
    """Consolidation passes: the stores, the staged evidence and the model (background usage,
    apart from any agent's)."""
    from cairn.consolidate.commit import build_consolidator

    return build_consolidator(stores(), staging(), model=model(), clock=clock())


def evidence_stager() -> EvidenceStager:
    """Staging a completed run's evidence: payload, rollout index, notice on the topic."""
    found = pipeline()
    from cairn.consolidate.evidence import EvidenceStager

    return EvidenceStager(found.rollouts, found.staging, found.notifier, found.clock, found.timer)


PRINCIPALS_ENV = "CAIRN_PRINCIPALS"


def principals() -> Any:
    """The stack's principals document (``CAIRN_PRINCIPALS``, JSON: caller IAM ARNs mapped to
    actors, namespaces and access; ``-c principalsFile=...``), or None: every IAM caller API
    Gateway lets in may touch everything. A malformed document fails the cold start."""
    from cairn.api.principals import parse_principals

    text = os.environ.get(PRINCIPALS_ENV)
    if not text:
        return None
    return parse_principals(text, PRINCIPALS_ENV, toml=False)


def build_api() -> Any:
    """The AgentCore-compatible API over the deployment's stores (the api function); events it
    receives are counted and released through ``pipeline`` (docs/extraction.md), and its
    memory ARNs name the function's region."""
    from cairn.api import Api, ApiContext, ApiSettings

    # The stack sets CAIRN_RECORD_STREAM_ARN on the API ("" without record streaming): a
    # memory may name only the stream the delivery function may put to.
    streams = os.environ.get("CAIRN_RECORD_STREAM_ARN")
    settings = ApiSettings(
        region=os.environ.get("AWS_REGION") or ApiSettings().region,
        principals=principals(),
        delivery_streams=None if streams is None else frozenset(filter(None, [streams])),
    )
    context = ApiContext.build(
        stores(), embedder=embedder(), clock=clock(), settings=settings, extraction=pipeline()
    )
    return Api(context)
