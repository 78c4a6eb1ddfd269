"""What erase needs on DynamoDB: the scope's erasure count (race 7 of ``writes``,
``cairn.erasure_fence``), the actor markers erasing a whole memory lists (``RA#<memory>``,
sort key = actor id, put by every apply that creates a record, deleted by erase_scope) and the
lazily read histories a record's lineage follows.

The count is one item per scope, ``pk`` = the scope's records partition, ``sk`` =
``ERASURES``, attribute ``n``: added to (never set, never deleted) by erase, erase_scope and a
retracting apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from cairn.errors import SnapshotConflictError
from cairn.models import RecordVersion, Scope, Status
from cairn.ports import EraseReport
from cairn.store.dynamodb.change_feed import commit, erased_entries
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, key, n, number, s, scope_pk, text
from cairn.store.dynamodb.writes import erase_transactions
from cairn.versioning import Write

ERASURES_SK = "ERASURES"
# An erase that keeps losing its head conditions to concurrent applies gives up after this
# many rounds with SnapshotConflictError (retryable; erase is idempotent).
_ERASE_ROUNDS = 3

Histories = dict[str, list[RecordVersion]]


def erase_histories(
    db: DynamoDBClient, table: str, pk: str, read: Callable[[], Histories], at: datetime
) -> EraseReport:
    """Count the erasure (race 7 of ``writes``), then tombstone what ``read`` finds, reading
    again when an apply moved a head meanwhile."""
    count_erasure(db, table, pk)  # before the read
    rounds = 1
    while True:
        histories = read()
        try:
            # Fully erased records are not rewritten (no tombstone, no generation moved).
            remaining = {
                rid: versions
                for rid, versions in histories.items()
                if any(v.status is not Status.ERASED for v in versions)
            }
            for batch in erase_transactions(table, pk, remaining):
                commit(db, table, pk, partial(_with, batch.items), erased_entries(batch.heads), at)
        except SnapshotConflictError:
            if rounds == _ERASE_ROUNDS:
                raise
            rounds += 1
            continue  # an apply moved a head meanwhile: read again, tombstone again
        count = sum(len(versions) for versions in histories.values())
        return EraseReport(record_ids=tuple(histories), versions=count)


def _with(tombstones: list[Item], feed: Sequence[Item]) -> list[Item]:
    return [*tombstones, *feed]


def actors_pk(memory_id: str) -> str:
    return f"RA#{memory_id}"


def fence_items(
    table: str, scope: Scope, writes: Sequence[Write], expected: int | None, bump: bool
) -> list[Item]:
    """The extra items of an apply: the erasure fence (race 7), and the actor marker when the
    apply creates a record (an idempotent Put: the actor holds records)."""
    items: list[Item] = []
    fence = fence_item(table, scope_pk(scope), expected, bump=bump)
    if fence is not None:
        items.append(fence)
    if any(write.expected_head is None for write in writes):
        marker = key(actors_pk(scope.memory_id), scope.actor_id)
        items.append({"Put": {"TableName": table, "Item": marker}})
    return items


def read_actors(db: DynamoDBClient, table: str, memory_id: str) -> tuple[str, ...]:
    """The actors with a marker in ``memory_id``, sorted (one strongly consistent Query)."""
    found = db.query(
        TableName=table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": s(actors_pk(memory_id))},
        ProjectionExpression="sk",
        ConsistentRead=True,
    )
    return tuple(sorted(text(item, "sk") for item in found))


def forget_actor(db: DynamoDBClient, table: str, scope: Scope) -> None:
    db.call("delete_item", TableName=table, Key=key(actors_pk(scope.memory_id), scope.actor_id))


def read_erasures(db: DynamoDBClient, table: str, pk: str) -> int:
    """The count (0 before the first erasure), read strongly consistent."""
    found = db.call("get_item", TableName=table, Key=key(pk, ERASURES_SK), ConsistentRead=True).get(
        "Item"
    )
    return 0 if found is None else number(found, "n")


def count_erasure(db: DynamoDBClient, table: str, pk: str) -> None:
    """One erasure more; erase calls it before it reads what to tombstone. Adding twice (a
    resend after a lost answer) only fences one more plan, which then reads again."""
    db.call(
        "update_item",
        TableName=table,
        Key=key(pk, ERASURES_SK),
        UpdateExpression="ADD #n :one",
        ExpressionAttributeNames={"#n": "n"},
        ExpressionAttributeValues={":one": n(1)},
    )


def fence_item(table: str, pk: str, expected: int | None, *, bump: bool) -> Item | None:
    """The transaction item of race 7: a check of the erasure count the plan read, an add of
    one erasure, both in one Update, or nothing (``None``)."""
    if expected is None and not bump:
        return None
    fence: dict[str, Any] = {"TableName": table, "Key": key(pk, ERASURES_SK)}
    names = {"#n": "n"}
    values: dict[str, Any] = {}
    if expected is not None:
        fence["ConditionExpression"] = "attribute_not_exists(#n)" if expected == 0 else "#n = :want"
        if expected:
            values[":want"] = n(expected)
    if not bump:
        check = {**fence, "ExpressionAttributeNames": names}
        if values:
            check["ExpressionAttributeValues"] = values
        return {"ConditionCheck": check}
    values[":one"] = n(1)
    update = {
        **fence,
        "UpdateExpression": "ADD #n :one",
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    return {"Update": update}


class LazyHistories(Mapping[str, Sequence[RecordVersion]]):
    """A scope's versions by record id, read on demand: ``lineage`` reads only what it follows."""

    def __init__(self, read: Callable[[str], list[RecordVersion]]) -> None:
        self._read = read
        self._loaded: dict[str, list[RecordVersion]] = {}

    def __getitem__(self, record_id: str) -> Sequence[RecordVersion]:
        if record_id not in self._loaded:
            found = self._read(record_id)
            if not found:
                raise KeyError(record_id)
            self._loaded[record_id] = found
        return self._loaded[record_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded)

    def __len__(self) -> int:
        return len(self._loaded)
