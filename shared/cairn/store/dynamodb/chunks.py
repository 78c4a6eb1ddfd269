"""``ChunkStore`` on DynamoDB: the history pyramid in the events table, beside the turns.

Keys (``docs/dynamodb.md``)::

    events  pk = C#<memory>|<actor>|<session>   sk = <chunk id>   chunk (L1-00000001-00000010)
            pk = C#<memory>|<actor>|<session>   sk = N#<level>    the level's next turn number
            pk = CS#<memory>|<actor>            sk = <session>    a session that holds chunks

Chunk ids are fixed width, so a session's chunks sort by (level, from_seq) and one level is a
``begins_with`` Query. A put is one TransactWriteItems: the chunk (``attribute_not_exists``),
the level's cursor moved from the chunk's first turn to the one after its last (so two writers
of one level cannot both extend it), a ConditionCheck that every child chunk exists, and the
session's entry in the actor's index, which is how erasure finds every session with chunks.
"""

from __future__ import annotations

from typing import Any

from cairn.chunks import Chunk, admit, summarising
from cairn.errors import ChunkConflictError, ChunkNotFoundError, ConflictError
from cairn.models import Scope
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, check_item_size, key, n, s, text
from cairn.store.dynamodb.generations import DynamoDBHistoryGenerations, history_bump


def chunks_pk(scope: Scope, session_id: str) -> str:
    return f"C#{scope}|{session_id}"


def chunk_sessions_pk(scope: Scope) -> str:
    return f"CS#{scope}"


def _cursor_sk(level: int) -> str:
    return f"N#{level}"


class DynamoDBChunkStore:
    """Chunks in the events table; behaves exactly like ``InMemoryChunkStore``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def put(self, scope: Scope, chunk: Chunk) -> Chunk:
        pk = chunks_pk(scope, chunk.session_id)
        below = self._children(scope, chunk)
        last = self._last_of_level(scope, chunk.session_id, chunk.level)
        found = admit(
            scope,
            chunk,
            stored=self._get(pk, chunk.chunk_id),
            last_of_level=last,
            below=below,
        )
        if found is not None:
            return found
        item = {**key(pk, chunk.chunk_id), "d": s(chunk.model_dump_json())}
        check_item_size(item, "the chunk", "shorten its summary")
        try:
            writes = [*self._writes(scope, chunk, item), history_bump(self._table, scope)]
            self._db.transact([*writes, *self._child_checks(pk, chunk)])
        except ConflictError as exc:
            stored = self._get(pk, chunk.chunk_id)
            if stored is not None and stored.same_content(chunk):
                return stored  # a concurrent retry of the same chunk won
            raise ChunkConflictError(
                chunk.chunk_id, "its level moved on or a child vanished while it was written"
            ) from exc
        return chunk

    def _writes(self, scope: Scope, chunk: Chunk, item: Item) -> list[Item]:
        pk = chunks_pk(scope, chunk.session_id)
        cursor: dict[str, Any] = {
            "TableName": self._table,
            "Key": key(pk, _cursor_sk(chunk.level)),
            "UpdateExpression": "SET #next = :next",
            "ExpressionAttributeNames": {"#next": "next"},
            "ExpressionAttributeValues": {":next": n(chunk.to_seq + 1)},
        }
        # A level that was cut back to turn 1 (forget_turn) keeps its cursor, at 1.
        condition = "#next = :from"
        if chunk.from_seq == 1:
            condition = "attribute_not_exists(pk) OR #next = :from"
        cursor["ConditionExpression"] = condition
        cursor["ExpressionAttributeValues"][":from"] = n(chunk.from_seq)
        return [
            {
                "Put": {
                    "TableName": self._table,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {"Update": cursor},
            {
                "Put": {
                    "TableName": self._table,
                    "Item": key(chunk_sessions_pk(scope), chunk.session_id),
                }
            },
        ]

    def _child_checks(self, pk: str, chunk: Chunk) -> list[Item]:
        if chunk.level == 1:
            return []
        return [
            {
                "ConditionCheck": {
                    "TableName": self._table,
                    "Key": key(pk, child),
                    "ConditionExpression": "attribute_exists(pk)",
                }
            }
            for child in chunk.children
        ]

    def _children(self, scope: Scope, chunk: Chunk) -> list[Chunk]:
        if chunk.level == 1:
            return []
        pk = chunks_pk(scope, chunk.session_id)
        items = self._db.batch_get(
            self._table,
            [key(pk, child) for child in chunk.children],
            projection="#d",
            names={"#d": "d"},
        )
        return [Chunk.model_validate_json(text(item, "d")) for item in items]

    def _last_of_level(self, scope: Scope, session_id: str, level: int) -> Chunk | None:
        items = self._db.call(
            "query",
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :level)",
            ExpressionAttributeValues={
                ":pk": s(chunks_pk(scope, session_id)),
                ":level": s(f"L{level}-"),
            },
            ScanIndexForward=False,
            Limit=1,
            ConsistentRead=True,
        ).get("Items", [])
        return Chunk.model_validate_json(text(items[0], "d")) if items else None

    def _get(self, pk: str, chunk_id: str) -> Chunk | None:
        item = self._db.call(
            "get_item", TableName=self._table, Key=key(pk, chunk_id), ConsistentRead=True
        ).get("Item")
        return None if item is None else Chunk.model_validate_json(text(item, "d"))

    def get_chunk(self, scope: Scope, session_id: str, chunk_id: str) -> Chunk:
        found = self._get(chunks_pk(scope, session_id), chunk_id)
        if found is None or not chunk_id.startswith("L"):
            raise ChunkNotFoundError(chunk_id)
        return found

    def list_chunks(
        self, scope: Scope, session_id: str, *, level: int | None = None
    ) -> tuple[Chunk, ...]:
        items = self._db.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={
                ":pk": s(chunks_pk(scope, session_id)),
                ":prefix": s("L" if level is None else f"L{level}-"),
            },
            ConsistentRead=True,
        )
        return tuple(Chunk.model_validate_json(text(item, "d")) for item in items)

    def chunk_sessions(self, scope: Scope) -> tuple[str, ...]:
        items = self._db.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(chunk_sessions_pk(scope))},
            ConsistentRead=True,
        )
        return tuple(text(item, "sk") for item in items)

    def forget_turn(self, scope: Scope, session_id: str, event_id: str) -> int:
        """Delete the summaries of the turn (newest first, then the level cursors moved back),
        each delete conditional on nothing; safe to run again."""
        pk = chunks_pk(scope, session_id)
        gone = summarising(self.list_chunks(scope, session_id), event_id)
        for chunk in sorted(gone, key=lambda c: (-c.from_seq, c.level)):
            self._db.call("delete_item", TableName=self._table, Key=key(pk, chunk.chunk_id))
        for level in sorted({c.level for c in gone}):
            first = min(c.from_seq for c in gone if c.level == level)
            self._db.call(
                "put_item",
                TableName=self._table,
                Item={**key(pk, _cursor_sk(level)), "next": n(first)},
            )
        if gone:
            DynamoDBHistoryGenerations(self._db, self._table).bump(scope)
        return len(gone)

    def erase_session(self, scope: Scope, session_id: str) -> int:
        """Delete the session's chunks and cursors (25 a request), then its index entry; safe
        to run again after a failure."""
        keys = [
            key(text(item, "pk"), text(item, "sk"))
            for item in self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": s(chunks_pk(scope, session_id))},
                ProjectionExpression="pk, sk",
                ConsistentRead=True,
            )
        ]
        self._db.batch_delete(self._table, keys)
        self._db.call(
            "delete_item", TableName=self._table, Key=key(chunk_sessions_pk(scope), session_id)
        )
        DynamoDBHistoryGenerations(self._db, self._table).bump(scope)
        return sum(1 for k in keys if k["sk"]["S"].startswith("L"))

    def erase_scope(self, scope: Scope) -> int:
        return sum(self.erase_session(scope, sid) for sid in self.chunk_sessions(scope))
