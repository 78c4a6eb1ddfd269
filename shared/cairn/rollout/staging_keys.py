"""Where a staged rollout lives: one key scheme shared by every ``StagingStore`` backend.

A key is ``rollouts/<scope digest>/<rollout id>``. The scope appears only as a truncated
sha256, so keys (which end up in CloudTrail, access logs, inventories and queue messages) never
carry an actor id or a memory id in the clear; the rollout id is system-generated and must match
``ROLLOUT_ID_PATTERN``, which also keeps it a single safe path segment on a filesystem. All of a
scope's payloads share one prefix, which is what makes erasing a scope a prefix delete.
"""

from __future__ import annotations

import hashlib
import json
import re

from cairn.errors import InvalidInputError
from cairn.models import Scope

KEY_PREFIX = "rollouts/"
ROLLOUT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,127}$"
# Staged evidence is bounded well below this (design §6: 32 messages within 32 KB plus an 8 KB
# answer); the cap only stops a runaway producer from parking gigabytes in the bucket.
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024

_ROLLOUT_ID = re.compile(ROLLOUT_ID_PATTERN)


def scope_prefix(scope: Scope) -> str:
    """The key prefix (ending in ``/``) under which every payload of ``scope`` is staged."""
    material = json.dumps([scope.memory_id, scope.actor_id], separators=(",", ":"))
    digest = hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]
    return f"{KEY_PREFIX}{digest}/"


def staging_key(scope: Scope, rollout_id: str) -> str:
    """The key of ``rollout_id`` in ``scope``; ``InvalidInputError`` for a malformed id."""
    if not isinstance(rollout_id, str) or not _ROLLOUT_ID.fullmatch(rollout_id):
        raise InvalidInputError(
            "rollout id must be 1-128 characters of letters, digits, '-' or '_', starting with a "
            "letter or digit; use the id cairn generated for the rollout"
        )
    return scope_prefix(scope) + rollout_id


def check_payload(payload: bytes) -> None:
    """Refuse a payload that is not bytes or is larger than ``MAX_PAYLOAD_BYTES``."""
    if not isinstance(payload, bytes):
        raise InvalidInputError(
            f"a staged payload must be bytes, not {type(payload).__name__}; encode it first"
        )
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise InvalidInputError(
            f"staged payload is {len(payload)} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit; "
            "stage a smaller batch of events"
        )
