"""Consuming rollouts inside an apply, and storing staged evidence: pure checks for every backend.

``RecordStore.apply(..., consume_rollouts=...)`` moves the named rollouts to ``consumed`` in the
same transaction as the record writes; each backend reads the rollouts inside that transaction
and plans the move with ``plan_consumption`` (as record writes go through
``cairn.versioning.plan_writes``). ``RolloutStore.add_staged`` accepts only what
``check_staged_evidence`` lets through.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from cairn.changes import MAX_CONSUMED_ROLLOUTS
from cairn.errors import ConflictError, InvalidInputError, RolloutNotFoundError
from cairn.models import Scope
from cairn.rollout.index import EVIDENCE_ID_PREFIX, Rollout, RolloutState, advance


def check_staged_evidence(scope: Scope, rollout: Rollout) -> None:
    """Raise ``InvalidInputError`` unless ``rollout`` is a staged evidence rollout of ``scope``
    (what ``RolloutStore.add_staged`` accepts)."""
    if rollout.scope != scope:
        raise InvalidInputError(
            f"rollout {rollout.rollout_id!r} belongs to another scope; stage it under its own"
        )
    if rollout.kind != "evidence" or rollout.state is not RolloutState.STAGED:
        raise InvalidInputError(
            f"rollout {rollout.rollout_id!r} is not a staged evidence rollout (id "
            f"{EVIDENCE_ID_PREFIX}..., state staged); extraction rollouts are claimed by the "
            "trigger counters"
        )
    if rollout.staging_key is None:
        raise InvalidInputError(
            f"rollout {rollout.rollout_id!r} has no staging key; stage it first"
        )


def plan_consumption(
    found: Mapping[str, Rollout], rollout_ids: Sequence[str], now: datetime
) -> list[Rollout]:
    """The rollouts ``rollout_ids`` names, each moved to ``consumed`` at ``now``, for a writer
    to store in the same transaction as the changes they produced; ``found`` holds what the
    writer read (absent: not in the scope). Raises before anything is written:
    ``InvalidInputError`` for more than ``MAX_CONSUMED_ROLLOUTS`` or a repeated id,
    ``RolloutNotFoundError`` for one not in the scope, ``ConflictError`` for one consumed
    already (by another writer: re-read and plan again) or never staged."""
    if len(rollout_ids) > MAX_CONSUMED_ROLLOUTS:
        raise InvalidInputError(
            f"{len(rollout_ids)} rollouts consumed by one apply; at most "
            f"{MAX_CONSUMED_ROLLOUTS} are consumed atomically, split the batch"
        )
    if len(set(rollout_ids)) != len(rollout_ids):
        raise InvalidInputError("a rollout is named twice for consumption; name each once")
    consumed: list[Rollout] = []
    for rid in rollout_ids:
        rollout = found.get(rid)
        if rollout is None:
            raise RolloutNotFoundError(rid)
        moved = advance(rollout, RolloutState.CONSUMED, now)
        if moved is None:
            raise ConflictError(
                f"rollout {rid!r} was consumed already; nothing was applied, re-read the "
                "pending rollouts and plan again"
            )
        consumed.append(moved)
    return consumed
