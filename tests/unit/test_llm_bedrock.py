"""The Bedrock Converse provider: request and response shapes checked by botocore's Stubber against
the real service model, faults a fake cannot express (throttling, model timeouts), and a real read
timeout against a loopback server that never answers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from cairn.answers.extraction import ExtractionAnswer
from cairn.errors import (
    ConfigurationError,
    InvalidModelOutputError,
    ModelRejectedError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from cairn.llm.bedrock import BedrockModel, bedrock_runtime_client
from cairn.model_request import (
    ModelMessage,
    ModelRequest,
    OutputSchema,
    StopReason,
    schema_instruction,
)
from tests.unit.model_server import model_server

MODEL_ID = "anthropic.claude-3-5-haiku-20241022-v1:0"
OUTPUT = OutputSchema.of(ExtractionAnswer, "cairn_extraction", "Memories worth keeping.")
CANDIDATES = {
    "candidates": [
        {
            "content": "The user is allergic to peanuts.",
            "category": "fact",
            "confidence": 0.95,
            "evidence": [3],
        }
    ]
}


def _session() -> Any:
    # Static, made-up credentials: requests are signed but never leave the process or loopback.
    return boto3.session.Session(
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",  # noqa: S106 - a fake for a stubbed client
        region_name="us-east-1",
    )


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = bedrock_runtime_client(region="us-east-1", session=_session())
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _request(**overrides: object) -> ModelRequest:
    values: dict[str, object] = {
        "system": "Extract memories.",
        "messages": (ModelMessage(role="user", text='{"messages": []}'),),
        "output": OUTPUT,
        "max_output_tokens": 1024,
        "timeout_seconds": 60.0,
    }
    values.update(overrides)
    return ModelRequest.model_validate(values)


def _tool_answer(answer: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    # Recorded shape of a Claude 3.5 Haiku Converse answer through a forced tool.
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                            "name": "cairn_extraction",
                            "input": answer,
                        }
                    }
                ],
            }
        },
        "stopReason": stop,
        "usage": {"inputTokens": 812, "outputTokens": 96, "totalTokens": 908},
        "metrics": {"latencyMs": 1843},
    }


def test_structured_output_is_a_forced_tool_whose_input_is_the_answer(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    expected = {
        "modelId": MODEL_ID,
        "messages": [{"role": "user", "content": [{"text": '{"messages": []}'}]}],
        "system": [{"text": "Extract memories."}],
        "inferenceConfig": {"maxTokens": 1024, "temperature": 0.0},
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "cairn_extraction",
                        "description": "Memories worth keeping.",
                        "inputSchema": {"json": OUTPUT.json_schema},
                    }
                }
            ],
            "toolChoice": {"tool": {"name": "cairn_extraction"}},
        },
    }
    stubber.add_response("converse", _tool_answer(CANDIDATES), expected)

    response = BedrockModel(client, MODEL_ID).complete(_request())

    assert json.loads(response.text) == CANDIDATES
    assert (response.usage.calls, response.usage.input_tokens, response.usage.output_tokens) == (
        1,
        812,
        96,
    )
    assert response.latency_ms == 1843
    assert response.stop_reason is StopReason.END
    assert response.model_id == MODEL_ID


def test_native_json_schema_mode_uses_output_config(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    answer = {
        "output": {"message": {"role": "assistant", "content": [{"text": '{"candidates": []}'}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 700, "outputTokens": 8, "totalTokens": 708},
        "metrics": {"latencyMs": 402},
    }
    expected = {
        "modelId": MODEL_ID,
        "messages": [{"role": "user", "content": [{"text": '{"messages": []}'}]}],
        "system": [{"text": "Extract memories."}],
        "inferenceConfig": {"maxTokens": 1024, "temperature": 0.0},
        "outputConfig": {
            "textFormat": {
                "type": "json_schema",
                "structure": {
                    "jsonSchema": {
                        "schema": json.dumps(OUTPUT.json_schema),
                        "name": "cairn_extraction",
                        "description": "Memories worth keeping.",
                    }
                },
            }
        },
    }
    stubber.add_response("converse", answer, expected)
    response = BedrockModel(client, MODEL_ID, structured="json_schema").complete(_request())
    assert response.text == '{"candidates": []}'


def test_prompt_mode_appends_the_schema_to_the_system_prompt(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    answer = {
        "output": {"message": {"role": "assistant", "content": [{"text": '{"candidates": []}'}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 900, "outputTokens": 8, "totalTokens": 908},
        "metrics": {"latencyMs": 350},
    }
    expected = {
        "modelId": "meta.llama3-1-8b-instruct-v1:0",
        "messages": [{"role": "user", "content": [{"text": '{"messages": []}'}]}],
        "system": [{"text": f"Extract memories.\n\n{schema_instruction(OUTPUT)}"}],
        "inferenceConfig": {"maxTokens": 1024, "temperature": 0.0},
    }
    stubber.add_response("converse", answer, expected)
    model = BedrockModel(client, "meta.llama3-1-8b-instruct-v1:0", structured="prompt")
    assert model.complete(_request()).text == '{"candidates": []}'


@pytest.mark.parametrize(
    ("code", "error", "retryable"),
    [
        ("ThrottlingException", ModelUnavailableError, True),
        ("ServiceUnavailableException", ModelUnavailableError, True),
        ("ModelNotReadyException", ModelUnavailableError, True),
        ("ModelTimeoutException", ModelTimeoutError, True),
        ("AccessDeniedException", ModelRejectedError, False),
        ("ValidationException", ModelRejectedError, False),
        ("ResourceNotFoundException", ModelRejectedError, False),
    ],
)
def test_service_errors_are_translated_by_code(
    stubbed: tuple[Any, Stubber], code: str, error: type[Exception], retryable: bool
) -> None:
    client, stubber = stubbed
    stubber.add_client_error("converse", service_error_code=code, service_message="nope")
    with pytest.raises(error) as raised:
        BedrockModel(client, MODEL_ID).complete(_request())
    assert getattr(raised.value, "retryable", None) is retryable


def test_prose_instead_of_the_forced_tool_is_invalid_output(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    prose = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Sure! Here it is."}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 800, "outputTokens": 6, "totalTokens": 806},
        "metrics": {"latencyMs": 300},
    }
    stubber.add_response("converse", prose)
    with pytest.raises(InvalidModelOutputError):
        BedrockModel(client, MODEL_ID).complete(_request())


def test_an_answer_cut_off_at_max_tokens_is_reported_not_hidden(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    cut = {
        "output": {"message": {"role": "assistant", "content": []}},
        "stopReason": "max_tokens",
        "usage": {"inputTokens": 800, "outputTokens": 1024, "totalTokens": 1824},
        "metrics": {"latencyMs": 9000},
    }
    stubber.add_response("converse", cut)
    response = BedrockModel(client, MODEL_ID).complete(_request())
    assert response.stop_reason is StopReason.MAX_TOKENS
    assert response.usage.output_tokens == 1024


def test_a_client_that_would_wait_longer_than_the_call_allows_is_refused() -> None:
    client = bedrock_runtime_client(region="us-east-1", session=_session(), timeout_seconds=120)
    with pytest.raises(ConfigurationError):
        BedrockModel(client, MODEL_ID).complete(_request(timeout_seconds=30))


def test_a_model_that_does_not_answer_in_time_is_a_retryable_timeout() -> None:
    with model_server() as server:
        server.stall()
        client = bedrock_runtime_client(
            region="us-east-1", session=_session(), timeout_seconds=0.3, endpoint_url=server.url
        )
        with pytest.raises(ModelTimeoutError) as raised:
            BedrockModel(client, MODEL_ID).complete(_request(timeout_seconds=0.3))
    assert raised.value.retryable
    assert len(server.requests) == 1  # botocore's retries are off: one call, one bound
