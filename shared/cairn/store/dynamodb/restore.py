"""Restoring one actor of the deployed stack from a point-in-time restore of its tables.

DynamoDB's point-in-time recovery restores a whole table, into a new table
(``RestoreTableToPointInTime``); an operator usually wants one actor back, not everyone's
memory rewound. ``restore_actor`` copies one scope's items from the restored tables into the
live ones, and deletes the scope's live items the backup does not hold, so the actor reads
exactly as it did at the restore point while every other actor keeps what it has now.

A scope's items, by the key design (docs/dynamodb.md), found with Queries and GetItems, never a
Scan of anyone else's data:

- items table: partition ``R#<scope>`` (heads, versions, journal and its chain head, counters,
  rollouts; the erasure count is kept live and counts the restore as one more erasure), the
  actor's marker in ``RA#<memory>``; in
  ``D#<memory>``, the actor's placements ``A#<actor>|<record>``, the records' ``R#<record>``
  entries and the per-namespace counts ``N#<namespace>|<actor>``;
- events table: ``S#<scope>`` (session summaries), each session's ``E#<scope>|<session>`` and
  ``C#<scope>|<session>``, ``CS#<scope>``, ``K#<scope>`` (append keys), and the actor's row of
  ``A#<memory>``.

Items are copied whole (index attributes with them, so the GSIs follow). It is not one
transaction: run it while the actor is quiet, and again if it stopped -- a second run finds
nothing more to change. Staged rollout payloads (S3) are not restored: the bucket is
deliberately unversioned; a restored pending rollout whose payload is gone fails with its reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from cairn.errors import StoreUnavailableError
from cairn.models import Scope
from cairn.store.dynamodb.client import DynamoDBClient
from cairn.store.dynamodb.codec import Item, actors_pk, key, s, scope_pk, sessions_pk, text
from cairn.store.dynamodb.directory import directory_pk
from cairn.store.dynamodb.erasures import ERASURES_SK, count_erasure
from cairn.store.dynamodb.erasures import actors_pk as records_actors_pk

_BATCH = 25


@dataclass(frozen=True)
class Tables:
    items: str
    events: str


@dataclass(frozen=True)
class RestoreReport:
    """How many items were written from the backup and how many live ones were deleted."""

    written: int
    deleted: int


def restore_actor(
    db: DynamoDBClient, scope: Scope, *, source: Tables, target: Tables
) -> RestoreReport:
    """Make ``scope`` in the ``target`` tables exactly what it is in the ``source`` tables (a
    point-in-time restore); every other scope is left as it is."""
    written = deleted = 0
    for role in ("items", "events"):
        # The live erasure count is kept, never rewound (cairn.erasure_fence).
        wanted = _by_key(i for i in actor_items(db, scope, role, source) if not _count(i))
        present = _by_key(i for i in actor_items(db, scope, role, target) if not _count(i))
        stale = [key(*k) for k in present if k not in wanted]
        changed = [item for k, item in wanted.items() if present.get(k) != item]
        table = target.items if role == "items" else target.events
        _write(db, table, [{"DeleteRequest": {"Key": k}} for k in stale])
        _write(db, table, [{"PutRequest": {"Item": item}} for item in changed])
        written, deleted = written + len(changed), deleted + len(stale)
    if written or deleted:  # the scope was rewritten: a plan read before it must not land
        count_erasure(db, target.items, scope_pk(scope))
    return RestoreReport(written=written, deleted=deleted)


def _count(item: Item) -> bool:
    return text(item, "sk") == ERASURES_SK


def actor_items(db: DynamoDBClient, scope: Scope, role: str, tables: Tables) -> Iterator[Item]:
    """Every item of ``scope`` in the ``role`` table (``items`` or ``events``) of ``tables``."""
    if role == "items":
        yield from _partition(db, tables.items, scope_pk(scope))
        yield from _directory(db, tables.items, scope)
        marker = _get(db, tables.items, key(records_actors_pk(scope.memory_id), scope.actor_id))
        if marker is not None:  # the memory's marker that the actor holds records
            yield marker
        return
    summaries = list(_partition(db, tables.events, sessions_pk(scope)))
    yield from summaries
    for summary in summaries:
        session = text(summary, "sk")
        yield from _partition(db, tables.events, f"E#{scope}|{session}")
        yield from _partition(db, tables.events, f"C#{scope}|{session}")
    chunked = list(_partition(db, tables.events, f"CS#{scope}"))
    yield from chunked
    for row in chunked:  # a session with history chunks and no events left
        if not any(text(summary, "sk") == text(row, "sk") for summary in summaries):
            yield from _partition(db, tables.events, f"C#{scope}|{text(row, 'sk')}")
    yield from _partition(db, tables.events, f"K#{scope}")
    actor = _get(db, tables.events, key(actors_pk(scope.memory_id), scope.actor_id))
    if actor is not None:
        yield actor


def _directory(db: DynamoDBClient, table: str, scope: Scope) -> Iterator[Item]:
    pk = directory_pk(scope.memory_id)
    for placement in _partition(db, table, pk, begins=f"A#{scope.actor_id}|"):
        yield placement
        record_id = text(placement, "sk").rpartition("|")[2]
        entry = _get(db, table, key(pk, f"R#{record_id}"))
        if entry is not None and text(entry, "a") == scope.actor_id:
            yield entry
    for count in _partition(db, table, pk, begins="N#"):
        if text(count, "sk").endswith(f"|{scope.actor_id}"):
            yield count


def _partition(db: DynamoDBClient, table: str, pk: str, *, begins: str = "") -> Iterator[Item]:
    condition = "pk = :pk" + (" AND begins_with(sk, :begins)" if begins else "")
    values = {":pk": s(pk), **({":begins": s(begins)} if begins else {})}
    yield from db.query(
        TableName=table,
        KeyConditionExpression=condition,
        ExpressionAttributeValues=values,
        ConsistentRead=True,
    )


def _get(db: DynamoDBClient, table: str, item_key: Item) -> Item | None:
    found: Item | None = db.call(
        "get_item", TableName=table, Key=item_key, ConsistentRead=True
    ).get("Item")
    return found


def _by_key(items: Iterator[Item]) -> dict[tuple[str, str], Item]:
    return {(text(item, "pk"), text(item, "sk")): item for item in items}


def _write(db: DynamoDBClient, table: str, requests: list[Item]) -> None:
    """BatchWriteItem, 25 a request, retrying what DynamoDB leaves unprocessed."""
    for start in range(0, len(requests), _BATCH):
        pending: dict[str, list[Item]] = {table: requests[start : start + _BATCH]}
        for _ in range(8):
            answer = db.call("batch_write_item", RequestItems=pending)
            pending = answer.get("UnprocessedItems") or {}
            if not pending:
                break
        else:
            raise StoreUnavailableError("DynamoDB kept writes unprocessed; run the restore again")
