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
    ],
)
def test_a_bad_property_is_refused_naming_its_context_key(key: str, value: str) -> None:
    with pytest.raises(SettingsError, match=f"-c {key}"):
        from_context(**{key: value})
