"""Consuming rollouts inside ``apply``'s transaction: read them, then two items each.

``apply`` reads the rollouts it is asked to consume with one BatchGetItem of their ``P#`` and
``C#`` keys (a ``C#`` item alone means consumed already), plans with
``cairn.rollout.consumption.plan_consumption``, and adds, per rollout, a Delete of ``P#``
conditioned on the version it read and a Put of ``C#`` to the same TransactWriteItems as the
record writes.
The Delete's condition closes the race of two passes consuming one rollout: exactly one
transaction commits, the other is cancelled whole (its record writes too) and raises
``ConflictError``.

Budget: a consumed rollout costs two items, so four cost eight. A consolidation pass writes at
most 16 records that are not superseded by a new one (two items each) plus at most 32 snapshot
checks: 72 items at most with its rollouts, under DynamoDB's 100. A batch that would pass 100
(16 supersedes by new records outside a full 32-record snapshot, plus rollouts) is refused with
``InvalidInputError`` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from cairn.models import Scope
from cairn.rollout.consumption import plan_consumption
from cairn.rollout.index import Rollout
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, number, text
from cairn.store.dynamodb.rollout_codec import (
    PENDING_FROM,
    consumption_items,
    decode_rollout,
    rollout_key,
)

_NAMES = {"#d": "d", "#v": "v", "#sk": "sk"}


def consumption(
    db: DynamoDBClient,
    table: str,
    scope: Scope,
    rollout_ids: Sequence[str],
    now: datetime,
    *,
    limit: int,
) -> list[Item]:
    """The transaction items that consume ``rollout_ids`` of ``scope`` at ``now``; raises as
    ``plan_consumption`` does, before anything is written (nothing is read past ``limit``)."""
    if not rollout_ids:
        return []
    found: dict[str, Rollout] = {}
    versions: dict[str, int] = {}
    if len(rollout_ids) <= limit:
        keys = [
            rollout_key(scope, rid, consumed=consumed)
            for rid in dict.fromkeys(rollout_ids)
            for consumed in (False, True)
        ]
        for row in db.batch_get(table, keys, projection="#d, #v, #sk", names=_NAMES):
            rollout = decode_rollout(row)
            if text(row, "sk").startswith(PENDING_FROM):
                found[rollout.rollout_id] = rollout
                versions[rollout.rollout_id] = number(row, "v")
            else:
                found.setdefault(rollout.rollout_id, rollout)
    consumed = plan_consumption(found, rollout_ids, now)
    return [
        item
        for rollout in consumed
        for item in consumption_items(table, rollout, versions[rollout.rollout_id])
    ]
