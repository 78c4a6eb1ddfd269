"""The deletion fence on DynamoDB (``MemoryConfigStore.mark_deleting``), in the items table.

    pk = D#<memory_id>      sk = DELETING        DeleteMemory began on the memory (kept for good)

A fenced write (the API's record applies and placements) adds to the TransactWriteItems it
sends anyway one ConditionCheck ``attribute_not_exists(pk)`` of this item: no extra request,
one more item (and its write units) in the transaction. A partition per memory, so the checks
of busy memories never meet on one key. A transaction cancelled by the check is told apart
from other conflicts by one strongly consistent GetItem of the mark.
"""

from __future__ import annotations

from cairn.errors import MemoryDeletingError
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, key

MARK_SK = "DELETING"


def mark_key(memory_id: str) -> Item:
    return key(f"D#{memory_id}", MARK_SK)


class DeletionMarking:
    """``MemoryConfigStore.mark_deleting`` for the store of memories in this table."""

    _db: DynamoDBClient
    _table: str

    def mark_deleting(self, memory_id: str) -> None:
        """One PutItem; marking again is a no-op (the item carries nothing but its key)."""
        self._db.call("put_item", TableName=self._table, Item=mark_key(memory_id))


def mark_checks(table: str, memory_id: str, fenced: bool) -> list[Item]:
    """The transaction item of a fenced write (none for an unfenced one)."""
    if not fenced:
        return []
    check = {
        "TableName": table,
        "Key": mark_key(memory_id),
        "ConditionExpression": "attribute_not_exists(pk)",
    }
    return [{"ConditionCheck": check}]


def raise_if_marked(db: DynamoDBClient, table: str, memory_id: str, fenced: bool) -> None:
    """After a cancelled fenced transaction: ``MemoryDeletingError`` if the mark is why."""
    if not fenced:
        return
    found = db.call("get_item", TableName=table, Key=mark_key(memory_id), ConsistentRead=True)
    if found.get("Item") is not None:
        raise MemoryDeletingError(memory_id)
