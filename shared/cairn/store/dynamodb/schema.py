"""The key schema of cairn's two DynamoDB tables: the one source the CDK stack and tests read.

Plain data on purpose (no boto3, no CDK): the stack turns ``TABLES`` into ``ddb.Table``
constructs, test fixtures turn it into ``CreateTable`` calls with ``create_table_request``, and
``cairn.store.dynamodb`` names the same attributes and indexes. Change a key here and every one
of them follows. What lives under these keys is described in ``docs/dynamodb.md``.

- ``items``: one partition per scope holding record heads, record versions (with their
  vectors) and recall journal entries. The sparse ``live`` index holds only active heads, keyed
  by scope and record id, so listing a scope's live memory never reads retired records. The
  items table also holds the rollout index (session counters, rollouts); its sparse ``due``
  index is how the extraction sweep finds idle sessions and stalled rollouts in every scope.
- ``events``: one partition per session holding its events in (timestamp, event id) order, plus
  per-actor session summaries and per-memory actor summaries. The local ``by_event_id`` index
  finds an event by its id inside its session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

AttributeType = Literal["S", "N", "B"]
Projection = Literal["ALL", "KEYS_ONLY", "INCLUDE"]


@dataclass(frozen=True, slots=True)
class KeyAttribute:
    """One key attribute: its name and DynamoDB scalar type."""

    name: str
    type: AttributeType = "S"


@dataclass(frozen=True, slots=True)
class Index:
    """A secondary index; a local one shares the table's partition key."""

    name: str
    partition_key: KeyAttribute
    sort_key: KeyAttribute
    projection: Projection
    non_key_attributes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TableSchema:
    """A table's keys, indexes and TTL attribute; ``logical_name`` is not the deployed name."""

    logical_name: str
    partition_key: KeyAttribute
    sort_key: KeyAttribute
    global_indexes: tuple[Index, ...] = ()
    local_indexes: tuple[Index, ...] = ()
    ttl_attribute: str | None = None


PARTITION_KEY = KeyAttribute("pk")
SORT_KEY = KeyAttribute("sk")
# Epoch seconds after which DynamoDB may delete the item (idempotency keys, consumed rollouts).
TTL_ATTRIBUTE = "expires_at"

# Sparse: only active, non-erased heads carry ``lpk``/``lsk``. Projects what a listing returns
# (``d``, the version JSON) and what it filters on (``ns``), never the vector bytes.
LIVE_INDEX = Index(
    name="live",
    partition_key=KeyAttribute("lpk"),
    sort_key=KeyAttribute("lsk"),
    projection="INCLUDE",
    non_key_attributes=("d", "ns"),
)

# Local, so it reads strongly consistent; projects the event's creation time for delete_event.
EVENT_ID_INDEX = Index(
    name="by_event_id",
    partition_key=PARTITION_KEY,
    sort_key=KeyAttribute("eid"),
    projection="INCLUDE",
    non_key_attributes=("ca",),
)

# Sparse: only what the extraction sweep must look at carries ``dpk``/``dsk`` (a session's
# counters while an idle timeout runs, a rollout until it is announced and consumed), keyed by
# a shard and the time it falls due, across every scope. Projects the item's JSON.
DUE_INDEX = Index(
    name="due",
    partition_key=KeyAttribute("dpk"),
    sort_key=KeyAttribute("dsk"),
    projection="INCLUDE",
    non_key_attributes=("d",),
)

ITEMS = TableSchema(
    logical_name="items",
    partition_key=PARTITION_KEY,
    sort_key=SORT_KEY,
    global_indexes=(LIVE_INDEX, DUE_INDEX),
    ttl_attribute=TTL_ATTRIBUTE,
)

EVENTS = TableSchema(
    logical_name="events",
    partition_key=PARTITION_KEY,
    sort_key=SORT_KEY,
    local_indexes=(EVENT_ID_INDEX,),
    ttl_attribute=TTL_ATTRIBUTE,
)

TABLES: tuple[TableSchema, ...] = (ITEMS, EVENTS)


def _key_schema(partition: KeyAttribute, sort: KeyAttribute) -> list[dict[str, str]]:
    return [
        {"AttributeName": partition.name, "KeyType": "HASH"},
        {"AttributeName": sort.name, "KeyType": "RANGE"},
    ]


def _index_request(index: Index) -> dict[str, Any]:
    projection: dict[str, Any] = {"ProjectionType": index.projection}
    if index.non_key_attributes:
        projection["NonKeyAttributes"] = list(index.non_key_attributes)
    return {
        "IndexName": index.name,
        "KeySchema": _key_schema(index.partition_key, index.sort_key),
        "Projection": projection,
    }


def key_attributes(table: TableSchema) -> tuple[KeyAttribute, ...]:
    """Every attribute used as a key by the table or one of its indexes, each once."""
    found: dict[str, KeyAttribute] = {}
    for index in (*table.global_indexes, *table.local_indexes):
        for attribute in (index.partition_key, index.sort_key):
            found.setdefault(attribute.name, attribute)
    found.setdefault(table.partition_key.name, table.partition_key)
    found.setdefault(table.sort_key.name, table.sort_key)
    return tuple(sorted(found.values(), key=lambda a: a.name))


def create_table_request(table: TableSchema, table_name: str) -> dict[str, Any]:
    """``CreateTable`` parameters for ``table`` named ``table_name``, billed on demand.

    TTL is not part of ``CreateTable``; enable it with ``UpdateTimeToLive`` on
    ``table.ttl_attribute`` (the CDK stack sets it on the table construct).
    """
    request: dict[str, Any] = {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": a.name, "AttributeType": a.type} for a in key_attributes(table)
        ],
        "KeySchema": _key_schema(table.partition_key, table.sort_key),
    }
    if table.global_indexes:
        request["GlobalSecondaryIndexes"] = [_index_request(i) for i in table.global_indexes]
    if table.local_indexes:
        request["LocalSecondaryIndexes"] = [_index_request(i) for i in table.local_indexes]
    return request
