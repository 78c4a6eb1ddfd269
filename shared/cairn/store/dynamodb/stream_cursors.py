"""Record streaming's delivery cursors on DynamoDB (``cairn.streaming.delivery.StreamCursors``).

One item per scope, ``pk = R#<memory>|<actor>``, ``sk = STREAMED``, ``q`` the last change
sequence delivered. The cursor only moves forward: ``advance`` is one UpdateItem conditioned on
``q`` being below the new value, and a failed condition (another deliverer got there first)
leaves it where it is.
"""

from __future__ import annotations

from cairn.errors import ConflictError
from cairn.models import Scope
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import key, n, number, scope_pk

STREAMED_SK = "STREAMED"


class DynamoDBStreamCursors:
    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def delivered(self, scope: Scope) -> int:
        """One strongly consistent GetItem."""
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(scope_pk(scope), STREAMED_SK),
            ConsistentRead=True,
        ).get("Item")
        return number(found, "q") if found and "q" in found else 0

    def advance(self, scope: Scope, to: int) -> None:
        """One conditional UpdateItem."""
        try:
            self._db.call(
                "update_item",
                TableName=self._table,
                Key=key(scope_pk(scope), STREAMED_SK),
                UpdateExpression="SET #q = :to",
                ConditionExpression="attribute_not_exists(#q) OR #q < :to",
                ExpressionAttributeNames={"#q": "q"},
                ExpressionAttributeValues={":to": n(to)},
            )
        except ConflictError:
            return  # already there or past it
