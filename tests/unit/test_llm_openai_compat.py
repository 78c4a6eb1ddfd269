"""The OpenAI-compatible provider, against a tiny chat-completions server of our own on loopback."""

from __future__ import annotations

import socket

import pytest

from cairn.answers.extraction import ExtractionAnswer
from cairn.errors import (
    ConfigurationError,
    InvalidModelOutputError,
    ModelRejectedError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from cairn.llm.openai_compat import OpenAICompatibleModel
from cairn.model_request import ModelMessage, ModelRequest, OutputSchema, StopReason
from tests.unit.model_server import model_server

ANSWER = '{"candidates": []}'


def _request(**overrides: object) -> ModelRequest:
    values: dict[str, object] = {
        "system": "Extract memories.",
        "messages": (ModelMessage(role="user", text='{"messages": []}'),),
        "output": OutputSchema.of(ExtractionAnswer, "cairn_extraction"),
        "max_output_tokens": 512,
        "timeout_seconds": 5.0,
    }
    values.update(overrides)
    return ModelRequest.model_validate(values)


def _completion(content: object, finish: str = "stop") -> dict[str, object]:
    # The shape Ollama 0.5 / vLLM return for a non-streamed chat completion.
    return {
        "id": "chatcmpl-481",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "qwen2.5:7b-instruct",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 412, "completion_tokens": 9, "total_tokens": 421},
    }


def test_a_call_posts_a_bounded_json_schema_request_and_returns_the_answer_with_its_usage() -> None:
    with model_server() as server:
        server.reply(200, _completion(ANSWER))
        model = OpenAICompatibleModel(f"{server.url}/v1", "qwen2.5:7b-instruct", api_key="k-1")
        response = model.complete(_request())

    assert response.text == ANSWER
    assert (response.usage.calls, response.usage.input_tokens, response.usage.output_tokens) == (
        1,
        412,
        9,
    )
    assert response.model_id == "qwen2.5:7b-instruct"
    assert response.stop_reason is StopReason.END
    assert server.paths == ["/v1/chat/completions"]
    assert server.headers[0]["Authorization"] == "Bearer k-1"
    (sent,) = server.requests
    assert sent["model"] == "qwen2.5:7b-instruct"
    assert sent["max_tokens"] == 512
    assert sent["stream"] is False
    assert sent["messages"][0] == {"role": "system", "content": "Extract memories."}
    assert sent["messages"][1]["role"] == "user"
    assert sent["response_format"]["type"] == "json_schema"
    assert sent["response_format"]["json_schema"]["name"] == "cairn_extraction"
    assert "$ref" not in str(sent["response_format"]["json_schema"]["schema"])


def test_json_object_mode_puts_the_schema_in_the_system_prompt_instead() -> None:
    with model_server() as server:
        server.reply(200, _completion(ANSWER))
        model = OpenAICompatibleModel(server.url, "llama3", json_mode="json_object")
        model.complete(_request())
    (sent,) = server.requests
    assert sent["response_format"] == {"type": "json_object"}
    assert "JSON Schema" in sent["messages"][0]["content"]
    assert '"candidates"' in sent["messages"][0]["content"]


def test_an_answer_cut_off_at_the_token_bound_says_so() -> None:
    with model_server() as server:
        server.reply(200, _completion('{"candidates": [', finish="length"))
        response = OpenAICompatibleModel(server.url, "m").complete(_request())
    assert response.stop_reason is StopReason.MAX_TOKENS


def test_a_server_that_does_not_answer_in_time_is_a_retryable_timeout() -> None:
    with model_server() as server:
        server.stall()
        model = OpenAICompatibleModel(server.url, "m")
        with pytest.raises(ModelTimeoutError) as raised:
            model.complete(_request(timeout_seconds=0.3))
    assert raised.value.retryable


@pytest.mark.parametrize(
    ("status", "error", "retryable"),
    [
        (429, ModelUnavailableError, True),
        (503, ModelUnavailableError, True),
        (504, ModelTimeoutError, True),
        (400, ModelRejectedError, False),
        (404, ModelRejectedError, False),
    ],
)
def test_error_statuses_are_translated_by_code_without_echoing_the_body(
    status: int, error: type[Exception], retryable: bool
) -> None:
    with model_server() as server:
        server.reply(status, {"error": {"message": "the user said: my PIN is 1234"}})
        with pytest.raises(error) as raised:
            OpenAICompatibleModel(server.url, "m").complete(_request())
    assert getattr(raised.value, "retryable", None) is retryable
    assert "1234" not in str(raised.value)


def test_a_reply_that_is_not_a_chat_completion_is_invalid_output() -> None:
    with model_server() as server:
        server.reply(200, b"<html>proxy error</html>")
        server.reply(200, _completion(None))
        model = OpenAICompatibleModel(server.url, "m")
        with pytest.raises(InvalidModelOutputError):
            model.complete(_request())
        with pytest.raises(InvalidModelOutputError):
            model.complete(_request())


def test_a_server_that_is_not_listening_is_unavailable_not_a_crash() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ModelUnavailableError):
        OpenAICompatibleModel(f"http://127.0.0.1:{port}/v1", "m").complete(_request())


def test_a_base_url_that_is_not_http_is_refused_when_configured() -> None:
    with pytest.raises(ConfigurationError):
        OpenAICompatibleModel("localhost:11434", "m")
