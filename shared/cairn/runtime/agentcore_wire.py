"""The one boundary where ``bedrock-agentcore`` client errors become cairn errors, plus the
small wire shapes ``AgentCoreSessionStore`` sends.

Errors are read from the AWS error code (and, for a batch row, the HTTP status the row carries),
never from message text. botocore is imported only when a call is made: whoever calls has a
client, hence botocore.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cairn.errors import (
    CairnError,
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    MemoryNotFoundError,
    RecordNotFoundError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from cairn.models import BlobPayload, Conversational, EventInput, JsonPayload, Scope

_BUSY = frozenset(
    {
        "ThrottlingException",
        "ServiceQuotaExceededException",
        "InternalServerException",
        "ServiceException",
        "ServiceUnavailableException",
    }
)
_DENIED = frozenset(
    {"AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException"}
)


def fill(template: str, scope: Scope) -> str:
    """``template`` with ``{actorId}`` filled (see ``check_template``)."""
    check_template(template)
    return template.replace("{actorId}", scope.actor_id)


def check_template(template: str) -> None:
    """Refuse a template without ``{actorId}`` (it could read other actors' records) or with
    any other variable (a session knows only its actor)."""
    if "{actorId}" not in template:
        raise ConfigurationError(
            f"namespace template {template!r} has no {{actorId}}: it would read other actors' "
            "records; give templates such as /facts/{actorId}/"
        )
    if "{" in template.replace("{actorId}", ""):
        raise ConfigurationError(
            f"namespace template {template!r} has a variable other than {{actorId}}; a "
            "session fills only the actor"
        )


def event_payload(turn: EventInput) -> list[dict[str, Any]]:
    """The ``CreateEvent`` payload for ``turn``."""
    payload: list[dict[str, Any]] = []
    for item in turn.payload:
        if isinstance(item, Conversational):
            payload.append(
                {"conversational": {"content": {"text": item.text}, "role": item.role.value}}
            )
        elif isinstance(item, BlobPayload):
            payload.append({"blob": item.blob})
        elif isinstance(item, JsonPayload):
            payload.append({"blob": item.document})
    return payload


def call(method: Callable[..., Any], **params: Any) -> dict[str, Any]:
    """``method(**params)``, its AWS errors raised as cairn errors."""
    from botocore.exceptions import (
        ClientError,
        ConnectionClosedError,
        EndpointConnectionError,
        ParamValidationError,
        ReadTimeoutError,
    )

    try:
        answer: dict[str, Any] = method(**params)
    except ClientError as exc:
        raise _translated(exc.response.get("Error", {}).get("Code", ""), params) from exc
    except ParamValidationError as exc:
        # The client checks the wire model's limits before sending (e.g. memory ids of 12+
        # characters); its report names the parameter, never its value.
        raise InvalidInputError(
            "the memory API would refuse this request: a parameter is outside the wire "
            "model's limits (e.g. memory ids have 12 or more characters)"
        ) from exc
    except ReadTimeoutError as exc:
        raise StoreTimeoutError("the memory endpoint did not answer in time; retry") from exc
    except (EndpointConnectionError, ConnectionClosedError) as exc:
        raise StoreUnavailableError(
            "the memory endpoint is unreachable; check the endpoint URL and retry"
        ) from exc
    return answer


def _translated(code: str, params: dict[str, Any]) -> CairnError:
    if code == "ResourceNotFoundException":
        if "memoryRecordId" in params:
            return RecordNotFoundError(str(params["memoryRecordId"]))
        return MemoryNotFoundError(str(params.get("memoryId")))
    if code in _BUSY:
        return StoreUnavailableError(f"the memory endpoint is busy ({code}); retry later")
    if code == "ConflictException":
        return ConflictError("the memory changed meanwhile; read it again and retry")
    if code in _DENIED:
        return ConfigurationError(
            f"the memory endpoint refused the credentials ({code}); check the client's "
            "credentials and the endpoint's token"
        )
    return InvalidInputError(f"the memory endpoint refused the request ({code or 'unknown'})")


def failure_of(row: dict[str, Any]) -> CairnError:
    """The error a failed batch row reports, from the HTTP status it carries."""
    status = int(row.get("errorCode") or 0)
    record_id = str(row.get("memoryRecordId", ""))
    if status == 404:
        return RecordNotFoundError(record_id)
    if status == 409:
        return ConflictError("the memory changed meanwhile; read it again and retry")
    if status == 429 or status >= 500:
        return StoreUnavailableError("the memory endpoint is busy; retry later")
    return InvalidInputError(f"the memory endpoint refused the write (status {status})")
