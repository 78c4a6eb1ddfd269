"""``MemoryConfigStore`` and ``IdempotencyStore`` on DynamoDB, in the items table.

    pk = M#                 sk = I#<memory_id>   a memory: d (MemoryConfig JSON), v revision, nm
                            sk = N#<name>        the name's reservation: mid (the memory id)
    pk = I#<claim key>      sk = CLAIM           a client-token claim: fp, ex, o, expires_at

Memories share one partition: there are few of them (a control-plane resource), and one
partition is what lets ``list_memories`` be one Query in memory-id order. Claims get a
partition each (their keys are digests), so retries of busy writes never meet on one key.

The conditions close these races:

- create: the name's reservation and the memory are put in ONE TransactWriteItems, each
  ``attribute_not_exists(pk)``: two creates of one name both read "free", exactly one commits,
  and the other is told ``MemoryNameTakenError`` (it reads the reservation to say which).
- replace: the Put is conditioned on ``v = :expected`` (the revision the caller read), so of
  two updates prepared from revision r one writes r + 1 and the other gets ``ConflictError``;
  a memory deleted meanwhile fails the same condition and is reported as not found.
- delete: the memory and its name's reservation go in one transaction, so a name is never
  freed while its memory still exists, nor kept once it is gone.
- claim: ``attribute_not_exists(pk) OR ex <= :now``: of two requests with one client token,
  one claims it and the other reads that claim back; an expired claim is replaced (DynamoDB's
  TTL deletes claims lazily, days late, so expiry is always judged by ``ex``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from itertools import islice
from typing import Any

from cairn.cursor import decode_cursor, encode_cursor
from cairn.errors import (
    ConflictError,
    InvalidCursorError,
    MemoryNameTakenError,
    MemoryNotFoundError,
    StoreUnavailableError,
)
from cairn.memories import MemoryConfig
from cairn.models import Page
from cairn.paging import check_limit
from cairn.ports import DEFAULT_PAGE_SIZE, IdempotencyClaim
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    Item,
    check_item_size,
    decode_time,
    encode_time,
    key,
    n,
    number,
    s,
    text,
)
from cairn.store.dynamodb.deletion_marks import DeletionMarking
from cairn.store.dynamodb.schema import TTL_ATTRIBUTE

MEMORIES_PK = "M#"
MEMORY_FROM, MEMORY_UNTIL, NAME_FROM = "I#", "I$", "N#"
CLAIM_SK = "CLAIM"
# A claim read back after losing its conditional put may be released and re-claimed between
# the two requests; a few more attempts always settle it.
_CLAIM_ATTEMPTS = 5


def memory_key(memory_id: str) -> Item:
    return key(MEMORIES_PK, f"{MEMORY_FROM}{memory_id}")


def name_key(name: str) -> Item:
    return key(MEMORIES_PK, f"{NAME_FROM}{name}")


def claim_key(claim: str) -> Item:
    return key(f"I#{claim}", CLAIM_SK)


def _memory_item(memory: MemoryConfig) -> Item:
    item = {
        **memory_key(memory.memory_id),
        "d": s(memory.model_dump_json()),
        "v": n(memory.revision),
        "nm": s(memory.name),
    }
    # Only appended prompts (up to 30,000 characters per strategy) can make it this large.
    check_item_size(item, "the memory's configuration", "shorten its strategies' prompts")
    return item


def _decode_memory(item: Item) -> MemoryConfig:
    return MemoryConfig.model_validate_json(text(item, "d"))


class DynamoDBMemoryConfigStore(DeletionMarking):
    """Memory configurations; behaves exactly like ``InMemoryMemoryConfigStore``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def _get_item(self, item_key: Item) -> Item | None:
        found: Item | None = self._db.call(
            "get_item", TableName=self._table, Key=item_key, ConsistentRead=True
        ).get("Item")
        return found

    def create(self, memory: MemoryConfig) -> None:
        """Reserve the name and store the memory in one transaction (see the module docstring)."""
        reservation = {
            "TableName": self._table,
            "Item": {**name_key(memory.name), "mid": s(memory.memory_id)},
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        stored = {
            "TableName": self._table,
            "Item": _memory_item(memory),
            "ConditionExpression": "attribute_not_exists(pk)",
        }
        try:
            self._db.transact([{"Put": reservation}, {"Put": stored}])
        except ConflictError:
            if self._get_item(name_key(memory.name)) is not None:
                raise MemoryNameTakenError(memory.name) from None
            raise ConflictError(
                f"memory id {memory.memory_id!r} is taken; create it again"
            ) from None

    def get(self, memory_id: str) -> MemoryConfig:
        """The memory (one GetItem); ``MemoryNotFoundError`` if there is none."""
        item = self._get_item(memory_key(memory_id))
        if item is None:
            raise MemoryNotFoundError(memory_id)
        return _decode_memory(item)

    def replace(self, memory: MemoryConfig, *, expected_revision: int) -> None:
        """One PutItem conditioned on the revision; a failure is read back to say why."""
        try:
            self._db.put(
                TableName=self._table,
                Item=_memory_item(memory),
                ConditionExpression="#v = :want",
                ExpressionAttributeNames={"#v": "v"},
                ExpressionAttributeValues={":want": n(expected_revision)},
            )
        except ConflictError:
            current = self._get_item(memory_key(memory.memory_id))
            if current is None:
                raise MemoryNotFoundError(memory.memory_id) from None
            raise ConflictError(
                f"memory {memory.memory_id!r} changed while this update was prepared "
                f"(revision {number(current, 'v')}, expected {expected_revision}); retry it"
            ) from None

    def delete(self, memory_id: str) -> None:
        """Read the memory's name, then delete memory and reservation in one transaction."""
        found = self._get_item(memory_key(memory_id))
        if found is None:
            raise MemoryNotFoundError(memory_id)
        gone = {
            "TableName": self._table,
            "Key": memory_key(memory_id),
            "ConditionExpression": "attribute_exists(pk)",
        }
        freed = {
            "TableName": self._table,
            "Key": name_key(text(found, "nm")),
            "ConditionExpression": "attribute_not_exists(pk) OR #mid = :mid",
            "ExpressionAttributeNames": {"#mid": "mid"},
            "ExpressionAttributeValues": {":mid": s(memory_id)},
        }
        try:
            self._db.transact([{"Delete": gone}, {"Delete": freed}])
        except ConflictError:
            raise MemoryNotFoundError(memory_id) from None  # deleted by someone else meanwhile

    def list_memories(
        self, *, limit: int = DEFAULT_PAGE_SIZE, cursor: str | None = None
    ) -> Page[MemoryConfig]:
        """Every memory, by memory id: one Query a page, name reservations never read."""
        check_limit(limit)
        lower = MEMORY_FROM
        if cursor is not None:
            position = decode_cursor("memories", {}, cursor)
            if not isinstance(position, str):
                raise InvalidCursorError(
                    "pagination cursor is malformed; pass back the next token exactly as returned"
                )
            # "!" sorts below every character a memory id may hold: just past that id.
            lower = f"{MEMORY_FROM}{position}!"
        items = self._db.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :lower AND :upper",
            ExpressionAttributeValues={
                ":pk": s(MEMORIES_PK),
                ":lower": s(lower),
                ":upper": s(MEMORY_UNTIL),
            },
            ConsistentRead=True,
            Limit=limit + 1,
        )
        rows = [_decode_memory(item) for item in islice(items, limit + 1)]
        memories = tuple(rows[:limit])
        more = len(rows) > limit
        next_cursor = encode_cursor("memories", {}, memories[-1].memory_id) if more else None
        return Page[MemoryConfig](items=memories, next_cursor=next_cursor)


def _ttl(expires_at: datetime) -> dict[str, str]:
    """Epoch seconds, rounded up: DynamoDB's TTL may delete the item only after it expired."""
    return n(math.ceil(expires_at.timestamp()))


def _decode_claim(claim: str, item: Item) -> IdempotencyClaim:
    outcome = json.loads(text(item, "o")) if "o" in item else None
    return IdempotencyClaim(
        key=claim,
        fingerprint=text(item, "fp"),
        outcome=outcome,
        expires_at=decode_time(text(item, "ex")),
    )


class DynamoDBIdempotencyStore:
    """Client-token claims; behaves exactly like ``InMemoryIdempotencyStore``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def claim(
        self,
        key: str,
        fingerprint: str,
        *,
        now: datetime,
        expires_at: datetime,
        durable: bool = True,
    ) -> IdempotencyClaim | None:
        """One conditional PutItem; when it loses, one GetItem reads the claim that won
        (always durable: DynamoDB acknowledges only what it replicated)."""
        del durable
        item = {
            **claim_key(key),
            "fp": s(fingerprint),
            "ex": s(encode_time(expires_at)),
            TTL_ATTRIBUTE: _ttl(expires_at),
        }
        for _ in range(_CLAIM_ATTEMPTS):
            try:
                self._db.put(
                    TableName=self._table,
                    Item=item,
                    ConditionExpression="attribute_not_exists(pk) OR #ex <= :now",
                    ExpressionAttributeNames={"#ex": "ex"},
                    ExpressionAttributeValues={":now": s(encode_time(now))},
                )
            except ConflictError:
                existing = self._db.call(
                    "get_item", TableName=self._table, Key=claim_key(key), ConsistentRead=True
                ).get("Item")
                if existing is not None and decode_time(text(existing, "ex")) > now:
                    return _decode_claim(key, existing)
                continue  # released or expired between the two requests: claim again
            return None
        raise StoreUnavailableError(f"client-token claim {key[:12]}… keeps changing; retry")

    def complete(
        self,
        key: str,
        outcome: Mapping[str, Any],
        *,
        expires_at: datetime,
        durable: bool = True,
    ) -> None:
        """One UpdateItem, only onto an existing claim (an unclaimed key stores nothing)."""
        del durable
        try:
            self._db.call(
                "update_item",
                TableName=self._table,
                Key=claim_key(key),
                UpdateExpression="SET #o = :o, #ex = :ex, #ttl = :ttl",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#o": "o", "#ex": "ex", "#ttl": TTL_ATTRIBUTE},
                ExpressionAttributeValues={
                    ":o": s(json.dumps(dict(outcome), sort_keys=True, separators=(",", ":"))),
                    ":ex": s(encode_time(expires_at)),
                    ":ttl": _ttl(expires_at),
                },
            )
        except ConflictError:
            return

    def release(self, key: str) -> None:
        """One DeleteItem; deleting an absent claim is a no-op."""
        self._db.call("delete_item", TableName=self._table, Key=claim_key(key))
