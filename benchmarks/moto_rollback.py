"""moto's TransactWriteItems without a deep copy of the whole table (benchmarks only).

moto keeps a transaction all or nothing by deep-copying every table the transaction names,
once per item, before it writes anything, and putting the copy back when any item fails. At
100,000 records a scope's partition holds some 200,000 items, so every recall's journal
transaction (a GetItem and a two-item TransactWriteItems) spent minutes in ``deepcopy`` on
this machine, whatever the recall read. Inside ``touched_item_rollback`` the copy moto keeps
is the table with its partitions copied one level (the same item objects) and the items the
transaction names deep-copied: a transaction writes nothing else, so putting that copy back
undoes it as exactly as the whole copy did. Requests, answers, conditions and cancellation
reasons are moto's own; ``tests/unit/test_moto_seed.py`` runs a committed and a cancelled
transaction with and without it and compares the tables and the errors.
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
