"""``RecordDirectory`` on DynamoDB: where each record of a memory lives, in the items table.

    pk = D#<memory_id>   sk = R#<record_id>              a placement: a (actor), ns
                         sk = A#<actor>|<record_id>      the same placement, found by actor: ns
                         sk = N#<namespace>|<actor>      how many placements: a, ns, n

``locate`` is one GetItem of the ``R#`` item. ``actors`` reads the ``N#`` counts under the
prefix (one item per namespace and actor, never one per record), so RetrieveMemoryRecords pays
for the actors it will search, not for their records. ``erase_scope`` finds the actor's
placements through its ``A#`` items. ``|`` occurs in no namespace, actor or record id.

A placement's three items move together in ONE TransactWriteItems, and the ``R#`` Put is
conditioned on the placement read just before (``attribute_not_exists(pk)``, or the actor and
namespace read): two writers moving one record cannot both commit, so the counts never drift.
A count that falls to zero lingers (listing filters ``n > 0``) until the actor's erase deletes
it, conditioned on it still being zero. A fenced placement (``erasures=``) adds to each of its
transactions a ConditionCheck of the scope's ``ERASURES`` item (``erasures.fence_item``).
"""

from __future__ import annotations

import contextlib
import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from cairn.erasure_fence import placement_scope
from cairn.errors import (
    ConflictError,
    ErasedMeanwhileError,
    RecordNotFoundError,
    StoreUnavailableError,
)
from cairn.models import Scope, namespace_matches
from cairn.ports import RecordPlacement
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, key, n, s, scope_pk, text
from cairn.store.dynamodb.deletion_marks import mark_checks, raise_if_marked
from cairn.store.dynamodb.erasures import fence_item, read_erasures

PLACED_FROM, BY_ACTOR_FROM, COUNT_FROM = "R#", "A#", "N#"
# Up to five transaction items a placement (R# Put, A# Put and Delete, two counts): 20 of them
# stay within DynamoDB's 100 items; an erase needs three a placement, so 30.
_PLACE_CHUNK = 20
_ERASE_CHUNK = 30
_ATTEMPTS = 10
_NAMES = {"#a": "a", "#ns": "ns", "#n": "n"}

Where = tuple[str, str]  # (actor, namespace)


def directory_pk(memory_id: str) -> str:
    return f"D#{memory_id}"


def _count_sk(namespace: str, actor: str) -> str:
    return f"{COUNT_FROM}{namespace}|{actor}"


def _back_off(attempt: int) -> None:
    if attempt:
        time.sleep(random.uniform(0, min(0.005 * 2**attempt, 0.2)))  # noqa: S311 - not crypto


class DynamoDBRecordDirectory:
    """Record placements; behaves exactly like ``InMemoryRecordDirectory``."""

    def __init__(self, db: DynamoDBClient, table: str) -> None:
        self._db = db
        self._table = table

    def place(
        self,
        memory_id: str,
        placements: Sequence[RecordPlacement],
        *,
        erasures: int | None = None,
        deletion_fence: bool = False,
    ) -> None:
        """Record where these records live (20 a transaction); an unchanged one writes nothing.
        With ``erasures``, each transaction also checks the scope's erasure count (the
        ``ERASURES`` item the record store keeps in this table) is still that; with
        ``deletion_fence``, that the memory has no deletion mark (``deletion_marks``)."""
        latest = {p.record_id: p for p in placements}  # placed twice in one call: the last wins
        wanted = list(latest.values())
        fence: tuple[str, int] | None = None
        if erasures is not None and wanted:
            scope = placement_scope(memory_id, (p.actor_id for p in wanted))
            fence = (scope_pk(scope), erasures)
        for start in range(0, len(wanted), _PLACE_CHUNK):
            chunk = wanted[start : start + _PLACE_CHUNK]
            self._place_chunk(memory_id, chunk, fence, deletion_fence)

    def _fence(self, fence: tuple[str, int] | None) -> list[Item]:
        if fence is None:
            return []
        check = fence_item(self._table, fence[0], fence[1], bump=False)
        return [check] if check is not None else []

    def _place_chunk(
        self,
        memory_id: str,
        chunk: list[RecordPlacement],
        fence: tuple[str, int] | None,
        deletion_fence: bool,
    ) -> None:
        pk = directory_pk(memory_id)
        for attempt in range(_ATTEMPTS):
            _back_off(attempt)
            found = self._db.batch_get(
                self._table,
                [key(pk, f"{PLACED_FROM}{p.record_id}") for p in chunk],
                projection="sk, #a, #ns",
                names={"#a": "a", "#ns": "ns"},
            )
            before = {
                text(item, "sk").removeprefix(PLACED_FROM): (text(item, "a"), text(item, "ns"))
                for item in found
            }
            writes = self._placement_writes(pk, chunk, before)
            if not writes:
                return
            try:
                marked = mark_checks(self._table, memory_id, deletion_fence)
                self._db.transact([*writes, *self._fence(fence), *marked])
            except (ConflictError, StoreUnavailableError) as exc:
                raise_if_marked(self._db, self._table, memory_id, deletion_fence)
                if fence is not None:
                    now = read_erasures(self._db, self._table, fence[0])
                    if now != fence[1]:
                        raise ErasedMeanwhileError(fence[1], now) from exc
                if not exc.retryable:
                    raise
                continue  # another writer moved one of them: read again and re-plan
            return
        raise StoreUnavailableError("record placements keep changing under this write; retry")

    def _placement_writes(
        self, pk: str, chunk: list[RecordPlacement], before: dict[str, Where]
    ) -> list[Item]:
        writes: list[Item] = []
        counts: Counter[Where] = Counter()
        for placement in chunk:
            now: Where = (placement.actor_id, placement.namespace)
            old = before.get(placement.record_id)
            if old == now:
                continue
            writes.append(self._put_placed(pk, placement, old))
            by_actor = {
                **key(pk, f"{BY_ACTOR_FROM}{placement.actor_id}|{placement.record_id}"),
                "ns": s(placement.namespace),
            }
            writes.append({"Put": {"TableName": self._table, "Item": by_actor}})
            counts[now] += 1
            if old is not None:
                counts[old] -= 1
                if old[0] != now[0]:  # the same actor's A# item was just overwritten
                    stale = key(pk, f"{BY_ACTOR_FROM}{old[0]}|{placement.record_id}")
                    writes.append({"Delete": {"TableName": self._table, "Key": stale}})
        writes += [self._count(pk, where, delta) for where, delta in counts.items() if delta]
        return writes

    def _put_placed(self, pk: str, placement: RecordPlacement, old: Where | None) -> Item:
        put: dict[str, Any] = {
            "TableName": self._table,
            "Item": {
                **key(pk, f"{PLACED_FROM}{placement.record_id}"),
                "a": s(placement.actor_id),
                "ns": s(placement.namespace),
            },
        }
        if old is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "#a = :old_a AND #ns = :old_ns"
            put["ExpressionAttributeNames"] = {"#a": "a", "#ns": "ns"}
            put["ExpressionAttributeValues"] = {":old_a": s(old[0]), ":old_ns": s(old[1])}
        return {"Put": put}

    def _count(self, pk: str, where: Where, delta: int) -> Item:
        actor, namespace = where
        update = {
            "TableName": self._table,
            "Key": key(pk, _count_sk(namespace, actor)),
            "UpdateExpression": "ADD #n :delta SET #a = :a, #ns = :ns",
            "ExpressionAttributeNames": _NAMES,
            "ExpressionAttributeValues": {":delta": n(delta), ":a": s(actor), ":ns": s(namespace)},
        }
        return {"Update": update}

    def locate(self, memory_id: str, record_id: str) -> RecordPlacement:
        """Where the record lives (one GetItem); ``RecordNotFoundError`` if never placed."""
        item = self._db.call(
            "get_item",
            TableName=self._table,
            Key=key(directory_pk(memory_id), f"{PLACED_FROM}{record_id}"),
            ConsistentRead=True,
        ).get("Item")
        if item is None:
            raise RecordNotFoundError(record_id)
        return RecordPlacement(
            record_id=record_id, actor_id=text(item, "a"), namespace=text(item, "ns")
        )

    def actors(self, memory_id: str, *, namespace_prefix: str | None = None) -> tuple[str, ...]:
        """Actors, sorted, with placements under the prefix: one Query of the ``N#`` counts."""
        stem = (namespace_prefix or "").rstrip("/")
        found = {
            text(item, "a")
            for item in self._db.query(
                TableName=self._table,
                KeyConditionExpression="pk = :pk AND begins_with(sk, :stem)",
                FilterExpression="#n > :zero",
                ProjectionExpression="#a, #ns",
                ExpressionAttributeNames=_NAMES,
                ExpressionAttributeValues={
                    ":pk": s(directory_pk(memory_id)),
                    ":stem": s(f"{COUNT_FROM}{stem}"),
                    ":zero": n(0),
                },
                ConsistentRead=True,
            )
            if not namespace_prefix or namespace_matches(text(item, "ns"), namespace_prefix)
        }
        return tuple(sorted(found))

    def erase_scope(self, scope: Scope) -> int:
        """Forget the actor's placements (30 a transaction), then its emptied counts."""
        pk = directory_pk(scope.memory_id)
        forgotten = 0
        emptied: set[str] = set()
        for attempt in range(_ATTEMPTS):
            _back_off(attempt)
            placed = list(self._by_actor(pk, scope.actor_id))
            try:
                for start in range(0, len(placed), _ERASE_CHUNK):
                    chunk = placed[start : start + _ERASE_CHUNK]
                    self._db.transact(self._erase_writes(pk, scope.actor_id, chunk))
                    forgotten += len(chunk)
                    emptied |= {namespace for _, namespace in chunk}
            except (ConflictError, StoreUnavailableError) as exc:
                if not exc.retryable:
                    raise
                continue  # a record was moved away meanwhile: read the actor's items again
            # A placement made while this ran is left for the next erase, as events are.
            break
        else:
            raise StoreUnavailableError("the actor's placements keep changing; erase again")
        for namespace in sorted(emptied):
            self._drop_if_empty(key(pk, _count_sk(namespace, scope.actor_id)))
        return forgotten

    def _by_actor(self, pk: str, actor: str) -> Iterator[tuple[str, str]]:
        prefix = f"{BY_ACTOR_FROM}{actor}|"
        for item in self._db.query(
            TableName=self._table,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
            ProjectionExpression="sk, #ns",
            ExpressionAttributeNames={"#ns": "ns"},
            ExpressionAttributeValues={":pk": s(pk), ":p": s(prefix)},
            ConsistentRead=True,
        ):
            yield text(item, "sk").removeprefix(prefix), text(item, "ns")

    def _erase_writes(self, pk: str, actor: str, chunk: list[tuple[str, str]]) -> list[Item]:
        writes: list[Item] = []
        for record_id, _ in chunk:
            placed = {
                "TableName": self._table,
                "Key": key(pk, f"{PLACED_FROM}{record_id}"),
                "ConditionExpression": "#a = :a",
                "ExpressionAttributeNames": {"#a": "a"},
                "ExpressionAttributeValues": {":a": s(actor)},
            }
            by_actor = key(pk, f"{BY_ACTOR_FROM}{actor}|{record_id}")
            writes += [
                {"Delete": placed},
                {"Delete": {"TableName": self._table, "Key": by_actor}},
            ]
        counts = Counter(namespace for _, namespace in chunk)
        writes += [self._count(pk, (actor, ns), -count) for ns, count in counts.items()]
        return writes

    def _drop_if_empty(self, count_key: Item) -> None:
        """Delete a count that is zero; one that a new placement raised meanwhile stays."""
        with contextlib.suppress(ConflictError):
            self._db.call(
                "delete_item",
                TableName=self._table,
                Key=count_key,
                ConditionExpression="#n <= :zero",
                ExpressionAttributeNames={"#n": "n"},
                ExpressionAttributeValues={":zero": n(0)},
            )
