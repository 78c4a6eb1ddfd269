"""The stack properties an operator chooses, read from CDK context (``cdk deploy -c key=value``).

- ``embedder`` (default ``bedrock``): ``bedrock`` (Titan Text Embeddings v2) or ``onnx``
  (the local all-MiniLM-L6-v2 model, shipped inside the function asset).
- ``extractionModelId`` (default ``amazon.nova-lite-v1:0``): the Bedrock model or inference
  profile id extraction calls.
- ``modelProvider`` (default ``bedrock``): which model extraction and consolidation ask, as the
  ``cairn`` command's ``--provider``: ``bedrock`` (Converse with ``extractionModelId``),
  ``openai`` (an OpenAI-compatible server at ``modelBaseUrl``, an ``https://`` URL the functions
  reach over the internet, serving the model named by ``extractionModelId``) or ``heuristic``
  (the offline rules: no model call, no Bedrock permission). ``infra.components.model_provider``.
  ``modelApiKeySecret`` (default none, ``openai`` only): the complete ARN of a Secrets Manager
  secret whose string is the server's API key; the functions that ask the model may read exactly
  that secret, once per cold start, and send the key as a bearer token.
- ``retentionDays`` (default ``30``): how long transient data lives (below).
- ``alarmEmail`` (default none): an address the operator alarms e-mail (``infra.components.
  alarms``); without it the stack creates no alarm (one would reach nobody, at $0.10 a month).
- ``encryption`` (default ``aws-managed``): ``aws-managed`` encrypts with keys AWS owns or
  manages (DynamoDB's owned key, SSE-S3, SSE-SQS, ``alias/aws/sns``), free; ``customer-key``
  puts everything under one customer-managed KMS key ($1 a month and its requests) whose policy
  you control, whose every use CloudTrail logs, and whose deletion crypto-shreds retained data.
- ``maxConcurrency`` (default none): a cap on the concurrent invocations each queue's event
  source mapping makes (2-1000), the bound a stack serving many scopes needs in front of its
  Bedrock quota. Unset, a FIFO queue's concurrency is bounded by its active scopes, and an idle
  mapping polls with 2 connections instead of 5 (AWS: the scale-down "is not available when you
  enable the maximum concurrency setting"): the cheaper choice for one user.
- ``metrics`` (default ``false``): publish the functions' custom metrics (Powertools EMF, $0.30
  per metric a month); no alarm reads them, so they are off unless a dashboard will.
- ``telegram`` (default ``false``): add the Telegram reference backend (``infra.components.
  telegram``); it answers through ``modelProvider`` (Bedrock, or the OpenAI-compatible server
  with its key; the offline rules cannot hold a conversation, so ``heuristic`` is refused with
  it), ``telegramModelId`` (default: the extraction model) is the model it answers with,
  ``telegramTimezone`` (default ``UTC``) where its chats' days begin.
- ``recordStreamArn`` (default none): record streaming (``streamDeliveryResources``): the
  Kinesis data stream memories may deliver their record changes to; adds the delivery function
  on the items table's (keys-only) stream, allowed to put to that stream only
  (``infra.components.stream_delivery``, docs/deploy.md).

- ``principalsFile`` (default none): a principals document (JSON or TOML) binding each caller
  IAM ARN to the actors, namespaces and access it may touch through the API
  (``infra.principals``, docs/security.md); without it every caller IAM admits touches all.

Two keys choose where function code comes from (``infra.components.lambda_code``):
``lambdaCode`` (default ``build``: the folders ``make lambda-assets`` builds, refused when
missing; ``placeholder``: inline stubs for offline checks, in a template CloudFormation refuses)
and ``lambdaAssets`` (default ``build/lambda``): where the built folders are.

``retentionDays`` bounds what is transient: unconsumed staged rollouts (S3 lifecycle expiry),
Lambda log groups (rounded up to a retention CloudWatch offers) and the TTL cairn stamps on
expiring items. Long-term memory itself never expires.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cairn.memories import KINESIS_STREAM_ARN_PATTERN

EmbedderKind = Literal["bedrock", "onnx"]
ProviderKind = Literal["bedrock", "openai", "heuristic"]
EncryptionKind = Literal["aws-managed", "customer-key"]

# The ids the deployed functions embed with; ``cairn.embed`` reports the same model ids.
EMBEDDING_MODEL_IDS: dict[str, str] = {
    "bedrock": "amazon.titan-embed-text-v2:0",
    "onnx": "all-MiniLM-L6-v2-onnx-int8",
}
DEFAULT_EXTRACTION_MODEL_ID = "amazon.nova-lite-v1:0"

CONTEXT_KEYS: dict[str, str] = {
    "embedder": "embedder",
    "extractionModelId": "extraction_model_id",
    "modelProvider": "model_provider",
    "modelBaseUrl": "model_base_url",
    "modelApiKeySecret": "model_api_key_secret",
    "retentionDays": "retention_days",
    "alarmEmail": "alarm_email",
    "encryption": "encryption",
    "maxConcurrency": "max_concurrency",
    "metrics": "metrics",
    "telegram": "telegram",
    "lambdaCode": "lambda_code",
    "lambdaAssets": "lambda_assets",
    "telegramModelId": "telegram_model_id",
    "telegramTimezone": "telegram_timezone",
    "principalsFile": "principals_file",
    "recordStreamArn": "record_stream_arn",
}


class SettingsError(ValueError):
    """A stack property is malformed; the message names the context key and what it accepts."""


class StackSettings(BaseModel):
    """Validated stack properties; every field has a safe default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    embedder: EmbedderKind = "bedrock"
    extraction_model_id: str = Field(
        default=DEFAULT_EXTRACTION_MODEL_ID, pattern=r"^[a-zA-Z0-9._:/\-]{1,2048}$"
    )
    model_provider: ProviderKind = "bedrock"
    model_base_url: str | None = Field(default=None, pattern=r"^https://[^\s/?#]+(/[^\s?#]*)?$")
    # A complete secret ARN (its six-character suffix included), so the grant names exactly it.
    model_api_key_secret: str | None = Field(
        default=None,
        pattern=r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$",
    )
    retention_days: int = Field(default=30, ge=1, le=3653)
    alarm_email: str | None = Field(default=None, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    encryption: EncryptionKind = "aws-managed"
    max_concurrency: int | None = Field(default=None, ge=2, le=1000)
    metrics: bool = False
    telegram: bool = False
    lambda_code: Literal["build", "placeholder"] = "build"
    lambda_assets: str | None = Field(default=None, min_length=1)
    # None: answer with the extraction model (``telegram_model``).
    telegram_model_id: str | None = Field(default=None, pattern=r"^[a-zA-Z0-9._:/\-]{1,2048}$")
    telegram_timezone: str = Field(default="UTC", pattern=r"^[A-Za-z0-9_+\-/]{1,64}$")
    principals_file: str | None = Field(default=None, min_length=1)
    # Record streaming: the one Kinesis data stream memories may deliver their record changes
    # to (``streamDeliveryResources``); None: no delivery function, no table stream.
    record_stream_arn: str | None = Field(default=None, pattern=KINESIS_STREAM_ARN_PATTERN)

    @model_validator(mode="after")
    def _provider_is_whole(self) -> Self:
        if self.model_provider == "openai":
            if self.model_base_url is None:
                raise ValueError(
                    "-c modelProvider=openai needs -c modelBaseUrl=https://... (the server's "
                    "API root, e.g. https://models.example.com/v1)"
                )
            if self.extraction_model_id == DEFAULT_EXTRACTION_MODEL_ID:
                raise ValueError(
                    "-c modelProvider=openai needs -c extractionModelId=NAME, the model the "
                    "server serves (e.g. llama3.2)"
                )
        elif self.model_base_url is not None:
            raise ValueError("-c modelBaseUrl is used only with -c modelProvider=openai")
        elif self.model_api_key_secret is not None:
            raise ValueError("-c modelApiKeySecret is used only with -c modelProvider=openai")
        if self.telegram and self.model_provider == "heuristic":
            raise ValueError(
                "-c telegram=true answers with a model, and the offline rules only extract: "
                "deploy it with -c modelProvider=bedrock or openai"
            )
        return self

    @property
    def embedding_model_id(self) -> str:
        return EMBEDDING_MODEL_IDS[self.embedder]

    @property
    def telegram_model(self) -> str:
        """The model the Telegram webhook answers with: its own, else the extraction model."""
        return self.telegram_model_id or self.extraction_model_id

    @property
    def customer_key(self) -> bool:
        return self.encryption == "customer-key"

    @classmethod
    def from_context(cls, lookup: Callable[[str], Any]) -> StackSettings:
        """Settings from CDK context (``app.node.try_get_context``); unset keys keep defaults."""
        given = {
            field: lookup(key)
            for key, field in CONTEXT_KEYS.items()
            if lookup(key) not in (None, "")
        }
        try:
            return cls.model_validate(given)
        except ValidationError as exc:
            fields = {field: key for key, field in CONTEXT_KEYS.items()}
            problems = "; ".join(
                f"-c {fields.get(str(error['loc'][0]), error['loc'][0])}: {error['msg']}"
                if error["loc"]
                else str(error["msg"]).removeprefix("Value error, ")
                for error in exc.errors()
            )
            raise SettingsError(f"invalid stack properties: {problems}") from exc
