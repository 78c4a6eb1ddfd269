"""The Telegram function's composition root, on top of ``functions._common.wiring``.

Reads its ``CAIRN_TELEGRAM_*`` variables (set by ``infra.components.telegram``), the bot token
and webhook secret from Secrets Manager, and wires ``TelegramBackend`` to the deployment's
stores, the extraction pipeline (so each turn counts toward the memory's triggers), the model
the stack's provider names (Bedrock or an OpenAI-compatible server), the persona bucket and
the Bot API. Built once per warm container; tests call ``configure``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from typing import Any

from cairn.aws.s3_objects import S3ObjectReader
from cairn.errors import ConfigurationError
from cairn.extract.delivery import stored_or
from cairn.extract.triggers import embedded_memory, policy_for
from cairn.models import EventInput, Scope
from cairn.ports import ModelProvider
from cairn.telegram import BotApi, PersonaFiles, SessionPolicy, TelegramSettings
from cairn.telegram.state_dynamodb import DynamoDBTelegramState
from cairn.telegram.webhook import TelegramBackend
from functions._common import wiring

# Under the function's 30 s timeout, leaving time to send the reply and append the turns.
_MODEL_TIMEOUT_SECONDS = 20.0


@dataclass(frozen=True)
class TelegramEnvironment:
    """The function's own settings, as the stack sets them in the environment."""

    secret_arn: str
    model_id: str
    memory_id: str
    persona_bucket: str | None
    persona_files: tuple[str, ...]
    timezone: str
    idle_minutes: int | None
    per_day: bool
    bot_api_url: str

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> TelegramEnvironment:
        missing = [
            name
            for name in ("CAIRN_TELEGRAM_SECRET_ARN", "CAIRN_TELEGRAM_MODEL_ID")
            if not environ.get(name)
        ]
        if missing:
            raise ConfigurationError(
                f"the function's environment lacks {', '.join(missing)}; deploy it with the "
                "cairn stack and -c telegram=true"
            )
        idle = environ.get("CAIRN_TELEGRAM_IDLE_MINUTES", "240")
        return cls(
            secret_arn=environ["CAIRN_TELEGRAM_SECRET_ARN"],
            model_id=environ["CAIRN_TELEGRAM_MODEL_ID"],
            memory_id=environ.get("CAIRN_TELEGRAM_MEMORY_ID") or "telegram",
            persona_bucket=environ.get("CAIRN_TELEGRAM_PERSONA_BUCKET") or None,
            persona_files=tuple(
                f
                for f in (environ.get("CAIRN_TELEGRAM_PERSONA_FILES") or "SOUL.md,USER.md").split(
                    ","
                )
                if f.strip()
            ),
            timezone=environ.get("CAIRN_TELEGRAM_TIMEZONE") or "UTC",
            idle_minutes=int(idle) if idle and idle != "none" else None,
            per_day=(environ.get("CAIRN_TELEGRAM_SESSION_PER_DAY") or "true").lower() != "false",
            bot_api_url=environ.get("CAIRN_TELEGRAM_BOT_API_URL") or "https://api.telegram.org",
        )


_model: ModelProvider | None = None


def configure(*, model: ModelProvider | None = None) -> None:
    """Answer with ``model`` instead of the stack's provider (tests); resets the cached
    backend."""
    global _model  # the composition root's one test seam
    _model = model
    backend.cache_clear()


@cache
def backend() -> TelegramBackend:
    env = TelegramEnvironment.from_environment(os.environ)
    token, webhook_secret = _bot_secret(env.secret_arn)
    settings = TelegramSettings.for_token(
        token,
        webhook_secret=webhook_secret,
        memory_id=env.memory_id,
        sessions=SessionPolicy(
            new_session_per_day=env.per_day, timezone=env.timezone, idle_minutes=env.idle_minutes
        ),
    )
    stores = wiring.stores()
    memory = stored_or(stores.memories, embedded_memory)(settings.memory_id)
    policy, pipeline = policy_for(memory), wiring.pipeline()

    def append(scope: Scope, event: EventInput) -> object:
        return pipeline.append(scope, event, policy)

    return TelegramBackend(
        settings=settings,
        state=DynamoDBTelegramState(
            wiring.client("dynamodb"), items_table=wiring.deployment().items_table
        ),
        stores=stores,
        model=_model or _answering_model(env.model_id),
        sender=BotApi(token, base_url=env.bot_api_url),
        persona=_persona(env),
        clock=wiring.clock(),
        embedder=wiring.embedder(),
        appender=append,
    )


def _bot_secret(secret_arn: str) -> tuple[str, str]:
    """The bot token and webhook secret, from the JSON secret the stack created."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        raw = wiring.client("secretsmanager").get_secret_value(SecretId=secret_arn)
        values: dict[str, Any] = json.loads(raw["SecretString"])
        return str(values["bot_token"]), str(values["webhook_secret"])
    except (ClientError, BotoCoreError, KeyError, ValueError) as exc:
        raise ConfigurationError(
            'cannot read the bot\'s secret: store {"bot_token": ..., "webhook_secret": ...} '
            "in the stack's TelegramBotSecret (see docs/runtime.md)"
        ) from exc


def _answering_model(model_id: str) -> ModelProvider:
    """``model_id`` through the stack's provider (``CAIRN_MODEL_PROVIDER``, as extraction asks):
    Bedrock Converse (the default), or the OpenAI-compatible server at ``CAIRN_MODEL_BASE_URL``
    with the stack's API key. The offline rules cannot answer a chat (the stack refuses them
    with the bot)."""
    provider = os.environ.get("CAIRN_MODEL_PROVIDER") or "bedrock"
    if provider == "openai":
        from cairn.llm.openai_compat import OpenAICompatibleModel

        base_url = os.environ.get("CAIRN_MODEL_BASE_URL") or ""
        return OpenAICompatibleModel(base_url, model_id, api_key=wiring.model_api_key())
    if provider != "bedrock":
        raise ConfigurationError(
            f"the Telegram bot cannot answer with the model provider {provider!r}: deploy it "
            "with -c modelProvider=bedrock or openai"
        )
    from cairn.llm.bedrock import BedrockModel, bedrock_runtime_client

    runtime = bedrock_runtime_client(timeout_seconds=_MODEL_TIMEOUT_SECONDS)
    return BedrockModel(runtime, model_id)


def _persona(env: TelegramEnvironment) -> Any:
    if env.persona_bucket is None:
        return lambda: ""
    return PersonaFiles(
        S3ObjectReader(wiring.client("s3"), bucket=env.persona_bucket),
        clock=wiring.clock(),
        files=env.persona_files,
        check_every=timedelta(seconds=60),
    ).prompt
