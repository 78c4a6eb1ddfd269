"""API Gateway proxy events <-> the router's ``ApiRequest`` / ``ApiResponse``.

HTTP APIs (payload format 2.0) hand the Lambda the path exactly as received (``rawPath``), so
an actor id's ``%2F`` reaches the router intact; that is the format to deploy with (a greedy
``{proxy+}`` route, IAM authorisation). ``rawPath`` carries the stage name unless the stage
is ``$default``; it is taken off here. REST APIs (format 1.0) give only ``path``, which API
Gateway may already have percent-decoded (reference §4: unverified), so percent-encoded slashes
are not guaranteed to survive that format.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import urlencode

from cairn.api.errors import ApiError
from cairn.api.router import Api, ApiRequest, ApiResponse
from cairn.errors import InvalidInputError


def _body(event: dict[str, Any]) -> bytes:
    body = event.get("body") or ""
    if not event.get("isBase64Encoded"):
        return str(body).encode("utf-8")
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInputError("the proxy event's base64 body does not decode") from exc


def _v2_path(event: dict[str, Any]) -> str:
    path = str(event.get("rawPath") or "/")
    stage = (event.get("requestContext") or {}).get("stage")
    if stage and stage != "$default" and path.startswith(f"/{stage}/"):
        path = path[len(stage) + 1 :]
    return path


def caller_arn(event: dict[str, Any]) -> str | None:
    """The IAM caller API Gateway authenticated (HTTP API, IAM authoriser): the request
    context's ``authorizer.iam.userArn`` (REST APIs: ``identity.userArn``); None without one."""
    context = event.get("requestContext") or {}
    iam = (context.get("authorizer") or {}).get("iam") or {}
    arn = iam.get("userArn") or (context.get("identity") or {}).get("userArn")
    return str(arn) if arn else None


def request_from_proxy_event(event: dict[str, Any]) -> ApiRequest:
    """The request an API Gateway proxy event (payload format 2.0 or 1.0) carries."""
    headers = {str(k): str(v) for k, v in (event.get("headers") or {}).items()}
    if event.get("version") == "2.0":
        method = event["requestContext"]["http"]["method"]
        return ApiRequest(
            method,
            _v2_path(event),
            event.get("rawQueryString") or "",
            headers,
            _body(event),
            caller_arn=caller_arn(event),
        )
    multi = event.get("multiValueQueryStringParameters") or {}
    single = event.get("queryStringParameters") or {}
    pairs = [(k, v) for k, values in multi.items() for v in values] or list(single.items())
    return ApiRequest(
        event["httpMethod"],
        event.get("path") or "/",
        urlencode(pairs),
        headers,
        _body(event),
        caller_arn=caller_arn(event),
    )


def proxy_response(response: ApiResponse) -> dict[str, Any]:
    """The proxy integration's answer for a router response (JSON text, never base64)."""
    return {
        "statusCode": response.status,
        "headers": dict(response.headers),
        "body": response.body.decode("utf-8"),
        "isBase64Encoded": False,
    }


def handle_proxy_event(api: Api, event: dict[str, Any]) -> dict[str, Any]:
    """The proxy response to one API Gateway event; a malformed event is answered with 400."""
    try:
        request = request_from_proxy_event(event)
    except (InvalidInputError, KeyError, TypeError, AttributeError):
        error = ApiError.validation("the API Gateway event is not a proxy event this API reads")
        return {
            "statusCode": error.status,
            "headers": {"Content-Type": "application/json", "x-amzn-ErrorType": error.error_type},
            "body": error.encode().decode("utf-8"),
            "isBase64Encoded": False,
        }
    return proxy_response(api.handle(request))
