"""``BedrockModel``: Amazon Bedrock's Converse API through an injected ``bedrock-runtime`` client.

Structured output, three ways (``structured=``):

- ``"tool"`` (default): the schema becomes the input schema of one tool, and ``toolChoice``
  forces the model to call it; the tool's input is the answer. Converse documents forced tool
  choice for Anthropic Claude 3+, Amazon Nova and Mistral Large, the models extraction is
  meant for.
- ``"json_schema"``: Converse's ``outputConfig.textFormat`` (native structured output), for
  the models that support it.
- ``"prompt"``: the schema is appended to the system prompt and the text answer is parsed,
  for any other model.

Whichever way, the answer is validated by the caller (``cairn.llm.structured``), never trusted.

Bounds: ``maxTokens`` is the request's ``max_output_tokens``. botocore has no per-call timeout,
so the wall-time bound is the client's: build it with ``bedrock_runtime_client`` (read timeout =
the bound, no botocore retries, so one call never takes several timeouts); a client whose read
timeout exceeds a request's bound is refused. Errors are translated here, by code, once:
https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    ReadTimeoutError,
)

from cairn.errors import (
    ConfigurationError,
    InvalidModelOutputError,
    ModelError,
    ModelRejectedError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from cairn.model_request import (
    ModelRequest,
    ModelResponse,
    ModelUsage,
    StopReason,
    schema_instruction,
)

StructuredMode = Literal["tool", "json_schema", "prompt"]

_UNAVAILABLE = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelNotReadyException",
        "ModelErrorException",
    }
)
_TIMEOUT = frozenset({"ModelTimeoutException"})
_STOP = {
    "end_turn": StopReason.END,
    "tool_use": StopReason.END,
    "stop_sequence": StopReason.END,
    "max_tokens": StopReason.MAX_TOKENS,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
    "guardrail_intervened": StopReason.REFUSED,
    "content_filtered": StopReason.REFUSED,
}
_CONNECT_TIMEOUT_CAP = 10.0


def bedrock_runtime_client(
    *,
    region: str | None = None,
    timeout_seconds: float = 60.0,
    session: Any = None,
    endpoint_url: str | None = None,
) -> Any:
    """A ``bedrock-runtime`` client whose calls end within ``timeout_seconds`` of reading:
    botocore's own retries are off, because a throttled call is retried by the queue, with its
    backoff, instead of multiplying this call's wall time."""
    import boto3  # the aws extra; only this factory needs it
    from botocore.config import Config

    config = Config(
        connect_timeout=min(_CONNECT_TIMEOUT_CAP, timeout_seconds),
        read_timeout=timeout_seconds,
        retries={"total_max_attempts": 1, "mode": "standard"},
    )
    chosen = session or boto3.session.Session()
    return chosen.client(
        "bedrock-runtime", region_name=region, config=config, endpoint_url=endpoint_url
    )


class BedrockModel:
    """Converse calls to ``model_id`` (a model or inference profile id) through ``client``."""

    def __init__(self, client: Any, model_id: str, *, structured: StructuredMode = "tool") -> None:
        self._client = client
        self.model_id = model_id
        self.structured: StructuredMode = structured

    def complete(self, request: ModelRequest) -> ModelResponse:
        self._check_time_bound(request)
        started = time.monotonic()
        try:
            answer = self._client.converse(
                **converse_params(self.model_id, request, self.structured)
            )
        except ClientError as exc:
            raise translated(exc) from exc
        except (ReadTimeoutError, ConnectTimeoutError) as exc:
            raise ModelTimeoutError(
                f"Bedrock did not answer within {request.timeout_seconds:g} s; the call can be "
                "retried"
            ) from exc
        except BotoCoreError as exc:
            raise ModelUnavailableError(
                f"Bedrock could not be reached ({type(exc).__name__}); the call can be retried"
            ) from exc
        return self._response(answer, request, started)

    def _check_time_bound(self, request: ModelRequest) -> None:
        read_timeout = getattr(getattr(self._client, "meta", None), "config", None)
        read_timeout = getattr(read_timeout, "read_timeout", None)
        if read_timeout is not None and read_timeout > request.timeout_seconds:
            raise ConfigurationError(
                f"the bedrock-runtime client waits {read_timeout:g} s for an answer, longer than "
                f"this call's {request.timeout_seconds:g} s bound; build the client with "
                "cairn.llm.bedrock.bedrock_runtime_client(timeout_seconds=...)"
            )

    def _response(
        self, answer: dict[str, Any], request: ModelRequest, started: float
    ) -> ModelResponse:
        stop = _STOP.get(answer.get("stopReason", ""), StopReason.OTHER)
        blocks = answer.get("output", {}).get("message", {}).get("content", [])
        if self.structured == "tool" and request.output is not None:
            text = _tool_input(blocks, request.output.name, stop)
        else:
            text = "".join(block["text"] for block in blocks if "text" in block)
        usage = answer.get("usage", {})
        measured = int((time.monotonic() - started) * 1000)
        return ModelResponse(
            text=text,
            usage=ModelUsage(
                calls=1,
                input_tokens=usage.get("inputTokens", 0),
                output_tokens=usage.get("outputTokens", 0),
            ),
            model_id=self.model_id,
            latency_ms=answer.get("metrics", {}).get("latencyMs", measured),
            stop_reason=stop,
        )


def converse_params(
    model_id: str, request: ModelRequest, structured: StructuredMode
) -> dict[str, Any]:
    """The Converse request for ``request``, structured output asked for the ``structured`` way."""
    system = request.system
    params: dict[str, Any] = {
        "modelId": model_id,
        "messages": [
            {"role": message.role, "content": [{"text": message.text}]}
            for message in request.messages
        ],
        "inferenceConfig": {
            "maxTokens": request.max_output_tokens,
            "temperature": request.temperature,
        },
    }
    output = request.output
    if output is not None and structured == "tool":
        spec = {
            "name": output.name,
            "description": output.description or "Give the answer.",
            "inputSchema": {"json": output.json_schema},
        }
        params["toolConfig"] = {
            "tools": [{"toolSpec": spec}],
            "toolChoice": {"tool": {"name": output.name}},
        }
    elif output is not None and structured == "json_schema":
        schema = {"schema": json.dumps(output.json_schema), "name": output.name}
        if output.description:
            schema["description"] = output.description
        params["outputConfig"] = {
            "textFormat": {"type": "json_schema", "structure": {"jsonSchema": schema}}
        }
    elif output is not None:
        system = f"{system}\n\n{schema_instruction(output)}".strip()
    if system:
        params["system"] = [{"text": system}]
    return params


def _tool_input(blocks: list[dict[str, Any]], name: str, stop: StopReason) -> str:
    for block in blocks:
        use = block.get("toolUse")
        if use is not None and use.get("name") == name:
            return json.dumps(use.get("input"), ensure_ascii=False)
    if stop is StopReason.END:
        raise InvalidModelOutputError("the model answered in prose instead of calling the tool")
    return ""  # cut off or refused: the stop reason says which


def translated(exc: ClientError) -> ModelError:
    """The cairn error for a Converse ``ClientError``, by its code."""
    code = exc.response.get("Error", {}).get("Code", "")
    if code in _TIMEOUT:
        return ModelTimeoutError("the Bedrock model timed out; the call can be retried")
    if code in _UNAVAILABLE:
        return ModelUnavailableError(f"Bedrock is unavailable ({code}); the call can be retried")
    return ModelRejectedError(
        f"Bedrock refused the request ({code or 'no error code'}) and will refuse it again as "
        "it is: check the model id, that the model is enabled in this region, the role's "
        "bedrock:InvokeModel grant, and the size of the input"
    )
