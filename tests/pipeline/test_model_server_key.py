"""The stack's OpenAI-compatible provider on moto: its API key from Secrets Manager, and the
Telegram bot answering through it.

The functions are configured as ``-c modelProvider=openai -c modelBaseUrl=… -c
modelApiKeySecret=…`` deploys them (``infra.components.model_provider``); the model server is
the loopback OpenAI-compatible server the library's own tests use, the secret is in moto, and
nothing is injected in place of the model. The key is read once per container, sent as a bearer
token, and never logged.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from cairn.clock import FixedClock
from cairn.errors import ConfigurationError
from cairn.model_request import ModelMessage, ModelRequest
from cairn.telegram.fake_bot_api import FakeBotApi
from tests.pipeline.aws import REGION, Deployment, LambdaContext
from tests.pipeline.test_telegram_two_days import PERSONA, SECRET, TOKEN, delivery
from tests.unit.model_server import ModelServer, model_server

API_KEY = "sk-cairn-test-0123456789abcdef"  # a fake key: must reach the server, never a log
CHAT_MODEL = "qwen2.5:7b-instruct"


def _completion(content: str) -> dict[str, object]:
    # The shape Ollama / vLLM return for a non-streamed chat completion.
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1767225600,
        "model": CHAT_MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49},
    }


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with model_server() as running:
        yield running


@pytest.fixture
def provider(
    deployment: Deployment, session: Any, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The functions told what the stack tells them under ``modelProvider=openai``, nothing
    injected for the model; yields the key's secret ARN."""
    from functions._common import wiring

    secret = session.client("secretsmanager", region_name=REGION).create_secret(
        Name="model-server-key", SecretString=API_KEY
    )
    for name, value in {
        "CAIRN_MODEL_PROVIDER": "openai",
        "CAIRN_MODEL_BASE_URL": f"{server.url}/v1",
        "CAIRN_MODEL_API_KEY_SECRET": secret["ARN"],
        "CAIRN_EXTRACTION_MODEL_ID": "llama3.2",
    }.items():
        monkeypatch.setenv(name, value)
    # The session (moto), clock and embedder as the deployment fixture set them; no model.
    wiring.configure(
        session=session, embedder=wiring._injected.embedder, clock=wiring._injected.clock
    )
    yield secret["ARN"]
    wiring.configure()


@pytest.fixture
def telegram(
    provider: str, session: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Any, FakeBotApi]]:
    bot_api = FakeBotApi(TOKEN).start()
    bot_secret = session.client("secretsmanager", region_name=REGION).create_secret(
        Name="cairn-telegram-bot",
        SecretString=json.dumps({"bot_token": TOKEN, "webhook_secret": SECRET}),
    )
    s3 = session.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="cairn-persona")
    for name, text in PERSONA.items():
        s3.put_object(Bucket="cairn-persona", Key=name, Body=text.encode())
    for name, value in {
        "CAIRN_TELEGRAM_SECRET_ARN": bot_secret["ARN"],
        "CAIRN_TELEGRAM_MODEL_ID": CHAT_MODEL,
        "CAIRN_TELEGRAM_PERSONA_BUCKET": "cairn-persona",
        "CAIRN_TELEGRAM_BOT_API_URL": bot_api.url,
    }.items():
        monkeypatch.setenv(name, value)
    from functions.telegram import wiring as telegram_wiring

    telegram_wiring.configure()  # nothing injected: the stack's provider answers
    try:
        yield importlib.import_module("functions.telegram.handler").lambda_handler, bot_api
    finally:
        telegram_wiring.configure()
        bot_api.stop()


def test_the_telegram_bot_answers_through_the_model_server_with_the_secret_key(
    telegram: tuple[Any, FakeBotApi],
    server: ModelServer,
    clock: FixedClock,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    handler, bot_api = telegram
    clock.set(datetime(2026, 1, 1, 8, 0, tzinfo=UTC))
    server.reply(200, _completion("Hi! I'm Pip. What can I get you?"))
    server.reply(200, _completion("Lovely to meet you, Ada."))
    # Everything at INFO (botocore's DEBUG wire log prints response bodies, secrets included:
    # a deployed function logs at INFO), cairn's own loggers at DEBUG.
    with caplog.at_level(logging.INFO), caplog.at_level(logging.DEBUG, logger="cairn"):
        for name in ("day1-01-start", "day1-02-name"):
            assert handler(delivery(name), LambdaContext())["statusCode"] == 200
            clock.advance(seconds=90)

    assert [m.text for m in bot_api.sent] == [
        "Hi! I'm Pip. What can I get you?",
        "Lovely to meet you, Ada.",
    ]
    assert server.paths == ["/v1/chat/completions"] * 2
    assert [r["model"] for r in server.requests] == [CHAT_MODEL] * 2
    assert all(h.get("Authorization") == f"Bearer {API_KEY}" for h in server.headers)
    system = server.requests[0]["messages"][0]
    assert system["role"] == "system"
    assert PERSONA["SOUL.md"] in system["content"]
    printed = capsys.readouterr()
    assert API_KEY not in caplog.text + printed.out + printed.err


def test_extraction_asks_the_model_server_with_the_key_read_once_per_container(
    provider: str, server: ModelServer, session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cairn.llm.openai_compat import OpenAICompatibleModel
    from functions._common import wiring

    model = wiring.model()
    assert isinstance(model, OpenAICompatibleModel)
    assert model.model == "llama3.2"
    server.reply(200, _completion('{"answer": "ok"}'))
    model.complete(
        ModelRequest(messages=(ModelMessage(role="user", text="hello"),), max_output_tokens=16)
    )
    assert server.headers[-1]["Authorization"] == f"Bearer {API_KEY}"
    # Read at the cold start only: a rotated secret reaches the next container, not this one.
    session.client("secretsmanager", region_name=REGION).put_secret_value(
        SecretId=provider, SecretString="sk-rotated"
    )
    assert wiring.model_api_key() == API_KEY
    assert API_KEY not in repr(model)


def test_an_unreadable_or_empty_key_is_a_configuration_error_that_names_the_setting(
    provider: str, session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from functions._common import wiring

    arn = provider.rsplit(":", 1)[0] + ":missing-key-AbCdEf"
    monkeypatch.setenv("CAIRN_MODEL_API_KEY_SECRET", arn)
    wiring.reset()
    with pytest.raises(ConfigurationError, match="-c modelApiKeySecret"):
        wiring.model()
    empty = session.client("secretsmanager", region_name=REGION).create_secret(
        Name="empty-key", SecretString=" "
    )
    monkeypatch.setenv("CAIRN_MODEL_API_KEY_SECRET", empty["ARN"])
    wiring.reset()
    with pytest.raises(ConfigurationError, match="holds no API key"):
        wiring.model()
