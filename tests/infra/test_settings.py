"""Stack properties: safe defaults, context strings parsed, bad values refused by name."""

from __future__ import annotations

import pytest

from infra.settings import SettingsError, StackSettings


def from_context(**context: object) -> StackSettings:
    return StackSettings.from_context(context.get)


def test_an_empty_context_gives_the_documented_defaults() -> None:
    settings = from_context()

    assert settings.embedder == "bedrock"
    assert settings.embedding_model_id == "amazon.titan-embed-text-v2:0"
    assert settings.extraction_model_id == "amazon.nova-lite-v1:0"
    assert settings.retention_days == 30
    assert settings.alarm_email is None
    assert settings.encryption == "aws-managed"
    assert settings.max_concurrency is None
    assert settings.metrics is False
    assert settings.lambda_code == "build"


def test_the_telegram_model_defaults_to_the_extraction_model_as_documented() -> None:
    chosen = "us.anthropic.claude-3-5-haiku-20241022-v1:0"

    assert from_context(extractionModelId=chosen).telegram_model == chosen
    assert from_context().telegram_model == "amazon.nova-lite-v1:0"
    assert from_context(extractionModelId=chosen, telegramModelId="x.y").telegram_model == "x.y"


def test_the_cost_and_scale_properties_are_parsed_from_strings() -> None:
    settings = from_context(encryption="customer-key", maxConcurrency="10", metrics="true")

    assert settings.customer_key
    assert settings.max_concurrency == 10
    assert settings.metrics is True


def test_context_strings_from_the_command_line_are_parsed() -> None:
    settings = from_context(
        embedder="onnx",
        extractionModelId="us.anthropic.claude-3-5-haiku-20241022-v1:0",
        retentionDays="7",
        alarmEmail="ops@example.com",
    )

    assert settings.embedder == "onnx"
    assert settings.embedding_model_id == "all-MiniLM-L6-v2-onnx-int8"
    assert settings.extraction_model_id == "us.anthropic.claude-3-5-haiku-20241022-v1:0"
    assert settings.retention_days == 7
    assert settings.alarm_email == "ops@example.com"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("embedder", "openai"),
        ("retentionDays", "0"),
        ("retentionDays", "forever"),
        ("alarmEmail", "not-an-address"),
        ("extractionModelId", "model id with spaces"),
        ("encryption", "none"),
        ("maxConcurrency", "1"),
        ("lambdaCode", "inline"),
    ],
)
def test_a_bad_property_is_refused_naming_its_context_key(key: str, value: str) -> None:
    with pytest.raises(SettingsError, match=f"-c {key}"):
        from_context(**{key: value})
