"""moto's TransactWriteItems without a deep copy of the whole table, and its Query without a
sort of the whole table per page (benchmarks only).

moto keeps a transaction all or nothing by deep-copying every table the transaction names,
once per item, before it writes anything, and putting the copy back when any item fails. At
100,000 records a scope's partition holds some 200,000 items, so every recall's journal
transaction (a GetItem and a two-item TransactWriteItems) spent minutes in ``deepcopy`` on
this machine, whatever the recall read. Inside ``touched_item_rollback`` the copy moto keeps
is the table with its partitions copied one level (the same item objects) and the items the
transaction names deep-copied: a transaction writes nothing else, so putting that copy back
undoes it as exactly as the whole copy did. Requests, answers, conditions and cancellation
reasons are moto's own. ``sorted_once`` likewise keeps moto's sorted list of the table's items
(which its Query builds for every page: a whole read of a 100,000-record scope, some 200
pages, is quadratic) until a put or a delete changes the items; an update changes an item in
place, so the list still holds it. ``tests/unit/test_moto_seed.py`` runs a committed and a
cancelled transaction with and without both, reading pages between, and compares the tables,
the pages and the errors.
"""

from __future__ import annotations

import copy
import types
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def _light_copy(table: Any, ops: list[dict[str, Any]]) -> Any:
    """``table`` as moto's rollback needs it: partitions copied, the named items deep."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    clone = copy.copy(table)
    clone.__dict__.pop(_SORTED, None)  # its own items: sorted afresh when asked
    clone.items = defaultdict(dict)
    for hash_value, rows in table.items.items():
        clone.items[hash_value] = dict(rows) if table.has_range_key else rows
    for op in ops:
        attrs = op.get("Key") or op["Item"]
        hash_value = DynamoType(attrs[table.hash_key_attr])
        if table.has_range_key:
            range_value = DynamoType(attrs[table.range_key_attr])
            if range_value in table.items.get(hash_value, {}):
                old = table.items[hash_value][range_value]
                clone.items[hash_value][range_value] = copy.deepcopy(old)
        elif hash_value in table.items:
            clone.items[hash_value] = copy.deepcopy(table.items[hash_value])
    return clone


_SORTED = "_bench_sorted_items"


@contextmanager
def sorted_once() -> Iterator[None]:
    """moto's ``Table.all_items`` (every item of the table sorted by key, which moto computes
    for every Query page) kept between the puts and deletes that change the table's items."""
    from moto.dynamodb.models.table import Table

    all_items, put_item, delete_item = Table.all_items, Table.put_item, Table.delete_item

    def cached(self: Any) -> Any:
        if _SORTED not in self.__dict__:
            self.__dict__[_SORTED] = all_items(self)
        return list(self.__dict__[_SORTED])

    def put(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.__dict__.pop(_SORTED, None)
        return put_item(self, *args, **kwargs)

    def delete(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.__dict__.pop(_SORTED, None)
        return delete_item(self, *args, **kwargs)

    Table.all_items, Table.put_item, Table.delete_item = cached, put, delete
    try:
        yield
    finally:
        Table.all_items, Table.put_item, Table.delete_item = all_items, put_item, delete_item


@contextmanager
def touched_item_rollback() -> Iterator[None]:
    """moto's transactions keep only the items they name for their rollback, meanwhile."""
    from moto.dynamodb import models

    original = models.DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        named: dict[str, list[dict[str, Any]]] = {}
        for entry in transact_items:
            (op,) = entry.values()
            if op.get("TableName") in self.tables:
                named.setdefault(op["TableName"], []).append(op)
        kept = {
            id(self.tables[name]): _light_copy(self.tables[name], ops)
            for name, ops in named.items()
        }

        def deepcopy(value: Any, memo: Any = None) -> Any:
            return kept[id(value)] if id(value) in kept else copy.deepcopy(value, memo)

        models.copy = types.SimpleNamespace(deepcopy=deepcopy)
        try:
            original(self, transact_items)
        finally:
            models.copy = copy

    models.DynamoDBBackend.transact_write_items = transact_write_items
    try:
        yield
    finally:
        models.DynamoDBBackend.transact_write_items = original
