"""The router: one raw HTTP request in, one response out; no server, no framework.

``Api(context).handle(ApiRequest(...))`` authorises the request, routes it on the raw path,
parses and validates its JSON against the vendored service model, runs the operation and
shapes the answer (status, ``x-amzn-RequestId``, JSON). Every failure becomes an AWS-shaped
error response (``cairn.api.errors``); malformed input is always a 4xx and changes nothing.
``cairn serve`` (``cairn.api.server``) and the API Lambda (``functions/api/handler.py``) are
the two hosts of this one router.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl

from cairn.api.auth import authorize, identify
from cairn.api.context import ApiContext
from cairn.api.errors import CANNOT_PARSE, ApiError, FieldProblem, wire_error
from cairn.api.guard import admit
from cairn.api.operations import HANDLERS
from cairn.api.routes import Match, build_routes, match_route

log = logging.getLogger(__name__)

# Larger than any valid request (100 events' payloads of 100,000 characters each, JSON-escaped).
MAX_BODY_BYTES = 64 * 1024 * 1024
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


@dataclass(frozen=True)
class ApiRequest:
    """An HTTP request as received: the path still percent-encoded, the body as bytes."""

    method: str
    raw_path: str
    query: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    # The caller as the host authenticated it (API Gateway's IAM caller ARN), if it did.
    caller_arn: str | None = None


@dataclass(frozen=True)
class ApiResponse:
    status: int
    headers: dict[str, str]
    body: bytes
    operation: str | None = None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_body(body: bytes) -> dict[str, Any]:
    """The JSON object in ``body`` (``{}`` when empty); ValidationException CannotParse else."""
    if not body.strip():
        return {}
    try:
        parsed = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ApiError.validation(
            "the request body is not valid UTF-8 JSON", reason=CANNOT_PARSE
        ) from None
    if not isinstance(parsed, dict):
        raise ApiError.validation("the request body must be a JSON object", reason=CANNOT_PARSE)
    try:
        # JSON may escape a lone surrogate ("\ud800"), which is no Unicode text: refused here,
        # it could be stored in a blob but never be written back out.
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError.validation(
            "the request body holds an unpaired UTF-16 surrogate escape; send valid Unicode",
            reason=CANNOT_PARSE,
        ) from None
    return parsed


def parse_query(query: str) -> dict[str, str]:
    """Query parameters, percent-decoded; the first of repeated names wins."""
    try:
        pairs = parse_qsl(query, keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise ApiError.validation(
            "the query string is not valid percent-encoded UTF-8", reason=CANNOT_PARSE
        ) from None
    found: dict[str, str] = {}
    for name, value in pairs:
        found.setdefault(name, value)
    return found


def assemble_params(match: Match, query: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    """The operation's input as botocore built it: body members, URI labels, query members."""
    members = match.service.members(match.operation.input_shape)
    params = {
        name: value for name, value in body.items() if "location" not in members.get(name, {})
    }
    for name, spec in members.items():
        location, wire_name = spec.get("location"), spec.get("locationName", name)
        if location == "uri":
            params[name] = match.labels[wire_name]
        elif location == "querystring" and wire_name in query:
            params[name] = query[wire_name]
    return params


def validated_params(match: Match, request: ApiRequest) -> dict[str, Any]:
    body = parse_body(request.body) if request.method in _BODY_METHODS else {}
    params = assemble_params(match, parse_query(request.query), body)
    problems = match.service.validate(match.operation.input_shape, params)
    if problems:
        summary = "; ".join(f"{p.path} {p.message}" for p in problems[:5])
        raise ApiError.validation(
            f"invalid {match.operation.name} request: {summary}",
            fields=tuple(FieldProblem(p.path, p.message) for p in problems),
        )
    return params


def _json(status: int, payload: dict[str, Any], request_id: str, **extra: str) -> ApiResponse:
    body = json.dumps(payload, ensure_ascii=False, allow_nan=False).encode("utf-8")
    headers = {"Content-Type": "application/json", "x-amzn-RequestId": request_id, **extra}
    return ApiResponse(status=status, headers=headers, body=body)


def _log_failure(request_id: str, operation: str | None, exc: Exception) -> None:
    """Where an unexpected failure happened, without its message: it may quote content."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "unknown"
    log.error(
        "request %s (%s) failed: %s at %s",
        request_id,
        operation or "unrouted",
        type(exc).__name__,
        where,
    )


class Api:
    """The AgentCore-compatible API over one ``ApiContext``; ``handle`` never raises."""

    def __init__(self, context: ApiContext) -> None:
        self.context = context
        self._routes = build_routes()

    def handle(self, request: ApiRequest) -> ApiResponse:
        """The response to ``request``: the operation's answer, or an AWS-shaped error."""
        request_id = str(uuid.uuid4())
        started = time.perf_counter()
        operation: str | None = None
        try:
            headers = {name.lower(): value for name, value in request.headers.items()}
            context, principals = self.context, self.context.settings.principals
            if principals is None:
                authorize(headers, context.settings.token)
            else:
                context = replace(
                    context, principal=identify(headers, principals, request.caller_arn)
                )
            if len(request.body) > MAX_BODY_BYTES:
                raise ApiError(413, "ValidationException", "the request body is too large")
            match = match_route(self._routes, request.method.upper(), request.raw_path)
            operation = match.operation.name
            params = validated_params(match, request)
            if context.principal is not None:
                admit(context.principal, operation, params)
            answer = HANDLERS[operation](context, params)
            response = _json(match.operation.success_status, answer, request_id)
        except Exception as exc:  # every failure is answered, never raised to the host
            error = wire_error(exc, request_id)
            if error.status >= 500:
                _log_failure(request_id, operation, exc)
            response = _json(
                error.status, error.body(), request_id, **{"x-amzn-ErrorType": error.error_type}
            )
        log.info(
            "%s %s %.1f ms",
            operation or "unrouted",
            response.status,
            (time.perf_counter() - started) * 1000,
        )
        return ApiResponse(response.status, response.headers, response.body, operation)
