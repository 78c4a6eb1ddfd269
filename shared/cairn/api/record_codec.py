"""Wire JSON <-> cairn records: how an AgentCore memory record is filed as a cairn record.

- ``memoryRecordId`` is the record id; ``content.text`` the content; ``namespaces[0]`` the
  namespace (an empty list files the record under ``/``).
- ``timestamp`` is ``valid_from``; ``createdAt`` is ``first_seen_at``, the creation time of the
  record's first version (no record written here is given an earlier first sighting).
- ``memoryStrategyId`` and the typed ``metadata`` (string, string list, number, date-time) are
  kept in two reserved metadata keys holding the wire form, so they round-trip exactly and a
  record of 20 wire metadata keys still fits cairn's 20-key limit. ``#`` cannot occur in a
  wire metadata key, so a reserved key can never collide with one. Other cairn metadata keys
  (written by cairn itself) are shown as string values.
- ``recordExpirySpecification`` sets the record's ``expiresAt`` and the days it was given (two
  more reserved keys); from that instant the record is gone from every API read (``expired``).
- The record's cairn ``strategy`` is the kind of the strategy named (semantic, summary,
  user_preference, custom), ``custom`` when none is named or the id is not the memory's.
- Records written through the API have the source ``import``: the API cannot tell who stated
  them, so they are untrusted (DESIGN §4), and a record revised through it becomes untrusted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cairn.api.codec import from_epoch, to_epoch
from cairn.changes import NewRecord, Vector
from cairn.memories import (
    RECORD_EXPIRES_KEY,
    RECORD_EXPIRY_DAYS_KEY,
    MemoryConfig,
    StrategyKind,
    expiry_metadata,
)
from cairn.models import RecordVersion, Source, SourceKind
from cairn.record_schemas import TYPED_METADATA_KEY

STRATEGY_ID_KEY = "agentcore#memoryStrategyId"
METADATA_KEY = TYPED_METADATA_KEY
EXPIRES_KEY = RECORD_EXPIRES_KEY
EXPIRY_DAYS_KEY = RECORD_EXPIRY_DAYS_KEY
RESERVED_KEYS = frozenset({STRATEGY_ID_KEY, METADATA_KEY, EXPIRES_KEY, EXPIRY_DAYS_KEY})


@dataclass(frozen=True)
class Expiry:
    """A record's expiry: ``days`` from ``now``; ``days=None`` clears it."""

    now: datetime
    days: int | None


API_SOURCE = Source(kind=SourceKind.IMPORT)
API_CONFIDENCE = 0.7  # what the cairn command gives an imported record (cairn.cli.commands)

_CATEGORY = {
    StrategyKind.SEMANTIC: "fact",
    StrategyKind.SUMMARY: "summary",
    StrategyKind.USER_PREFERENCE: "preference",
    StrategyKind.CUSTOM: "fact",
    StrategyKind.EPISODIC: "episode",
}


def strategy_kind(memory: MemoryConfig, strategy_id: str | None) -> StrategyKind:
    """The kind of the named strategy; ``custom`` if none is named or it is not the memory's."""
    strategy = memory.strategy(strategy_id) if strategy_id else None
    return strategy.kind if strategy is not None else StrategyKind.CUSTOM


def packed_metadata(
    strategy_id: str | None,
    metadata: dict[str, Any] | None,
    *,
    keep: dict[str, str] | None = None,
    expiry: Expiry | None = None,
) -> dict[str, str]:
    """cairn metadata holding the wire strategy id, typed metadata and expiry (``keep``'s other
    keys are carried over; ``None`` arguments keep what ``keep`` has for them)."""
    packed = dict(keep or {})
    if strategy_id is not None:
        packed[STRATEGY_ID_KEY] = strategy_id
    if expiry is not None and expiry.days is None:
        packed.pop(EXPIRES_KEY, None)
        packed.pop(EXPIRY_DAYS_KEY, None)
    elif expiry is not None and expiry.days is not None:
        packed.update(expiry_metadata(expiry.days, expiry.now))
    if metadata is not None:
        packed[METADATA_KEY] = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    return packed


def expiry_days(version: RecordVersion) -> int | None:
    """The days of the expiry last applied to the record, if it has one."""
    found = version.metadata.get(EXPIRY_DAYS_KEY)
    return int(found) if found else None


def expires_at(version: RecordVersion) -> datetime | None:
    """When the record expires, if it was given an expiry."""
    found = version.metadata.get(EXPIRES_KEY)
    return datetime.fromisoformat(found) if found else None


def expired(version: RecordVersion, now: datetime) -> bool:
    """Whether the record's expiry has come: it is then gone from every API read."""
    at = expires_at(version)
    return at is not None and at <= now


def new_record(
    item: dict[str, Any],
    memory: MemoryConfig,
    vector: Vector | None,
    record_id: str,
    expiry: Expiry | None = None,
) -> NewRecord:
    """The cairn record a validated ``MemoryRecordCreateInput`` describes."""
    strategy_id = item.get("memoryStrategyId")
    kind = strategy_kind(memory, strategy_id)
    namespaces = item.get("namespaces") or ["/"]
    return NewRecord(
        record_id=record_id,
        namespace=namespaces[0],
        strategy=kind.value,
        category=_CATEGORY[kind],
        content=item["content"]["text"],
        confidence=API_CONFIDENCE,
        sources=(API_SOURCE,),
        valid_from=from_epoch(item["timestamp"]),
        metadata=packed_metadata(strategy_id, item.get("metadata"), expiry=expiry),
        vector=vector,
    )


def wire_strategy_id(version: RecordVersion) -> str:
    return version.metadata.get(STRATEGY_ID_KEY) or version.strategy


def wire_metadata(version: RecordVersion) -> dict[str, Any]:
    """The record's metadata as the wire map of typed values (empty if it has none)."""
    shown: dict[str, Any] = {
        key: {"stringValue": value}
        for key, value in version.metadata.items()
        if key not in RESERVED_KEYS
    }
    if METADATA_KEY in version.metadata:
        shown.update(json.loads(version.metadata[METADATA_KEY]))
    return shown


def record_to_wire(
    version: RecordVersion, *, score: float | None = None, full: bool = False
) -> dict[str, Any]:
    """A ``MemoryRecordSummary`` (with ``score`` when searched), or with ``full`` a
    ``MemoryRecord``, which also says when it expires."""
    wire: dict[str, Any] = {
        "memoryRecordId": version.record_id,
        "content": {"text": version.content},
        "memoryStrategyId": wire_strategy_id(version),
        "namespaces": [version.namespace],
        "createdAt": to_epoch(version.first_seen_at),
    }
    if version.valid_from is not None:
        wire["timestamp"] = to_epoch(version.valid_from)
    metadata = wire_metadata(version)
    if metadata:
        wire["metadata"] = metadata
    if score is not None:
        wire["score"] = score
    expiry = expires_at(version) if full else None
    if expiry is not None:
        wire["expiresAt"] = to_epoch(expiry)
    return wire
