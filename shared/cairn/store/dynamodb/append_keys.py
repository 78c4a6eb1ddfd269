"""Idempotency keys of appends on DynamoDB: one guard item per key, in the append's transaction.

A long outage can outlast the resends of ``DynamoDBClient.transact``: the append committed, but
its answer and every read-back were lost, so the caller was told "unavailable" and appends
again. Event ids are random and a retry re-stamps the time, so the second append is a new item
and would store the event twice (issue 14). Under an idempotency key the append's
TransactWriteItems also puts ``K#<scope>`` / ``<key>``, naming the event it stores:

- its condition, ``attribute_not_exists(pk) OR expires_at <= :now``, makes a second append
  under the same key fail as a whole (its event is not written either); the store then reads
  the guard and answers with the first event. An expired guard (TTL deletes it lazily, up to
  days later) no longer counts.
- it sits after the event Put, so the event stays the transaction's commit proof
  (``commit_proof``).

Guards hold the event's keys and an expiry, never content; they live in the events table and
are forgotten with the actor's events.
"""

from __future__ import annotations

import math
from datetime import datetime

from cairn.errors import EventNotFoundError
from cairn.models import Event, Scope
from cairn.ports import APPEND_KEY_KEPT_FOR
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, decode_event, key, n, s, text
from cairn.store.dynamodb.schema import TTL_ATTRIBUTE


def _partition(scope: Scope) -> str:
    return f"K#{scope}"


def _epoch(at: datetime) -> int:
    return math.ceil(at.timestamp())


def guard_puts(
    table: str, scope: Scope, append_key: str | None, event: Item, now: datetime
) -> list[Item]:
    """The transaction item that claims ``append_key`` for ``event`` (the event's item), to
    follow the event's Put; none without a key."""
    if append_key is None:
        return []
    return [
        {
            "Put": {
                "TableName": table,
                "Item": {
                    **key(_partition(scope), append_key),
                    "epk": event["pk"],
                    "esk": event["sk"],
                    TTL_ATTRIBUTE: n(_epoch(now + APPEND_KEY_KEPT_FOR)),
                },
                "ConditionExpression": "attribute_not_exists(pk) OR #ttl <= :now",
                "ExpressionAttributeNames": {"#ttl": TTL_ATTRIBUTE},
                "ExpressionAttributeValues": {":now": n(_epoch(now))},
            }
        }
    ]


def stored_under(
    db: DynamoDBClient, table: str, scope: Scope, append_key: str | None, now: datetime
) -> Event | None:
    """The event an unexpired ``append_key`` stored (two strongly consistent GetItems);
    ``None`` if there is no such key, ``EventNotFoundError`` if its event was deleted."""
    if append_key is None:
        return None
    guard = _get(db, table, key(_partition(scope), append_key))
    if guard is None or int(guard[TTL_ATTRIBUTE]["N"]) <= _epoch(now):
        return None
    event = _get(db, table, key(text(guard, "epk"), text(guard, "esk")))
    if event is None:
        raise EventNotFoundError(text(guard, "esk").partition("#")[2])  # sk = <time>#<id>
    return decode_event(event)


def forget_scope(db: DynamoDBClient, table: str, scope: Scope) -> None:
    """Delete every guard of the actor (one Query, 25 deletes a request)."""
    keys = [
        key(text(item, "pk"), text(item, "sk"))
        for item in db.query(
            TableName=table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(_partition(scope))},
            ProjectionExpression="pk, sk",
            ConsistentRead=True,
        )
    ]
    db.batch_delete(table, keys)


def _get(db: DynamoDBClient, table: str, item_key: Item) -> Item | None:
    found: Item | None = db.call(
        "get_item", TableName=table, Key=item_key, ConsistentRead=True
    ).get("Item")
    return found
