"""``LinkStore`` and ``AccessCounts`` on DynamoDB, in the items table (``docs/dynamodb.md``)::

    items   pk = LK#<scope>   sk = O#<from>#<kind>#<to>   a link, read from its source
            pk = LK#<scope>   sk = I#<to>#<kind>#<from>   the same link, read from its target
            pk = AC#<scope>   sk = CURSOR                 the journal sequence counted up to
            pk = AC#<scope>   sk = C#<record id>          one record's access count
            pk = AC#<scope>   sk = S#<record id>          one record's salience (decay)

A link's two items are put in one TransactWriteItems with a ConditionCheck on each end's head
(present, not erased), so a link never outlives an erase that committed first; counts are
added in one transaction with the cursor's move, conditioned on the cursor read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from cairn.errors import ConflictError, CountedMeanwhileError, RecordNotFoundError
from cairn.links import (
    MAX_LINKS_LISTED,
    Link,
    Salience,
    check_add,
    check_counts,
    check_link,
    check_salience,
)
from cairn.models import Scope
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, head_sk, key, n, number, s, scope_pk, text

CURSOR_SK = "CURSOR"


def links_pk(scope: Scope) -> str:
    return f"LK#{scope}"


def access_pk(scope: Scope) -> str:
    return f"AC#{scope}"


def _out_sk(link: Link) -> str:
    return f"O#{link.from_id}#{link.kind.value}#{link.to_id}"


def _in_sk(link: Link) -> str:
    return f"I#{link.to_id}#{link.kind.value}#{link.from_id}"


class DynamoDBLinkStore:
    """Links in the items table; behaves exactly like ``InMemoryLinkStore``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def put(self, scope: Scope, link: Link) -> Link:
        check_link(scope, link)
        pk = links_pk(scope)
        data = s(link.model_dump_json())
        items: list[Item] = [self._live_check(scope, rid) for rid in (link.from_id, link.to_id)]
        for sk in (_out_sk(link), _in_sk(link)):
            items.append(
                {
                    "Put": {
                        "TableName": self._table,
                        "Item": {**key(pk, sk), "d": data},
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
            )
        try:
            self._db.transact(items)
        except ConflictError:
            for record_id in (link.from_id, link.to_id):
                if not self._live(scope, record_id):
                    raise RecordNotFoundError(record_id) from None
            stored = self._read(pk, _out_sk(link))
            if stored is None:
                raise
            return stored
        return link

    def links_of(self, scope: Scope, record_id: str) -> tuple[Link, ...]:
        found: dict[tuple[str, str, str], Link] = {}
        for prefix in ("O#", "I#"):
            for item in self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                ExpressionAttributeValues={
                    ":pk": s(links_pk(scope)),
                    ":p": s(f"{prefix}{record_id}#"),
                },
                ConsistentRead=True,
            ):
                link = Link.model_validate_json(text(item, "d"))
                found[link.key] = link
        return tuple(found[k] for k in sorted(found)[:MAX_LINKS_LISTED])

    def every_link(self, scope: Scope) -> Iterator[Link]:
        for item in self._db.query(  # the items read from their source: each link once, by key
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :o)",
            ExpressionAttributeValues={":pk": s(links_pk(scope)), ":o": s("O#")},
            ConsistentRead=True,
        ):
            yield Link.model_validate_json(text(item, "d"))

    def erase_records(self, scope: Scope, record_ids: Sequence[str]) -> int:
        doomed: dict[tuple[str, str, str], Link] = {}
        for record_id in record_ids:
            for link in self.links_of(scope, record_id):
                doomed[link.key] = link
        pk = links_pk(scope)
        keys = [key(pk, sk) for link in doomed.values() for sk in (_out_sk(link), _in_sk(link))]
        self._db.batch_delete(self._table, keys)
        return len(doomed)

    def erase_scope(self, scope: Scope) -> int:
        keys = _keys_of(self._db, self._table, links_pk(scope))
        self._db.batch_delete(self._table, keys)
        return sum(1 for k in keys if k["sk"]["S"].startswith("O#"))

    def _live_check(self, scope: Scope, record_id: str) -> Item:
        return {
            "ConditionCheck": {
                "TableName": self._table,
                "Key": key(scope_pk(scope), head_sk(record_id)),
                "ConditionExpression": "attribute_exists(pk) AND st <> :erased",
                "ExpressionAttributeValues": {":erased": s("erased")},
            }
        }

    def _live(self, scope: Scope, record_id: str) -> bool:
        item = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(scope_pk(scope), head_sk(record_id)),
            ConsistentRead=True,
        ).get("Item")
        return item is not None and text(item, "st") != "erased"

    def _read(self, pk: str, sk: str) -> Link | None:
        item = self._db.call(
            "get_item", TableName=self._table, Key=key(pk, sk), ConsistentRead=True
        ).get("Item")
        return None if item is None else Link.model_validate_json(text(item, "d"))


class DynamoDBAccessCounts:
    """Access counts in the items table; behaves exactly like ``InMemoryAccessCounts``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def cursor(self, scope: Scope) -> int:
        item = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(access_pk(scope), CURSOR_SK),
            ConsistentRead=True,
        ).get("Item")
        return 0 if item is None else number(item, "n")

    def counts(self, scope: Scope) -> dict[str, int]:
        found: dict[str, int] = {}
        for item in self._db.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :c)",
            ExpressionAttributeValues={":pk": s(access_pk(scope)), ":c": s("C#")},
            ConsistentRead=True,
        ):
            found[text(item, "sk")[2:]] = number(item, "n")
        return found

    def add(self, scope: Scope, counts: Mapping[str, int], *, after: int, upto: int) -> None:
        check_add(counts, after, upto)
        pk = access_pk(scope)
        move: dict[str, Any] = {
            "TableName": self._table,
            "Key": key(pk, CURSOR_SK),
            "UpdateExpression": "SET #n = :upto",
            "ExpressionAttributeNames": {"#n": "n"},
            "ExpressionAttributeValues": {":upto": n(upto)},
            "ConditionExpression": "attribute_not_exists(#n)" if after == 0 else "#n = :after",
        }
        if after:
            move["ExpressionAttributeValues"][":after"] = n(after)
        items: list[Item] = [{"Update": move}]
        for record_id, count in counts.items():
            items.append(
                {
                    "Update": {
                        "TableName": self._table,
                        "Key": key(pk, f"C#{record_id}"),
                        "UpdateExpression": "ADD #n :k",
                        "ExpressionAttributeNames": {"#n": "n"},
                        "ExpressionAttributeValues": {":k": n(count)},
                    }
                }
            )
        try:
            self._db.transact(items)
        except ConflictError:
            raise CountedMeanwhileError(after, self.cursor(scope)) from None

    def raise_counts(self, scope: Scope, counts: Mapping[str, int]) -> int:
        check_counts(counts)
        rose = 0
        for record_id, count in counts.items():
            try:
                self._db.call(
                    "update_item",
                    TableName=self._table,
                    Key=key(access_pk(scope), f"C#{record_id}"),
                    UpdateExpression="SET #n = :k",
                    ConditionExpression="attribute_not_exists(#n) OR #n < :k",
                    ExpressionAttributeNames={"#n": "n"},
                    ExpressionAttributeValues={":k": n(count)},
                )
            except ConflictError:  # held at or above it already
                continue
            rose += 1
        return rose

    def salience(self, scope: Scope) -> dict[str, Salience]:
        found: dict[str, Salience] = {}
        for item in self._db.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :s)",
            ExpressionAttributeValues={":pk": s(access_pk(scope)), ":s": s("S#")},
            ConsistentRead=True,
        ):
            value = Salience.model_validate_json(text(item, "d"))
            found[value.record_id] = value
        return found

    def put_salience(self, scope: Scope, values: Sequence[Salience]) -> None:
        check_salience(values)
        pk = access_pk(scope)
        for value in values:
            item = {**key(pk, f"S#{value.record_id}"), "d": s(value.model_dump_json())}
            self._db.call("put_item", TableName=self._table, Item=item)

    def erase_records(self, scope: Scope, record_ids: Sequence[str]) -> int:
        stored = self.counts(scope)
        measured = self.salience(scope)
        keys = [key(access_pk(scope), f"C#{rid}") for rid in record_ids if rid in stored]
        doomed = [key(access_pk(scope), f"S#{rid}") for rid in record_ids if rid in measured]
        self._db.batch_delete(self._table, keys + doomed)
        return len(keys)

    def erase_scope(self, scope: Scope) -> int:
        keys = _keys_of(self._db, self._table, access_pk(scope))
        self._db.batch_delete(self._table, keys)
        return sum(1 for k in keys if k["sk"]["S"].startswith("C#"))


def _keys_of(db: DynamoDBClient, table: str, pk: str) -> list[Item]:
    return [
        key(pk, text(item, "sk"))
        for item in db.query(
            TableName=table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(pk)},
            ProjectionExpression="pk, sk",
            ConsistentRead=True,
        )
    ]
