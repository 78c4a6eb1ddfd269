"""The small wire shapes ``AgentCoreSessionStore`` sends and reads, with no botocore in sight.

A ``Call`` makes one client call and raises its transport and service errors as cairn errors;
the botocore one is ``cairn.aws.agentcore_client.call``, injected by ``MemorySession.agentcore``.
A failed batch row is read here, from the HTTP status it carries, never from message text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from cairn.errors import (
    CairnError,
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    RecordNotFoundError,
    StoreUnavailableError,
)
from cairn.models import BlobPayload, Conversational, EventInput, JsonPayload, Scope


class Call(Protocol):
    """Calls ``method(**params)`` and returns its answer; a transport or service failure is
    raised as a cairn error (``StoreUnavailableError`` when busy or unreachable, ...)."""

    def __call__(self, method: Callable[..., Any], /, **params: Any) -> dict[str, Any]: ...


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
