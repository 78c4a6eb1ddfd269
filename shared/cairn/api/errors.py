"""The one mapping of failures to AgentCore's wire errors: status, ``x-amzn-ErrorType``, body.

botocore reads the error code from the ``x-amzn-ErrorType`` header and the message from the
body's ``message`` (reference §1), then raises the client's typed exception, e.g.
``client.exceptions.ResourceNotFoundException``. Statuses and names follow the service models:

    ApiError (raised by the API layer itself)       as constructed
    MemoryNameTakenError                            400 ValidationException, reason ResourceConflict
    InvalidInputError (InvalidCursorError, ...)     400 ValidationException, FieldValidationFailed
    pydantic ValidationError                        400 ValidationException, FieldValidationFailed
    NotFoundError                                   404 ResourceNotFoundException
    ConflictError                                   409 ConflictException
    StoreUnavailableError                           429 ThrottledException (botocore retries it)
    any other CairnError, any other exception       500 ServiceException

``create_or_get_memory`` in the AgentCore SDK detects a taken name by a ValidationException
whose message contains "already exists", so that message must keep those words. Messages never
echo request values: they may be memory content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from cairn.errors import (
    CairnError,
    ConflictError,
    InvalidCursorError,
    InvalidInputError,
    MemoryNameTakenError,
    NotFoundError,
    StoreUnavailableError,
)

VALIDATION = "ValidationException"
CANNOT_PARSE = "CannotParse"
FIELD_VALIDATION_FAILED = "FieldValidationFailed"
IDEMPOTENT_MISMATCH = "IdempotentParameterMismatchException"
RESOURCE_CONFLICT = "ResourceConflict"


@dataclass(frozen=True)
class FieldProblem:
    name: str
    message: str


@dataclass
class ApiError(Exception):
    """A failure already in wire terms: HTTP status, AgentCore error type, message."""

    status: int
    error_type: str
    message: str
    reason: str | None = None
    fields: tuple[FieldProblem, ...] = field(default=())

    def __post_init__(self) -> None:
        super().__init__(self.message)

    @classmethod
    def validation(
        cls,
        message: str,
        *,
        reason: str = FIELD_VALIDATION_FAILED,
        field: str | None = None,
        fields: tuple[FieldProblem, ...] = (),
    ) -> ApiError:
        found = fields or ((FieldProblem(field, message),) if field else ())
        return cls(400, VALIDATION, message, reason=reason, fields=found)

    @classmethod
    def not_found(cls, message: str) -> ApiError:
        return cls(404, "ResourceNotFoundException", message)

    @classmethod
    def conflict(cls, message: str) -> ApiError:
        return cls(409, "ConflictException", message)

    @classmethod
    def access_denied(cls, message: str, error_type: str = "AccessDeniedException") -> ApiError:
        return cls(403, error_type, message)

    @classmethod
    def unknown_operation(cls, method: str) -> ApiError:
        return cls(
            404,
            "UnknownOperationException",
            f"no AgentCore memory operation is served at this path for {method}; check the "
            "endpoint URL (AWS_ENDPOINT_URL_BEDROCK_AGENTCORE / ..._CONTROL)",
        )

    @classmethod
    def service(cls, request_id: str) -> ApiError:
        return cls(
            500,
            "ServiceException",
            f"internal error while serving request {request_id}; retry (a write with a "
            "clientToken is not repeated), and report it if it persists",
        )

    def body(self) -> dict[str, Any]:
        """The JSON body: ``message``, plus ``reason`` and ``fieldList`` for validation."""
        payload: dict[str, Any] = {"message": self.message}
        if self.reason is not None:
            payload["reason"] = self.reason
        if self.fields:
            payload["fieldList"] = [{"name": f.name, "message": f.message} for f in self.fields]
        return payload

    def encode(self) -> bytes:
        return json.dumps(self.body(), ensure_ascii=False).encode("utf-8")


def from_validation_error(error: ValidationError, *, prefix: str = "") -> ApiError:
    """A ValidationException naming each invalid field and rule, never the value."""
    problems = []
    for problem in error.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in problem["loc"]) or "(body)"
        reason = problem["msg"].removeprefix("Value error, ")
        problems.append(FieldProblem(f"{prefix}{where}", reason))
    summary = "; ".join(f"{p.name}: {p.message}" for p in problems[:5])
    return ApiError.validation(f"invalid request: {summary}", fields=tuple(problems))


def from_cairn_error(error: CairnError, request_id: str) -> ApiError:
    """The wire error for a cairn error, by class (never by message)."""
    if isinstance(error, MemoryNameTakenError):
        return ApiError.validation(error.message, reason=RESOURCE_CONFLICT)
    if isinstance(error, InvalidCursorError):
        return ApiError.validation(error.message, field="nextToken")
    if isinstance(error, InvalidInputError):
        return ApiError.validation(error.message)
    if isinstance(error, NotFoundError):
        return ApiError.not_found(error.message)
    if isinstance(error, ConflictError):
        return ApiError.conflict(error.message)
    if isinstance(error, StoreUnavailableError):
        return ApiError(429, "ThrottledException", error.message)
    return ApiError.service(request_id)


def wire_error(error: Exception, request_id: str) -> ApiError:
    """Any exception as the ApiError to answer with; unexpected ones become ServiceException."""
    if isinstance(error, ApiError):
        return error
    if isinstance(error, CairnError):
        return from_cairn_error(error, request_id)
    if isinstance(error, ValidationError):
        return from_validation_error(error)
    return ApiError.service(request_id)
