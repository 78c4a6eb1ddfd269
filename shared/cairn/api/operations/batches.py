"""Applying a batch of record changes: per scope, in chunks of at most 16, with per-record results.

Batch operations answer per record (``successfulRecords`` / ``failedRecords``). Changes are
grouped by scope and applied in chunks of ``MAX_CHANGES_PER_APPLY``, each chunk atomic: a chunk
that fails fails each of its records with the wire status of the error, and nothing of it is
written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from cairn.api.context import ApiContext
from cairn.api.errors import ApiError, from_cairn_error, from_validation_error
from cairn.changes import MAX_CHANGES_PER_APPLY, Change, Vector
from cairn.errors import CairnError
from cairn.models import Scope
from cairn.ports import Embedder, RecordPlacement


@dataclass(frozen=True)
class Planned:
    """One record's change, ready to apply, and how to report it."""

    index: int
    scope: Scope
    record_id: str
    change: Change
    request_id: str | None = None
    placement: RecordPlacement | None = None


@dataclass
class BatchResult:
    """Per-record outcomes, reported in request order."""

    rows: list[tuple[int, bool, dict[str, Any]]] = field(default_factory=list)

    def succeed(self, index: int, record_id: str, request_id: str | None) -> None:
        row: dict[str, Any] = {"memoryRecordId": record_id, "status": "SUCCEEDED"}
        if request_id is not None:
            row["requestIdentifier"] = request_id
        self.rows.append((index, True, row))

    def fail(self, index: int, record_id: str, error: ApiError, request_id: str | None) -> None:
        row: dict[str, Any] = {
            "memoryRecordId": record_id,
            "status": "FAILED",
            "errorCode": error.status,
            "errorMessage": error.message,
        }
        if request_id is not None:
            row["requestIdentifier"] = request_id
        self.rows.append((index, False, row))

    def fail_invalid(
        self, index: int, record_id: str, error: ValidationError, request_id: str | None
    ) -> None:
        self.fail(index, record_id, from_validation_error(error), request_id)

    def wire(self) -> dict[str, Any]:
        ordered = sorted(self.rows, key=lambda row: row[0])
        return {
            "successfulRecords": [row for _, ok, row in ordered if ok],
            "failedRecords": [row for _, ok, row in ordered if not ok],
        }


def _chunks(items: Sequence[Planned]) -> list[list[Planned]]:
    by_scope: dict[Scope, list[Planned]] = {}
    for item in items:
        by_scope.setdefault(item.scope, []).append(item)
    return [
        group[start : start + MAX_CHANGES_PER_APPLY]
        for group in by_scope.values()
        for start in range(0, len(group), MAX_CHANGES_PER_APPLY)
    ]


def apply_planned(
    ctx: ApiContext, memory_id: str, planned: Sequence[Planned], result: BatchResult
) -> None:
    """Apply every planned change, chunk by chunk; record each record's outcome."""
    for chunk in _chunks(planned):
        scope = chunk[0].scope
        try:
            placements = [p.placement for p in chunk if p.placement is not None]
            if placements:
                # Placed before the write: a placement without its record reads as not found,
                # while a record without its placement would be invisible to the API.
                ctx.directory.place(memory_id, placements, deletion_fence=True)
            ctx.records.apply(scope, [p.change for p in chunk], deletion_fence=True)
        except CairnError as exc:
            error = from_cairn_error(exc, "batch")
            for item in chunk:
                result.fail(item.index, item.record_id, error, item.request_id)
        else:
            for item in chunk:
                result.succeed(item.index, item.record_id, item.request_id)


def vectors_for(embedder: Embedder | None, texts: Sequence[str]) -> list[Vector | None]:
    """One vector per text, embedded in one batch; ``None`` each without an embedder."""
    if embedder is None or not texts:
        return [None] * len(texts)
    rows = embedder.embed(list(texts))
    return [Vector(embedder=embedder.identity, values=tuple(float(x) for x in row)) for row in rows]
