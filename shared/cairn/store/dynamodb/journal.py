"""``JournalStore`` on DynamoDB: recall journal entries filed as links of their scope's hash
chain (``cairn.journal_chain``).

An entry is one item (``J#<journal_id>`` in the scope's records partition); the scope's head
is the item ``JH`` (``q`` last sequence, ``g`` its chain digest). Filing an entry is one
TransactWriteItems: the entry's Put, ``attribute_not_exists(pk)`` (entries are immutable),
and the head's Put conditioned on the head that was read (``#q = :was``, or absent for the
first), so two recalls racing in one scope never file two entries under one sequence: the
loser reads the head again and links after the winner.
"""

from __future__ import annotations

from cairn.errors import ConflictError, JournalNotFoundError
from cairn.journal_chain import link
from cairn.models import JournalEntry, Scope
from cairn.ports import ChainHead
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import (
    JOURNAL_FROM,
    Item,
    check_item_size,
    decode_journal,
    journal_item,
    journal_sk,
    key,
    n,
    number,
    s,
    scope_pk,
    text,
)

HEAD_SK = "JH"
# Recalls of one scope racing to file: each lost round reads the head again.
_LINK_ROUNDS = 8
_ABSENT = "attribute_not_exists(pk)"


class DynamoDBJournalStore:
    """Recall journal entries in the items table; behaves like ``InMemoryJournalStore``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def put(self, entry: JournalEntry) -> None:
        """File the entry as the next link of its scope's chain: a GetItem of the head, one
        TransactWriteItems (the first filing of an id stands)."""
        pk = scope_pk(entry.scope)
        for _ in range(_LINK_ROUNDS):
            head = self.head(entry.scope)
            linked, new_head = link(entry, head)
            item = journal_item(linked)
            check_item_size(item, "the journal entry", "record fewer selected entries")
            entry_put = {"TableName": self._table, "Item": item, "ConditionExpression": _ABSENT}
            try:
                self._db.transact([{"Put": entry_put}, self._put_head(pk, head, new_head)])
                return
            except ConflictError:
                if self._filed(pk, entry.journal_id):
                    return  # a second put of the id: the first filing stands
        raise ConflictError(
            f"the recall journal of this scope moved {_LINK_ROUNDS} times while an entry was "
            "filed; try again"
        )

    def _put_head(self, pk: str, was: ChainHead | None, now: ChainHead) -> Item:
        put: dict[str, object] = {
            "TableName": self._table,
            "Item": {**key(pk, HEAD_SK), "q": n(now.sequence), "g": s(now.digest)},
        }
        if was is None:
            put["ConditionExpression"] = _ABSENT
        else:
            put["ConditionExpression"] = "#q = :was"
            put["ExpressionAttributeNames"] = {"#q": "q"}
            put["ExpressionAttributeValues"] = {":was": n(was.sequence)}
        return {"Put": put}

    def _filed(self, pk: str, journal_id: str) -> bool:
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(pk, journal_sk(journal_id)),
            ConsistentRead=True,
            ProjectionExpression="pk",
        ).get("Item")
        return found is not None

    def get(self, scope: Scope, journal_id: str) -> JournalEntry:
        """The entry; ``JournalNotFoundError`` if it is not in this scope (one GetItem)."""
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(scope_pk(scope), journal_sk(journal_id)),
            ConsistentRead=True,
        ).get("Item")
        if found is None:
            raise JournalNotFoundError(journal_id)
        return decode_journal(found)

    def chain(self, scope: Scope, *, after: int = 0, limit: int = 100) -> tuple[JournalEntry, ...]:
        """The chained entries after ``after`` in sequence order: one Query over the scope's
        entries (verification is an audit, not a hot path)."""
        found = [e for e in map(decode_journal, self._entries(scope)) if e.sequence > after]
        return tuple(sorted(found, key=lambda e: e.sequence)[:limit])

    def head(self, scope: Scope) -> ChainHead | None:
        found = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(scope_pk(scope), HEAD_SK),
            ConsistentRead=True,
        ).get("Item")
        if found is None:
            return None
        return ChainHead(sequence=number(found, "q"), digest=text(found, "g"))

    def erase_scope(self, scope: Scope) -> int:
        """Delete every journal entry of the scope and its head: one Query, then 25 deletes a
        request; returns the count of entries."""
        keys = [key(text(item, "pk"), text(item, "sk")) for item in self._entries(scope)]
        self._db.batch_delete(self._table, [*keys, key(scope_pk(scope), HEAD_SK)])
        return len(keys)

    def _entries(self, scope: Scope) -> list[Item]:
        return list(
            self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": s(scope_pk(scope)), ":prefix": s(JOURNAL_FROM)},
                ConsistentRead=True,
            )
        )
