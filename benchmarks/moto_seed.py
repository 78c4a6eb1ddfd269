"""Seeding a moto table in bulk with exactly the items the product's ``apply`` writes.

moto deep-copies the whole table for every item of a TransactWriteItems (its rollback), so
filling a scope of 100,000 records one ``apply`` transaction at a time is quadratic: hours on
moto. ``seeding_store`` is the product's own ``DynamoDBRecordStore`` (the same ``plan_writes``,
head read, change-feed sequence, generation bump, actor marker and item codec) over a client
whose ``transact`` sends the transaction's writes without a transaction: its Puts by
BatchWriteItem (25 a request) or straight to moto's backend, its Updates and Deletes one
request each, with their own conditions; ConditionChecks and Put conditions are not checked
(no Put condition can fail in a table only this one writer fills). Every other request is the
product's own.

For a single writer that is the same table, item for item and byte for byte:
``tests/unit/test_moto_seed.py`` compares a table written this way with one written through
the shipped transactions. It is for seeding benchmarks only: it is not atomic.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from cairn.ports import Clock
from cairn.store.dynamodb.client import BATCH_WRITE_ITEMS, DynamoDBClient
from cairn.store.dynamodb.codec import Item
from cairn.store.dynamodb.records import DynamoDBRecordStore

SEEDING = (
    "the product's own apply (same items, byte for byte), each transaction's Puts handed "
    "to moto's backend directly and its Update sent as UpdateItem (benchmarks/moto_seed.py)"
)


def _wire(value: Any) -> Any:
    """A typed value as moto holds it after the wire: binary base64-encoded, as JSON sends it."""
    if isinstance(value, dict):
        return {
            kind: (
                base64.b64encode(inner).decode("ascii")
                if kind == "B"
                else [base64.b64encode(b).decode("ascii") for b in inner]
                if kind == "BS"
                else _wire(inner)
            )
            for kind, inner in value.items()
        }
    if isinstance(value, list):
        return [_wire(inner) for inner in value]
    return value


class BulkSeedClient(DynamoDBClient):
    """A ``DynamoDBClient`` whose transactions are sent as plain writes (see the docstring).

    With ``backend`` (moto's DynamoDB backend of the client's account and region) the Puts are
    handed to it directly, as its BatchWriteItem handler would after parsing the request.
    """

    def __init__(self, client: Any, backend: Any = None) -> None:
        super().__init__(client)
        self._backend = backend
        self.transactions = 0

    def transact(self, items: Sequence[Item]) -> None:
        self.transactions += 1
        puts: dict[str, list[Item]] = {}
        for entry in items:
            ((kind, request),) = entry.items()
            if kind == "Put":
                puts.setdefault(request["TableName"], []).append(request["Item"])
            elif kind == "Update":
                self.call("update_item", **request)
            elif kind == "Delete":
                self.call("delete_item", **request)
            elif kind != "ConditionCheck":
                raise ValueError(f"not a transaction item: {kind}")
        for table, table_items in puts.items():
            if self._backend is not None:
                for item in table_items:
                    self._backend.put_item(table, {k: _wire(v) for k, v in item.items()})
                continue
            for start in range(0, len(table_items), BATCH_WRITE_ITEMS):
                chunk = table_items[start : start + BATCH_WRITE_ITEMS]
                request = {table: [{"PutRequest": {"Item": item}} for item in chunk]}
                left = self.call("batch_write_item", RequestItems=request).get("UnprocessedItems")
                if left:
                    raise RuntimeError("moto left writes unprocessed while seeding")


def moto_backend(region: str) -> Any:
    """moto's DynamoDB backend of the default account in ``region`` (inside ``mock_aws``)."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[DEFAULT_ACCOUNT_ID][region]


def seeding_store(
    client: Any, table: str, clock: Clock, *, backend: Any = None
) -> DynamoDBRecordStore:
    """The product's record store over ``client``, its transactions sent in bulk (through
    ``backend`` directly when given)."""
    return DynamoDBRecordStore(BulkSeedClient(client, backend), table, clock)


def sort_partitions(backend: Any, table: str) -> None:
    """Each partition of moto's ``table`` held in sort-key order, as DynamoDB keeps it.

    moto sorts a partition's items on every Query page; items put in seeding order make each
    sort n log n (minutes a page-by-page read of a 100,000-record scope), in key order it is
    linear. Only the order moto iterates in moves: every Query sorts anyway, and a Scan's order
    is DynamoDB's own business."""
    found = backend.get_table(table)
    found.__dict__.pop("_bench_sorted_items", None)  # moto_rollback.sorted_once's
    if found.has_range_key:
        for hash_value, rows in list(found.items.items()):
            found.items[hash_value] = dict(sorted(rows.items(), key=lambda row: row[0]))
