"""``QuarantineList`` on DynamoDB, in the items table (``docs/dynamodb.md``)::

    items   pk = QR#<memory>   sk = S#<field>:<value>         one quarantined source

A change to the list moves the generation of every scope of the memory (its actor markers,
``RA#<memory>``): the recall index reads the list with a scope's rows and keeps both with the
generation (in process and in the scope's index object), so a warm or cold reader learns of
the change at its next recall without an extra read per recall. A scope whose first record
lands while the list changes may keep its index at the old list until its next write.
"""

from __future__ import annotations

from typing import Any

from cairn.errors import ConflictError
from cairn.models import Scope
from cairn.quarantine import QuarantineEntry, SourceSelector
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import key, s, scope_pk, text
from cairn.store.dynamodb.erasures import read_actors
from cairn.store.dynamodb.generations import generation_bump
from cairn.store.memory.quarantine import ordered


def quarantine_pk(memory_id: str) -> str:
    return f"QR#{memory_id}"


class DynamoDBQuarantineList:
    """The list in the items table; behaves exactly like ``InMemoryQuarantineList``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def add(self, entry: QuarantineEntry) -> bool:
        item = {
            **key(quarantine_pk(entry.memory_id), f"S#{entry.selector}"),
            "d": s(entry.model_dump_json()),
        }
        # Only if absent: a second add of the same source keeps the first reason and time.
        try:
            self._db.call(
                "put_item",
                TableName=self._table,
                Item=item,
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ConflictError:
            return False
        self._move_generations(entry.memory_id)
        return True

    def remove(self, memory_id: str, selector: SourceSelector) -> bool:
        answer = self._db.call(
            "delete_item",
            TableName=self._table,
            Key=key(quarantine_pk(memory_id), f"S#{selector}"),
            ReturnValues="ALL_OLD",
        )
        if "Attributes" not in answer:
            return False
        self._move_generations(memory_id)
        return True

    def _move_generations(self, memory_id: str) -> None:
        for actor in read_actors(self._db, self._table, memory_id):
            pk = scope_pk(Scope(memory_id=memory_id, actor_id=actor))
            update = generation_bump(self._table, pk)["Update"]
            self._db.call("update_item", **update)

    def entries(self, memory_id: str) -> tuple[QuarantineEntry, ...]:
        found: list[QuarantineEntry] = []
        start: dict[str, Any] | None = None
        while True:
            extra = {"ExclusiveStartKey": start} if start else {}
            page = self._db.call(
                "query",
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": s(quarantine_pk(memory_id))},
                ConsistentRead=True,
                **extra,
            )
            found.extend(QuarantineEntry.model_validate_json(text(i, "d")) for i in page["Items"])
            start = page.get("LastEvaluatedKey")
            if not start:
                return ordered(found)
