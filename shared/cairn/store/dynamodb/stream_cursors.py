"""Record streaming's delivery cursors on DynamoDB (``cairn.streaming.delivery.StreamCursors``).

One item per scope, ``pk = R#<memory>|<actor>``, ``sk = STREAMED``, ``q`` the last change
sequence delivered, ``a`` the stream it went to (where a deleted memory's erasures go). The
cursor only moves forward: ``advance`` is one UpdateItem conditioned on ``q`` being below the
new value, and a failed condition (another deliverer got there first) leaves it where it is.
"""

from __future__ import annotations

from cairn.errors import ConflictError
from cairn.models import Scope
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import key, n, number, s, scope_pk, text

STREAMED_SK = "STREAMED"


class DynamoDBStreamCursors:
    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def delivered(self, scope: Scope) -> tuple[int, str | None]:
        """One strongly consistent GetItem."""
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(scope_pk(scope), STREAMED_SK),
            ConsistentRead=True,
        ).get("Item")
        if not found or "q" not in found:
            return 0, None
        return number(found, "q"), text(found, "a")

    def advance(self, scope: Scope, to: int, stream_arn: str) -> None:
        """One conditional UpdateItem."""
        try:
            self._db.call(
                "update_item",
                TableName=self._table,
                Key=key(scope_pk(scope), STREAMED_SK),
                UpdateExpression="SET #q = :to, #a = :a",
                ConditionExpression="attribute_not_exists(#q) OR #q < :to",
                ExpressionAttributeNames={"#q": "q", "#a": "a"},
                ExpressionAttributeValues={":to": n(to), ":a": s(stream_arn)},
            )
        except ConflictError:
            return  # already there or past it
