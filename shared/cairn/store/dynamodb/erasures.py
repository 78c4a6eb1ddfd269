"""What erase needs on DynamoDB: the scope's erasure count (race 7 of ``writes``,
``cairn.erasure_fence``) and the lazily read histories a record's lineage follows.

One item per scope, ``pk`` = the scope's records partition, ``sk`` = ``ERASURES``, attribute
``n``: added to (never set, never deleted) by erase, erase_scope and a retracting apply.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from cairn.models import RecordVersion
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, key, n, number

ERASURES_SK = "ERASURES"


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
