"""``OpenAICompatibleModel``: any server speaking OpenAI's chat completions API.

Ollama (``http://localhost:11434/v1``), vLLM, llama.cpp's ``llama-server`` and hosted OpenAI
all answer ``POST {base_url}/chat/completions``. The standard library's ``http.client`` sends
it: no new dependency.

Structured output: ``response_format`` of type ``json_schema`` (default; Ollama 0.5+, vLLM and
llama-server honour it), or ``json_object`` with the schema appended to the system prompt for
servers that only know JSON mode. The answer is validated by the caller either way.

Bounds: ``max_tokens`` is the request's ``max_output_tokens``. The wall-time bound covers the
whole call: connecting, sending and every read share one deadline, and the response body is
read at most ``max_response_bytes``. Status codes are translated once: 429 and 5xx are
retryable (``ModelUnavailableError``; 408 and 504 ``ModelTimeoutError``), other 4xx are
``ModelRejectedError``. Error bodies are not echoed: they may quote the prompt.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Any, Literal
from urllib.parse import urlsplit

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

JsonMode = Literal["json_schema", "json_object"]

_STOP = {
    "stop": StopReason.END,
    "tool_calls": StopReason.END,
    "length": StopReason.MAX_TOKENS,
    "content_filter": StopReason.REFUSED,
}
_READ_CHUNK = 65_536
DEFAULT_MAX_RESPONSE_BYTES = 4_000_000


class OpenAICompatibleModel:
    """Chat completions from ``model`` at ``base_url`` (e.g. ``http://localhost:11434/v1``)."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        json_mode: JsonMode = "json_schema",
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise ConfigurationError(
                f"the model server URL must be http(s)://host[:port][/path], got {base_url!r}"
            )
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._path = parts.path.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self.model = model
        self.json_mode: JsonMode = json_mode
        self._max_response_bytes = max_response_bytes

    def complete(self, request: ModelRequest) -> ModelResponse:
        started = time.monotonic()
        deadline = started + request.timeout_seconds
        body = json.dumps(chat_body(self.model, request, self.json_mode)).encode("utf-8")
        status, data = self._post(body, deadline, request.timeout_seconds)
        if status != http.client.OK:
            raise status_error(status)
        return self._response(data, started)

    def _post(self, body: bytes, deadline: float, bound: float) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        connection_type = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        connection = connection_type(self._host, self._port, timeout=_remaining(deadline, bound))
        try:
            connection.request("POST", self._path, body=body, headers=headers)
            # Held apart: a response that closes the connection takes the socket from it.
            sock = connection.sock
            _tighten(sock, deadline, bound)
            response = connection.getresponse()
            data = bytearray()
            while chunk := response.read(_READ_CHUNK):
                data += chunk
                if len(data) > self._max_response_bytes:
                    raise InvalidModelOutputError(
                        f"the answer is over {self._max_response_bytes} bytes; lower "
                        "max_output_tokens"
                    )
                _tighten(sock, deadline, bound)
            return response.status, bytes(data)
        except TimeoutError as exc:
            raise _timed_out(bound) from exc
        except (OSError, http.client.HTTPException) as exc:
            raise ModelUnavailableError(
                f"the model server at {self._host} could not be reached ({type(exc).__name__}); "
                "the call can be retried"
            ) from exc
        finally:
            connection.close()

    def _response(self, data: bytes, started: float) -> ModelResponse:
        try:
            document = json.loads(data)
            choice = document["choices"][0]
            text = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise InvalidModelOutputError("the server's reply is not a chat completion") from None
        if not isinstance(text, str):
            raise InvalidModelOutputError("the chat completion has no answer text")
        usage = document.get("usage") or {}
        return ModelResponse(
            text=text,
            usage=ModelUsage(
                calls=1,
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            ),
            model_id=str(document.get("model") or self.model),
            latency_ms=int((time.monotonic() - started) * 1000),
            stop_reason=_STOP.get(choice.get("finish_reason") or "", StopReason.OTHER),
        )


def chat_body(model: str, request: ModelRequest, json_mode: JsonMode) -> dict[str, Any]:
    """The chat completions request body for ``request``."""
    system = request.system
    output = request.output
    if output is not None and json_mode == "json_object":
        system = f"{system}\n\n{schema_instruction(output)}".strip()
    messages = [{"role": "system", "content": system}] if system else []
    messages += [{"role": m.role, "content": m.text} for m in request.messages]
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "max_tokens": request.max_output_tokens,
        "temperature": request.temperature,
        "stream": False,
    }
    if output is not None and json_mode == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": output.name, "schema": output.json_schema, "strict": False},
        }
    elif output is not None:
        body["response_format"] = {"type": "json_object"}
    return body


def status_error(status: int) -> ModelError:
    """The cairn error for a non-200 status (the body is not read into the message)."""
    if status in {http.client.REQUEST_TIMEOUT, http.client.GATEWAY_TIMEOUT}:
        return ModelTimeoutError(f"the model server timed out (HTTP {status}); retry the call")
    if status == http.client.TOO_MANY_REQUESTS or status >= http.client.INTERNAL_SERVER_ERROR:
        return ModelUnavailableError(
            f"the model server is busy or failing (HTTP {status}); the call can be retried"
        )
    return ModelRejectedError(
        f"the model server refused the request (HTTP {status}) and will refuse it again as it "
        "is: check the base URL, the model name, the API key and the size of the input"
    )


def _remaining(deadline: float, bound: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _timed_out(bound)
    return left


def _tighten(sock: socket.socket | None, deadline: float, bound: float) -> None:
    """Give the next socket operation only what is left of the call's time."""
    left = _remaining(deadline, bound)
    if sock is not None and sock.fileno() != -1:  # -1: the response read to its end and closed
        sock.settimeout(left)


def _timed_out(bound: float) -> ModelTimeoutError:
    return ModelTimeoutError(f"the model server did not answer within {bound:g} s; retry the call")
