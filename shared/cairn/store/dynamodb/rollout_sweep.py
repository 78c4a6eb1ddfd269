"""Reading the sparse ``due`` index: what the extraction sweep must look at, in every scope.

One Query a shard (``SHARDS`` in all), each bounded by the sweep's ``limit``; the results are
merged by due time. The index is eventually consistent: an entry may be a moment stale, which is
why every action taken on it is conditional on the item's version (``_dynamodb_rollouts``).
"""

from __future__ import annotations

import heapq
from datetime import datetime

from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, decode_time, s, text
from cairn.store.dynamodb.rollout_codec import DUE_PREFIX, IDLE_PREFIX, SHARDS, due_bound
from cairn.store.dynamodb.schema import DUE_INDEX


class DueIndex:
    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def idle(self, now: datetime, limit: int) -> list[Item]:
        """Counters items whose idle deadline is at or before ``now``, earliest first."""
        return self._due(IDLE_PREFIX, now, limit)

    def rollouts(self, now: datetime, limit: int) -> list[Item]:
        """Rollout items due at or before ``now``, earliest first."""
        return self._due(DUE_PREFIX, now, limit)

    def earliest(self) -> datetime | None:
        """When the first entry of the index (idle session or rollout, any shard) falls due;
        ``None`` when the index is empty. Eventually consistent, like every read of it: a
        moment-old entry may show, and the sweep woken by it finds nothing and re-arms."""
        firsts = [
            self._db.call(
                "query",
                TableName=self._table,
                IndexName=DUE_INDEX.name,
                KeyConditionExpression="dpk = :d",
                ExpressionAttributeValues={":d": s(f"{prefix}{shard}")},
                ProjectionExpression="dsk",
                Limit=1,
            ).get("Items", [])
            for prefix in (IDLE_PREFIX, DUE_PREFIX)
            for shard in range(SHARDS)
        ]
        times = [text(item, "dsk").split("#", 1)[0] for items in firsts for item in items]
        return decode_time(min(times)) if times else None

    def _due(self, prefix: str, now: datetime, limit: int) -> list[Item]:
        per_shard = [self._shard(f"{prefix}{shard}", now, limit) for shard in range(SHARDS)]
        merged = heapq.merge(*per_shard, key=lambda item: text(item, "dsk"))
        return list(merged)[:limit]

    def _shard(self, partition: str, now: datetime, limit: int) -> list[Item]:
        items: list[Item] = self._db.call(
            "query",
            TableName=self._table,
            IndexName=DUE_INDEX.name,
            KeyConditionExpression="dpk = :d AND dsk < :bound",
            ExpressionAttributeValues={":d": s(partition), ":bound": s(due_bound(now))},
            Limit=limit,
        ).get("Items", [])
        return items
