"""The router as an ASGI app: admission, request limits and JSON errors for ``cairn serve``.

What a request meets before the router (``ServeLimits`` holds every bound):

- past ``concurrency`` admitted requests (``workers`` running + ``queued`` waiting), a 429
  ``ThrottledException`` with ``Retry-After`` at once, before the body is read: latency stays
  bounded and botocore backs off and retries;
- a ``Content-Length`` over ``MAX_BODY_BYTES``: 413; a body that is not JSON by its
  ``Content-Type``: 415; a body not complete within ``request_seconds``: 408. Each is a JSON
  error (``message``, ``x-amzn-ErrorType``) on a closed connection, and nothing is executed;
- a client that goes away before its body is complete: nothing is executed, nothing answered.

Admitted requests run on a pool of ``workers`` threads (the stores are synchronous); the event
loop only parses and writes, so idle keep-alive connections cost no thread.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from cairn.api.errors import ApiError
from cairn.api.router import MAX_BODY_BYTES, Api, ApiRequest, ApiResponse

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

# Media types a body may have: botocore's rest-json clients send application/json.
JSON_MEDIA_TYPES = frozenset(
    {"application/json", "application/x-amz-json-1.0", "application/x-amz-json-1.1"}
)
THROTTLED = "ThrottledException"


@dataclass(frozen=True)
class ServeLimits:
    """The bounds of ``cairn serve`` (docs/reliability.md states the load they were measured at).

    ``workers`` threads run requests; up to ``queued`` more wait for one; any request beyond
    ``workers + queued`` is refused with 429 and ``Retry-After: retry_after_seconds``. A
    connection idle for ``idle_seconds`` (before its first request, or between two) is closed;
    a request's head and body must arrive within ``request_seconds``. ``max_connections``
    open connections at most (the next ones are answered 429 and closed); ``backlog`` is the
    listen queue.
    """

    workers: int = 8
    queued: int = 56
    max_connections: int = 512
    idle_seconds: float = 20.0
    request_seconds: float = 30.0
    retry_after_seconds: int = 1
    backlog: int = 1024

    @property
    def concurrency(self) -> int:
        return self.workers + self.queued


def error_response(error: ApiError, **headers: str) -> ApiResponse:
    """``error`` as the router answers errors: JSON body, ``x-amzn-ErrorType``."""
    return ApiResponse(
        status=error.status,
        headers={
            "Content-Type": "application/json",
            "x-amzn-RequestId": str(uuid.uuid4()),
            "x-amzn-ErrorType": error.error_type,
            **headers,
        },
        body=error.encode(),
    )


def over_capacity(limits: ServeLimits) -> ApiResponse:
    """The 429 a request gets past the stated concurrency (or connection count)."""
    error = ApiError(
        429, THROTTLED, "cairn serve is at capacity; retry after the Retry-After seconds"
    )
    return error_response(
        error, **{"Retry-After": str(limits.retry_after_seconds), "Connection": "close"}
    )


def _refusal(headers: dict[str, str]) -> ApiResponse | None:
    """The answer to a request refused by its head alone, else ``None``."""
    length = int(headers.get("content-length") or 0)  # h11 has validated it already
    if length > MAX_BODY_BYTES:
        message = f"the request body is larger than {MAX_BODY_BYTES} bytes; send less at once"
        return error_response(ApiError(413, "ValidationException", message), Connection="close")
    has_body = length > 0 or "chunked" in headers.get("transfer-encoding", "").lower()
    media_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if has_body and media_type not in JSON_MEDIA_TYPES:
        message = "the request body must be JSON: send it with Content-Type: application/json"
        return error_response(
            ApiError(415, "UnsupportedMediaTypeException", message), Connection="close"
        )
    return None


class ApiApp:
    """The ASGI 3 app serving ``api`` within ``limits``; ``close`` stops its worker threads."""

    def __init__(self, api: Api, limits: ServeLimits) -> None:
        self.limits = limits
        self._api = api
        self._pool = ThreadPoolExecutor(limits.workers, thread_name_prefix="cairn-api")
        self._admitted = 0  # touched only on the event loop's thread

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if self._admitted >= self.limits.concurrency:
            await send_response(send, over_capacity(self.limits))
            return
        self._admitted += 1
        try:
            response = await self._answer(scope, receive)
        finally:
            self._admitted -= 1
        if response is not None:
            await send_response(send, response)

    async def _answer(self, scope: Scope, receive: Receive) -> ApiResponse | None:
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            headers[key] = f"{headers[key]},{text}" if key in headers else text
        refused = _refusal(headers)
        if refused is not None:
            return refused
        try:
            async with asyncio.timeout(self.limits.request_seconds):
                body = await _body(receive)
        except TimeoutError:
            message = f"the request body did not arrive within {self.limits.request_seconds:g} s"
            return error_response(
                ApiError(408, "RequestTimeoutException", message), Connection="close"
            )
        except ApiError as error:
            return error_response(error, Connection="close")
        if body is None:
            return None  # the client went away mid-body: nothing runs
        request = ApiRequest(
            scope["method"],
            scope["raw_path"].decode("latin-1"),
            scope["query_string"].decode("latin-1"),
            headers,
            body,
        )
        loop = asyncio.get_running_loop()
        response = await loop.run_in_executor(self._pool, self._api.handle, request)
        if response.status == 429 and "Retry-After" not in response.headers:
            retry = {"Retry-After": str(self.limits.retry_after_seconds)}
            response = ApiResponse(response.status, {**response.headers, **retry}, response.body)
        return response


async def _body(receive: Receive) -> bytes | None:
    """The whole body; ``None`` if the client disconnected first; 413 past the limit."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise ApiError(413, "ValidationException", "the request body is too large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def send_response(send: Send, response: ApiResponse) -> None:
    headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()]
    headers.append((b"content-length", str(len(response.body)).encode("ascii")))
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body, "more_body": False})
