"""The record change feed on DynamoDB: a sequence per scope, written in the write's transaction.

The scope's generation item (``generations``: ``pk = R#<memory>|<actor>``, ``sk = G``), which
every record transaction updates anyway, also holds ``q``, the scope's last change sequence.
A record transaction (apply, erase, restore) sets ``q`` from the value it read to that value
plus the changes it writes, conditioned on ``q`` still being what it read, and puts ONE change
item, ``sk = CH#<first sequence, 20 digits>``, listing its changes (record id, version, kind;
never content). Two writers that read the same ``q`` cannot both commit: the later one's
condition fails and it reads ``q`` again and resends (``commit``). So sequences are gapless and
strictly increasing in commit order within the scope, and a reader that saw sequence ``n`` has
seen every change of the scope up to ``n``: the item holding ``n + 1`` could only be written
after the one ending at ``n`` had committed.

Cost: one strongly consistent GetItem per write (0.5 RRU) to read ``q``, and one transaction
item more (the change item; the generation item was already in the transaction).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from cairn.errors import ConflictError, StoreUnavailableError
from cairn.models import RecordVersion, Scope
from cairn.ports import ChangeKind, RecordChange, change_kind
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, key, n, number, s, scope_pk
from cairn.store.dynamodb.generations import GENERATION_SK

CHANGES_PREFIX = "CH#"
MAX_CHANGES = 1000
# The most changes one transaction records (a restore of 96 versions is the largest): a reader
# resuming inside an item looks back this far for the item that holds its next change.
MAX_CHANGES_PER_ITEM = 100
_DIGITS = 20
_ROUNDS = 5

Entry = tuple[str, int, ChangeKind]


def change_sk(sequence: int) -> str:
    return f"{CHANGES_PREFIX}{sequence:0{_DIGITS}d}"


def written_entries(versions: Iterable[RecordVersion]) -> list[Entry]:
    """One entry per version written."""
    return [(v.record_id, v.version, change_kind(v)) for v in versions]


def erased_entries(heads: Iterable[tuple[str, int]]) -> list[Entry]:
    """One ``erased`` entry per record, at its head's version."""
    return [(record_id, version, "erased") for record_id, version in heads]


def sequence_of(item: Item) -> int:
    """``q`` of a generation item read with the ``#q`` projection (0 when absent)."""
    return number(item, "q") if "q" in item else 0


def read_sequence(db: DynamoDBClient, table: str, pk: str) -> int:
    """The scope's last change sequence (0 before its first), strongly consistent."""
    found = db.call(
        "get_item",
        TableName=table,
        Key=key(pk, GENERATION_SK),
        ConsistentRead=True,
        ProjectionExpression="#q",
        ExpressionAttributeNames={"#q": "q"},
    ).get("Item")
    return number(found, "q") if found and "q" in found else 0


def feed_items(
    table: str, pk: str, last: int, entries: Sequence[Entry], at: datetime
) -> list[Item]:
    """The generation Update (a fresh token, and ``q`` moved from ``last``, conditioned on it)
    and, when there are entries, the change item; in the record write's transaction."""
    values: dict[str, Any] = {":g": s(uuid.uuid4().hex), ":q": n(last + len(entries))}
    condition = "attribute_not_exists(#q)"
    if last:
        condition = "#q = :last"
        values[":last"] = n(last)
    update = {
        "Update": {
            "TableName": table,
            "Key": key(pk, GENERATION_SK),
            "UpdateExpression": "SET #g = :g, #q = :q",
            "ConditionExpression": condition,
            "ExpressionAttributeNames": {"#g": "g", "#q": "q"},
            "ExpressionAttributeValues": values,
        }
    }
    if not entries:
        return [update]
    item = {
        **key(pk, change_sk(last + 1)),
        "f": n(last + 1),
        "at": s(at.isoformat()),
        "c": {"L": [{"L": [s(rid), n(version), s(kind)]} for rid, version, kind in entries]},
    }
    put = {
        "Put": {"TableName": table, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
    }
    return [update, put]


def commit(
    db: DynamoDBClient,
    table: str,
    pk: str,
    build: Callable[[Sequence[Item]], list[Item]],
    entries: Sequence[Entry],
    at: datetime,
    *,
    sequence: int | None = None,
) -> None:
    """Send ``build(feed items)`` from the scope's ``sequence`` (read now when not given: an
    apply reads it with its heads), and when only the sequence had moved (another writer of
    the scope committed in between), read it again and resend; a scope this busy for
    ``_ROUNDS`` rounds is ``StoreUnavailableError`` (retryable)."""
    if not entries:  # no record written (an apply that only consumes rollouts): no feed
        db.transact(build(()))
        return
    for _ in range(_ROUNDS):
        last = read_sequence(db, table, pk) if sequence is None else sequence
        sequence = None
        try:
            db.transact(build(feed_items(table, pk, last, entries, at)))
            return
        except ConflictError as conflict:
            if type(conflict) is not ConflictError or read_sequence(db, table, pk) == last:
                raise  # a record or fence condition failed: the caller's conflict
    raise StoreUnavailableError(
        "other writers of this scope kept recording changes meanwhile; try again"
    )


class DynamoDBChangeFeed:
    """``cairn.ports.RecordChangeFeed`` over the items table's change items, per scope."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def scope_changes(
        self, scope: Scope, after: int = 0, *, limit: int = 100
    ) -> tuple[RecordChange, ...]:
        """One Query from the item that may hold ``after + 1`` on, read as far as needed."""
        if not 1 <= limit <= MAX_CHANGES:
            raise ValueError(f"limit must be 1-{MAX_CHANGES}, not {limit}")
        found: list[RecordChange] = []
        for change in self._from(scope, max(after, 0)):
            if change.sequence > after:
                found.append(change)
                if len(found) == limit:
                    break
        return tuple(found)

    def last_sequence(self, scope: Scope) -> int:
        """One strongly consistent read of the scope's sequence item (``read_sequence``)."""
        return read_sequence(self._db, self._table, scope_pk(scope))

    def _from(self, scope: Scope, after: int) -> Iterator[RecordChange]:
        items = self._db.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={
                ":pk": s(scope_pk(scope)),
                ":low": s(change_sk(max(1, after + 1 - MAX_CHANGES_PER_ITEM))),
                ":high": s(CHANGES_PREFIX + "~"),
            },
            ConsistentRead=True,
        )
        for item in items:
            first, at = number(item, "f"), datetime.fromisoformat(str(item["at"]["S"]))
            for offset, entry in enumerate(item["c"]["L"]):
                rid, version, kind = entry["L"]
                yield RecordChange.model_validate(
                    {
                        "sequence": first + offset,
                        "memory_id": scope.memory_id,
                        "actor_id": scope.actor_id,
                        "record_id": rid["S"],
                        "version": int(version["N"]),
                        "kind": kind["S"],
                        "at": at,
                    }
                )


def scope_of_change_key(keys: Item) -> Scope | None:
    """The scope whose change item has ``keys`` (as a DynamoDB stream record names it), or
    ``None`` for any other item of the table."""
    pk, sk = str(keys.get("pk", {}).get("S", "")), str(keys.get("sk", {}).get("S", ""))
    if not (pk.startswith("R#") and sk.startswith(CHANGES_PREFIX)):
        return None
    memory_id, _, actor_id = pk[2:].partition("|")
    return Scope(memory_id=memory_id, actor_id=actor_id)
