"""DynamoDB's billing rules, applied to the items a request really read or wrote.

moto does not meter: asked for ``ReturnConsumedCapacity`` it answers placeholders (a 5 KB
PutItem reports 1.0 unit, a strongly consistent GetItem of it 0.5, TransactWriteItems nothing),
so every unit in docs/cost.md is computed here from item sizes, by the rules of the DynamoDB
developer guide ("Item sizes and formats", "Read/write capacity mode"):

- an item's size is the UTF-8 length of its attribute names plus the size of each value;
- a read request unit (RRU) reads up to 4 KB strongly consistent, two such reads eventually
  consistent (0.5 RRU); GetItem and BatchGetItem round each item up on its own, Query rounds
  the sum of every item it evaluated (filtered out or not) once;
- a write request unit (WRU) writes up to 1 KB, each item rounded up on its own, and the larger
  of the item's size before and after the write counts;
- a transaction bills every item twice;
- a write that adds, changes or removes an index entry also writes the index: the entry's size
  (keys plus projected attributes) in WRU, a move of its key being a delete plus a put.
  Assumption, stated in the doc: index writes are billed once, never doubled by a transaction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

Item = Mapping[str, Any]  # a DynamoDB item as the low-level client spells it: {"name": {"S": ...}}

READ_UNIT_BYTES = 4096
WRITE_UNIT_BYTES = 1024
# Storage is billed on item size plus this much per item, in the table and in each index.
STORAGE_OVERHEAD_BYTES = 100


def _number_size(raw: str) -> int:
    """1 byte per two significant digits, plus 1 (leading and trailing zeros are not stored)."""
    digits = Decimal(raw).normalize().as_tuple().digits
    significant = len("".join(map(str, digits)).strip("0")) or 1
    return (significant + 1) // 2 + 1


def value_size(value: Mapping[str, Any]) -> int:
    """Bytes DynamoDB counts for one typed value (``{"S": "x"}``, ``{"M": {...}}`` ...)."""
    ((kind, raw),) = value.items()
    if kind == "S":
        return len(str(raw).encode("utf-8"))
    if kind == "N":
        return _number_size(str(raw))
    if kind == "B":
        return len(raw)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(v).encode("utf-8")) for v in raw)
    if kind == "NS":
        return sum(_number_size(str(v)) for v in raw)
    if kind == "BS":
        return sum(len(v) for v in raw)
    if kind == "L":
        return 3 + sum(value_size(v) + 1 for v in raw)
    if kind == "M":
        return 3 + sum(len(k.encode("utf-8")) + value_size(v) + 1 for k, v in raw.items())
    raise ValueError(f"unknown DynamoDB type {kind!r}")


def item_size(item: Item | None) -> int:
    """Bytes DynamoDB bills for ``item``: names plus values; 0 for no item."""
    if not item:
        return 0
    return sum(len(name.encode("utf-8")) + value_size(value) for name, value in item.items())


def read_units(size_bytes: int, *, consistent: bool) -> float:
    """RRU for reading ``size_bytes`` in one rounding (one item, or one Query's sum); at least
    the minimum a read costs even when it finds nothing."""
    units = max(1, math.ceil(size_bytes / READ_UNIT_BYTES))
    return float(units) if consistent else units / 2


def item_write_units(before: Item | None, after: Item | None) -> int:
    """WRU for one item written: the larger of its sizes before and after, in 1 KB units."""
    return max(1, math.ceil(max(item_size(before), item_size(after)) / WRITE_UNIT_BYTES))


@dataclass(frozen=True)
class IndexShape:
    """What an index stores of an item: its key attributes and which others it projects."""

    name: str
    keys: tuple[str, ...]
    table_keys: tuple[str, ...]
    projection: str  # ALL, KEYS_ONLY or INCLUDE
    projected: tuple[str, ...] = ()

    def entry(self, item: Item | None) -> dict[str, Any] | None:
        """The index entry ``item`` has (``None`` if it lacks an index key: a sparse index)."""
        if not item or any(k not in item for k in self.keys):
            return None
        if self.projection == "ALL":
            return dict(item)
        kept = set(self.keys) | set(self.table_keys)
        if self.projection == "INCLUDE":
            kept |= set(self.projected)
        return {name: value for name, value in item.items() if name in kept}


def index_write_units(index: IndexShape, before: Item | None, after: Item | None) -> int:
    """WRU the index costs when an item goes from ``before`` to ``after`` (0 if untouched)."""
    old, new = index.entry(before), index.entry(after)
    if old == new:
        return 0
    units = 0
    if new is not None:
        units += math.ceil(item_size(new) / WRITE_UNIT_BYTES)
    moved = old is not None and (new is None or any(old[k] != new[k] for k in index.keys))
    if moved and old is not None:
        units += math.ceil(item_size(old) / WRITE_UNIT_BYTES)
    return units


def write_units(
    indexes: Sequence[IndexShape], before: Item | None, after: Item | None, *, transactional: bool
) -> tuple[int, int]:
    """(table WRU, index WRU) of one item's write; a transaction doubles the table's share."""
    table = item_write_units(before, after) * (2 if transactional else 1)
    return table, sum(index_write_units(index, before, after) for index in indexes)


def stored_bytes(items: Sequence[Item], indexes: Sequence[IndexShape]) -> int:
    """Billable storage of ``items``: each item and each of its index entries, plus overhead."""
    total = 0
    for item in items:
        total += item_size(item) + STORAGE_OVERHEAD_BYTES
        for index in indexes:
            entry = index.entry(item)
            if entry is not None:
                total += item_size(entry) + STORAGE_OVERHEAD_BYTES
    return total
