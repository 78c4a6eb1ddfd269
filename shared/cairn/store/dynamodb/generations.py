"""Record generations on DynamoDB: one item per scope, moved by every record write.

The item is ``pk = R#<memory>|<actor>``, ``sk = G``, ``g`` a fresh random token. Every
``apply`` that writes a version and every erase transaction sets ``g`` in the same
TransactWriteItems as its record items, so the generation moves exactly when records change,
for whichever process wrote them. A token, not a counter: a table restored from a backup then
never repeats a generation a cached index was built at. The item is never deleted (an erased
scope that is written again must not reach an old generation either).

``generation`` is a strongly consistent GetItem (1 RRU): a recall that reads it after a write
was acknowledged sees that write's generation, so a recall index checked against it is never
stale (docs/dynamodb.md, "Recall over DynamoDB"). There is no cheaper epoch covering every
scope, so ``epoch`` changes on every call and each recall reads its scope's generation.
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable

from cairn.models import Scope
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, history_pk, key, s, scope_pk

GENERATION_SK = "G"
# Before a scope's first write (or written before generations existed): no item.
NO_GENERATION = ""


def generation_bump(table: str, pk: str) -> Item:
    """The transaction item that moves the scope's generation: unconditional, so it never
    fails a transaction; two writers both move it and the later token stands."""
    return {
        "Update": {
            "TableName": table,
            "Key": key(pk, GENERATION_SK),
            "UpdateExpression": "SET #g = :g",
            "ExpressionAttributeNames": {"#g": "g"},
            "ExpressionAttributeValues": {":g": s(uuid.uuid4().hex)},
        }
    }


class DynamoDBRecordGenerations:
    """``RecordGenerations`` over the items table's generation items."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def epoch(self) -> Hashable:
        """A new value on every call: DynamoDB has no cheap table-wide change marker."""
        return object()

    def generation(self, scope: Scope) -> str:
        """The scope's generation token (one strongly consistent GetItem)."""
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(scope_pk(scope), GENERATION_SK),
            ConsistentRead=True,
            ProjectionExpression="#g",
            ExpressionAttributeNames={"#g": "g"},
        ).get("Item")
        return str(found["g"]["S"]) if found and "g" in found else NO_GENERATION


def history_bump(table: str, scope: Scope) -> Item:
    """The transaction item that moves the scope's history generation (events table)."""
    return generation_bump(table, history_pk(scope))


class DynamoDBHistoryGenerations:
    """``HistoryGenerations`` over the events table's ``HG#<scope>``/``G`` items: a fresh token
    set in the transaction of every event append, counted append, deletion and chunk write,
    and right after the deletes of a chunk or session erasure (an erasure interrupted before
    it is completed by running it again, which moves it)."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def generation(self, scope: Scope) -> str:
        """The scope's history token (one strongly consistent GetItem)."""
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(history_pk(scope), GENERATION_SK),
            ConsistentRead=True,
            ProjectionExpression="#g",
            ExpressionAttributeNames={"#g": "g"},
        ).get("Item")
        return str(found["g"]["S"]) if found and "g" in found else NO_GENERATION

    def bump(self, scope: Scope) -> None:
        """Move the generation outside a transaction (after deletes that cannot join one)."""
        update = history_bump(self._table, scope)["Update"]
        self._db.call("update_item", **update)

    def forget(self, scope: Scope) -> None:
        """Delete the scope's token once its events are all erased, so the erasure leaves no
        item behind: the generation reads ``NO_GENERATION`` again, which moves it from any
        token, and a list kept at ``NO_GENERATION`` can only be shorter than the store's."""
        self._db.call(
            "delete_item", TableName=self._table, Key=key(history_pk(scope), GENERATION_SK)
        )
