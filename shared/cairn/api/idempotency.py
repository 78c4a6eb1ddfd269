"""``clientToken``: a retried write is answered with what the first one produced, not repeated.

botocore fills every idempotency token with a fresh UUID when the caller leaves it out, and
reuses it when it retries (reference §1). The first request with a token claims it; a retry
with the same token and the same parameters gets the original answer; the same token with
other parameters is refused (ValidationException, reason IdempotentParameterMismatchException)
and changes nothing. A token is scoped to its memory and operation and kept for 24 hours.

Which parameters identify a retry is the operation's choice: every one but the token, less the
ones a client re-stamps on each attempt. CreateEvent leaves out ``eventTimestamp``: the
bedrock-agentcore SDK's Strands memory store (``AgentCoreEventSender``) re-sends a batch with
the same deterministic token and a fresh ``datetime.now()`` timestamp, and counts on the
service to deduplicate it (its integration test ``test_write_idempotency_batching_and_recall``
re-fires one batch and expects no error), so the retry gets the first event, timestamp
included.

Claims hold digests and a content-free reference, never request content: an operation whose
answer carries memory content (CreateEvent's event) keeps only ids and re-reads the answer.
An in-progress claim older than a minute is taken to belong to a crashed request.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from cairn.api.context import ApiContext
from cairn.api.errors import IDEMPOTENT_MISMATCH, ApiError

IN_PROGRESS_FOR = timedelta(minutes=1)
KEPT_FOR = timedelta(hours=24)
CONTROL_SCOPE = "control"
TOKEN = "clientToken"  # noqa: S105  # the member name, not a secret


@dataclass(frozen=True)
class Outcome:
    """What a write answered, and the content-free reference its claim keeps for replays."""

    response: dict[str, Any]
    reference: dict[str, Any]


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def claim_key(scope: str, operation: str, token: str) -> str:
    """The claim's key: a digest of where the token was used and the token itself."""
    return _digest(scope, operation, token)


def fingerprint(params: dict[str, Any], not_identifying: frozenset[str] = frozenset()) -> str:
    """A digest of the request's parameters, the token and ``not_identifying`` left out."""
    material = {
        key: value for key, value in params.items() if key != TOKEN and key not in not_identifying
    }
    return _digest(json.dumps(material, sort_keys=True, separators=(",", ":"), default=str))


def append_key(
    scope: str, operation: str, params: dict[str, Any], not_identifying: frozenset[str]
) -> str | None:
    """The idempotency key an append made by this request passes to the store: the same for
    every retry of the request, whatever became of its claim; ``None`` without a token.

    The claim alone cannot stop a retry from appending again when an outage hid whether the
    first append landed (the claim is released on the error, issue 14); the store can, by
    refusing a second event under this key (``EventStore.append``)."""
    token = params.get(TOKEN)
    if token is None:
        return None
    return _digest(claim_key(scope, operation, str(token)), fingerprint(params, not_identifying))


def run_once(
    ctx: ApiContext,
    *,
    scope: str,
    operation: str,
    params: dict[str, Any],
    execute: Callable[[], Outcome],
    replay: Callable[[dict[str, Any]], dict[str, Any]],
    not_identifying: frozenset[str] = frozenset(),
    keyed: bool = False,
) -> dict[str, Any]:
    """Run ``execute`` unless ``params[clientToken]`` already ran; return the response.

    A request is a retry of the first when every parameter but ``not_identifying`` is equal.
    ``keyed``: ``execute`` writes under ``append_key``, so it is idempotent by itself and the
    claim need not be durable of its own (SQLite: one fsync per CreateEvent, the append's,
    instead of three; a claim lost to a power failure re-runs ``execute``, which returns the
    event it stored). The claim still answers a retry while the request runs, and refuses a
    reused token with other parameters.
    """
    token = params.get(TOKEN)
    if token is None:
        return execute().response
    if ctx.principal is not None:
        # Each principal's tokens are its own: another's retry runs, and is checked, anew.
        scope = f"{scope}|principal:{ctx.principal.name}"
    key = claim_key(scope, operation, str(token))
    request_digest = fingerprint(params, not_identifying)
    now = ctx.clock.now()
    durable = not keyed
    existing = ctx.idempotency.claim(
        key, request_digest, now=now, expires_at=now + IN_PROGRESS_FOR, durable=durable
    )
    if existing is not None:
        if existing.fingerprint != request_digest:
            raise ApiError.validation(
                "this clientToken was already used with different parameters; use a new "
                "token for a different request",
                reason=IDEMPOTENT_MISMATCH,
                field=TOKEN,
            )
        if existing.outcome is None:
            raise ApiError.conflict(
                "a request with this clientToken is still in progress; retry in a moment"
            )
        return replay(existing.outcome)
    try:
        outcome = execute()
    except BaseException:
        ctx.idempotency.release(key)
        raise
    ctx.idempotency.complete(
        key, outcome.reference, expires_at=ctx.clock.now() + KEPT_FOR, durable=durable
    )
    return outcome.response


def as_stored(response: dict[str, Any]) -> Outcome:
    """An outcome whose response carries no memory content, kept whole for replays."""
    return Outcome(response=response, reference=response)


def replay_stored(reference: dict[str, Any]) -> dict[str, Any]:
    return reference
