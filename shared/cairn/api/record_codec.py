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
- The record's cairn ``strategy`` is the kind of the strategy named (semantic, summary,
  user_preference, custom), ``custom`` when none is named or the id is not the memory's.
- Records written through the API have the source ``import``: the API cannot tell who stated
  them, so they are untrusted (DESIGN §4), and a record revised through it becomes untrusted.
"""

from __future__ import annotations

import json
from typing import Any

from cairn.api.codec import from_epoch, to_epoch
from cairn.changes import NewRecord, Vector
from cairn.memories import MemoryConfig, StrategyKind
from cairn.models import RecordVersion, Source, SourceKind

STRATEGY_ID_KEY = "agentcore#memoryStrategyId"
METADATA_KEY = "agentcore#metadata"
RESERVED_KEYS = frozenset({STRATEGY_ID_KEY, METADATA_KEY})
API_SOURCE = Source(kind=SourceKind.IMPORT)
API_CONFIDENCE = 0.7  # what the cairn command gives an imported record (cairn.cli.commands)

_CATEGORY = {
    StrategyKind.SEMANTIC: "fact",
    StrategyKind.SUMMARY: "summary",
    StrategyKind.USER_PREFERENCE: "preference",
    StrategyKind.CUSTOM: "fact",
}


def strategy_kind(memory: MemoryConfig, strategy_id: str | None) -> StrategyKind:
    """The kind of the named strategy; ``custom`` if none is named or it is not the memory's."""
    strategy = memory.strategy(strategy_id) if strategy_id else None
    return strategy.kind if strategy is not None else StrategyKind.CUSTOM


def packed_metadata(
    strategy_id: str | None, metadata: dict[str, Any] | None, *, keep: dict[str, str] | None = None
) -> dict[str, str]:
    """cairn metadata holding the wire strategy id and typed metadata (``keep``'s other keys
    are carried over; ``None`` arguments keep what ``keep`` has for them)."""
    packed = dict(keep or {})
    if strategy_id is not None:
        packed[STRATEGY_ID_KEY] = strategy_id
    if metadata is not None:
        packed[METADATA_KEY] = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
    return packed


def new_record(
    item: dict[str, Any], memory: MemoryConfig, vector: Vector | None, record_id: str
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
        metadata=packed_metadata(strategy_id, item.get("metadata")),
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


def record_to_wire(version: RecordVersion, *, score: float | None = None) -> dict[str, Any]:
    """A ``MemoryRecord`` (or, with ``score``, a ``MemoryRecordSummary``)."""
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
    return wire
