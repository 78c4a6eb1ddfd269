"""What cairn keeps at rest, per thing kept: bytes DynamoDB bills for, read from the tables
after the runs (every item and index entry, plus DynamoDB's 100 bytes of overhead each).

Items are sorted by their key prefixes (docs/dynamodb.md): a record is its head and versions
(vectors included) plus its placement in the record directory; an event is its item plus its
share of the session and actor summaries; a recall leaves one journal entry; a consumed rollout
leaves a marker kept 30 days.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from benchmarks.cost_meter import Meter
from benchmarks.cost_units import stored_bytes


@dataclass(frozen=True)
class StorageProfile:
    """Mean billable bytes per record, event, journal entry and consumed rollout."""

    per_record: float
    per_event: float
    per_journal_entry: float
    per_consumed_rollout: float
    records: int
    events: int


def _scan(peek: Any, table: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"TableName": table}
    while True:
        page = peek.scan(**kwargs)
        items += page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _kind(item: dict[str, Any]) -> str:
    pk, sk = item["pk"]["S"], item["sk"]["S"]
    if pk.startswith("R#"):
        return {"H": "record", "V": "record", "J": "journal", "C": "consumed"}.get(sk[0], "index")
    if pk.startswith("D#"):
        return "record"  # the record directory: a placement per record
    if pk.startswith(("E#", "S#", "A#")):
        return "event"
    return "other"


def profile_storage(peek: Any, meter: Meter, deployment: Any) -> StorageProfile:
    """Bytes per thing kept, over everything the runs left in the two tables."""
    sizes: dict[str, int] = defaultdict(int)
    counts: dict[str, int] = defaultdict(int)
    for table in (deployment.items_table, deployment.events_table):
        indexes = meter.shape(table).indexes
        for item in _scan(peek, table):
            kind = _kind(item)
            sizes[kind] += stored_bytes([item], indexes)
            sk = item["sk"]["S"]
            is_head = item["pk"]["S"].startswith("R#") and sk.startswith("H#")
            counts["record"] += is_head
            counts["event"] += item["pk"]["S"].startswith("E#")
            counts["journal"] += kind == "journal"
            counts["consumed"] += kind == "consumed"

    def mean(kind: str) -> float:
        return sizes[kind] / counts[kind] if counts[kind] else 0.0

    return StorageProfile(
        per_record=mean("record"),
        per_event=mean("event"),
        per_journal_entry=mean("journal"),
        per_consumed_rollout=mean("consumed"),
        records=counts["record"],
        events=counts["event"],
    )
