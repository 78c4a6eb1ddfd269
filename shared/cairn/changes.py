"""Write operations: plain values a planner returns and one store call applies atomically.

A planner (formation, consolidation, an agent tool, the CLI) never writes; it returns a list of
``Change`` values. ``RecordStore.apply`` turns them into new versions in one transaction, checked
against the snapshot versions the planner saw. Versions are computed by ``cairn.versioning``, the
same pure code for every backend.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from cairn.ids import new_record_id
from cairn.models import (
    MAX_CONTEXT_CHARS,
    Edge,
    EmbedderId,
    Frozen,
    Label,
    RecordFields,
    RecordId,
    Slug,
    Source,
    Unit,
    UtcDatetime,
)

MAX_CHANGES_PER_APPLY = 16
MAX_SNAPSHOT_RECORDS = 32
# Rollouts one apply may consume with its changes (a consolidation pass reads at most this
# many): on DynamoDB each costs two transaction items (docs/dynamodb.md, "apply").
MAX_CONSUMED_ROLLOUTS = 4


class Vector(Frozen):
    """An embedding and the identity of the space it lives in."""

    embedder: EmbedderId
    values: tuple[float, ...]

    @model_validator(mode="after")
    def _length_matches_identity(self) -> Vector:
        if len(self.values) != self.embedder.dims:
            raise ValueError(
                f"vector has {len(self.values)} values but {self.embedder.key} has "
                f"{self.embedder.dims} dimensions"
            )
        return self


class NewRecord(RecordFields):
    """A record to create; its id may be fixed by the planner so other changes can cite it."""

    record_id: RecordId = Field(default_factory=new_record_id)
    vector: Vector | None = None
    seen_at: UtcDatetime | None = None


class RecordPatch(Frozen):
    """Fields a revision may change; ``None`` keeps the head's value. Namespace never moves."""

    content: Annotated[str, Field(min_length=1, max_length=16_000)] | None = None
    body: str | None = None
    context: Annotated[str, Field(min_length=1, max_length=MAX_CONTEXT_CHARS)] | None = None
    category: Slug | None = None
    confidence: Unit | None = None
    importance: Unit | None = None
    tags: tuple[Label, ...] | None = None
    entities: tuple[Label, ...] | None = None
    keywords: tuple[Label, ...] | None = None
    edges: tuple[Edge, ...] | None = None
    valid_from: UtcDatetime | None = None
    metadata: dict[str, str] | None = None


class Create(Frozen):
    kind: Literal["create"] = "create"
    record: NewRecord


class Revise(Frozen):
    """Evolve a live record as a new version; sources are unioned so trust can only fall."""

    kind: Literal["revise"] = "revise"
    record_id: RecordId
    patch: RecordPatch
    add_sources: tuple[Source, ...] = ()
    vector: Vector | None = None


class FoldIn(Frozen):
    """A re-derived repeat: bump ``seen_count`` and ``last_seen_at`` on a new head version."""

    kind: Literal["fold_in"] = "fold_in"
    record_id: RecordId
    add_sources: tuple[Source, ...] = ()
    seen_at: UtcDatetime | None = None


class Supersede(Frozen):
    """Replace a live record by a new one; the old keeps its row, marked and linked."""

    kind: Literal["supersede"] = "supersede"
    record_id: RecordId
    replacement: NewRecord


class SupersedeBy(Frozen):
    """Retire a live record in favour of another live record of the scope (a repeat merged into
    it, or the older side of a resolved contradiction): the old keeps its row, marked
    ``superseded`` and linked to ``successor_id``; the successor is not written.

    ``reason`` and ``evidence`` (the rollout ids that decided it) are kept in the old record's
    final version, as ``supersede_reason`` and ``supersede_evidence`` metadata.
    """

    kind: Literal["supersede_by"] = "supersede_by"
    record_id: RecordId
    successor_id: RecordId
    reason: Annotated[str, Field(max_length=256)] | None = None
    evidence: tuple[Label, ...] = Field(default=(), max_length=MAX_CONSUMED_ROLLOUTS)

    @model_validator(mode="after")
    def _not_its_own_successor(self) -> SupersedeBy:
        if self.record_id == self.successor_id:
            raise ValueError("a record cannot be superseded by itself")
        return self


class Retract(Frozen):
    """Forget softly: a new head version with status ``retracted``. Content is kept."""

    kind: Literal["retract"] = "retract"
    record_id: RecordId
    reason: Annotated[str, Field(max_length=256)] | None = None


Change = Annotated[
    Create | Revise | FoldIn | Supersede | SupersedeBy | Retract, Field(discriminator="kind")
]
