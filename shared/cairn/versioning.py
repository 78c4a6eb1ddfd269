"""Pure version arithmetic shared by every backend: changes + current heads -> new versions.

A backend reads the heads the changes touch, calls ``plan_writes`` inside its transaction, and
persists the result only if every head is still what it read (SQLite: one transaction under the
write lock; DynamoDB: condition expressions). Keeping this pure is what makes every backend agree.

Longer than 300 lines because ``plan_writes`` handles every kind of change against the
same heads, and each kind's rule (what a fold-in keeps, what a supersede links) reads best beside
the others it must agree with.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cairn.changes import (
    MAX_CHANGES_PER_APPLY,
    MAX_SNAPSHOT_RECORDS,
    Change,
    Create,
    FoldIn,
    NewRecord,
    Retract,
    Revise,
    Supersede,
    SupersedeBy,
    Vector,
)
from cairn.errors import (
    InvalidChangeError,
    InvalidInputError,
    RecordNotFoundError,
    SnapshotConflictError,
)
from cairn.models import (
    ERASED_CONTENT,
    Edge,
    EdgeKind,
    EmbedderId,
    RecordVersion,
    Scope,
    Status,
    content_digest,
    derive_trust,
    union_sources,
)


@dataclass(frozen=True, slots=True)
class Write:
    """One version to persist; ``expected_head`` is the head it replaces (``None``: new record)."""

    version: RecordVersion
    expected_head: int | None
    vector: Vector | None = None


def touched_ids(changes: Sequence[Change]) -> list[str]:
    """Every record id the changes read or create, in order, each once."""
    ids: dict[str, None] = {}
    for change in changes:
        match change:
            case Create(record=record):
                ids.setdefault(record.record_id, None)
            case Supersede(record_id=rid, replacement=record):
                ids.setdefault(rid, None)
                ids.setdefault(record.record_id, None)
            case SupersedeBy(record_id=rid, successor_id=successor):
                ids.setdefault(rid, None)
                ids.setdefault(successor, None)
            case Revise(record_id=rid) | FoldIn(record_id=rid) | Retract(record_id=rid):
                ids.setdefault(rid, None)
    return list(ids)


def _check_shape(changes: Sequence[Change], snapshot: Mapping[str, int]) -> None:
    if len(changes) > MAX_CHANGES_PER_APPLY:
        raise InvalidInputError(
            f"{len(changes)} changes in one apply; at most {MAX_CHANGES_PER_APPLY} are atomic, "
            "split the batch"
        )
    if len(snapshot) > MAX_SNAPSHOT_RECORDS:
        raise InvalidInputError(
            f"snapshot names {len(snapshot)} records; at most {MAX_SNAPSHOT_RECORDS} are checked"
        )
    seen: set[str] = set()
    for change in changes:
        named = [change.record.record_id] if isinstance(change, Create) else [change.record_id]
        if isinstance(change, Supersede):
            named.append(change.replacement.record_id)
        for rid in named:
            if rid in seen:
                raise InvalidChangeError(
                    f"record {rid!r} is named by more than one change; one change per record "
                    "per apply"
                )
            seen.add(rid)
    _check_successors(changes)


def _check_successors(changes: Sequence[Change]) -> None:
    """A successor must stay live through the batch: no other change of it may retire it."""
    retired = {
        change.record_id
        for change in changes
        if isinstance(change, Supersede | SupersedeBy | Retract)
    }
    for change in changes:
        if isinstance(change, SupersedeBy) and change.successor_id in retired:
            raise InvalidChangeError(
                f"record {change.successor_id!r} is named as a successor and retired by the "
                "same batch; a record can only be superseded by one that stays live"
            )


def successor_checks(
    changes: Sequence[Change], heads: Mapping[str, RecordVersion]
) -> dict[str, int]:
    """Head versions of the ``SupersedeBy`` successors the batch does not write: a backend that
    commits without a lock must find them unchanged at commit time (they must stay live)."""
    written = set(touched_ids([c for c in changes if not isinstance(c, SupersedeBy)]))
    written |= {c.record_id for c in changes if isinstance(c, SupersedeBy)}
    return {
        change.successor_id: heads[change.successor_id].version
        for change in changes
        if isinstance(change, SupersedeBy)
        and change.successor_id not in written
        and change.successor_id in heads
    }


def check_snapshot(snapshot: Mapping[str, int], heads: Mapping[str, RecordVersion]) -> None:
    """Raise ``SnapshotConflictError`` naming every record whose head moved."""
    moved = [
        (rid, want, heads[rid].version if rid in heads else None)
        for rid, want in sorted(snapshot.items())
        if rid not in heads or heads[rid].version != want
    ]
    if moved:
        raise SnapshotConflictError(moved)


def plan_writes(
    scope: Scope,
    changes: Sequence[Change],
    heads: Mapping[str, RecordVersion],
    now: datetime,
    snapshot: Mapping[str, int] | None = None,
) -> list[Write]:
    """Versions that applying ``changes`` appends, given the current ``heads`` of the scope.

    Raises before anything is written: ``SnapshotConflictError`` when a snapshot version moved,
    ``RecordNotFoundError`` for a target not in the scope, ``InvalidChangeError`` for a target
    that is not live or a create whose id exists.
    """
    snapshot = snapshot or {}
    _check_shape(changes, snapshot)
    check_snapshot(snapshot, heads)
    writes: list[Write] = []
    created = _created_ids(changes)
    for change in changes:
        if isinstance(change, Create):
            writes.append(_create(scope, change.record, heads, now))
            continue
        head = _live_head(change.record_id, heads)
        match change:
            case Revise():
                writes.append(_revise(head, change, now))
            case FoldIn():
                seen = max(head.last_seen_at, change.seen_at or now)
                writes.append(
                    _next(
                        head,
                        now,
                        seen_count=head.seen_count + 1,
                        last_seen_at=seen,
                        sources=union_sources(head.sources, change.add_sources),
                    )
                )
            case Supersede(replacement=replacement):
                new = _create(scope, replacement, heads, now, supersedes=head.record_id)
                writes.append(
                    _next(head, now, status=Status.SUPERSEDED, superseded_by=replacement.record_id)
                )
                writes.append(new)
            case SupersedeBy():
                writes.append(_superseded_by(head, change, heads, created, now))
            case Retract(reason=reason):
                metadata = dict(head.metadata)
                if reason:
                    metadata["retract_reason"] = reason
                writes.append(_next(head, now, status=Status.RETRACTED, metadata=metadata))
    return writes


def _created_ids(changes: Sequence[Change]) -> set[str]:
    created = {c.record.record_id for c in changes if isinstance(c, Create)}
    return created | {c.replacement.record_id for c in changes if isinstance(c, Supersede)}


def _superseded_by(
    head: RecordVersion,
    change: SupersedeBy,
    heads: Mapping[str, RecordVersion],
    created: set[str],
    now: datetime,
) -> Write:
    if change.successor_id not in created:
        _live_head(change.successor_id, heads)
    metadata = dict(head.metadata)
    if change.reason:
        metadata["supersede_reason"] = change.reason
    if change.evidence:
        metadata["supersede_evidence"] = " ".join(change.evidence)
    return _next(
        head,
        now,
        status=Status.SUPERSEDED,
        superseded_by=change.successor_id,
        metadata=metadata,
    )


def _live_head(record_id: str, heads: Mapping[str, RecordVersion]) -> RecordVersion:
    head = heads.get(record_id)
    if head is None:
        raise RecordNotFoundError(record_id)
    if not head.live:
        raise InvalidChangeError(_why_not_live(head))
    return head


def _why_not_live(head: RecordVersion) -> str:
    """Why a record cannot change, naming a successor only where one exists."""
    rid = head.record_id
    if head.status is Status.SUPERSEDED and head.superseded_by:
        return (
            f"record {rid!r} was superseded by {head.superseded_by!r}; only an active record "
            "can change: change its successor instead"
        )
    if head.status is Status.RETRACTED:
        return (
            f"record {rid!r} is already retracted (forgotten); only an active record can "
            "change, and its history keeps what it held"
        )
    return f"record {rid!r} is {head.status.value}; only an active record can change"


_NOT_STORED = frozenset({"record_id", "vector", "seen_at"})


def _create(
    scope: Scope,
    record: NewRecord,
    heads: Mapping[str, RecordVersion],
    now: datetime,
    supersedes: str | None = None,
) -> Write:
    if record.record_id in heads:
        raise InvalidChangeError(
            f"record {record.record_id!r} already exists; revise it or choose a new id"
        )
    fields = {k: v for k, v in _fields(record).items() if k not in _NOT_STORED}
    if supersedes is not None:
        link = Edge(kind=EdgeKind.SUPERSEDES, target=supersedes)
        fields["edges"] = (*record.edges, link) if link not in record.edges else record.edges
    seen = record.seen_at or now
    version = RecordVersion.model_validate(
        {
            **fields,
            "memory_id": scope.memory_id,
            "actor_id": scope.actor_id,
            "record_id": record.record_id,
            "version": 1,
            "trust": derive_trust(record.sources),
            "supersedes": supersedes,
            "first_seen_at": seen,
            "last_seen_at": seen,
            "created_at": now,
            "content_digest": content_digest(record.content),
            "embedding": record.vector.embedder if record.vector else None,
        }
    )
    return Write(version=version, expected_head=None, vector=record.vector)


def _revise(head: RecordVersion, change: Revise, now: datetime) -> Write:
    updates: dict[str, Any] = {
        k: v for k, v in change.patch.model_dump(exclude_unset=True).items() if v is not None
    }
    content = updates.get("content", head.content)
    digest = content_digest(content)
    embedding: EmbedderId | None
    if change.vector is not None:
        embedding = change.vector.embedder
    elif digest == head.content_digest:
        embedding = head.embedding
    else:
        embedding = None  # the old vector describes other words; recall re-embeds or uses BM25
    sources = union_sources(head.sources, change.add_sources)
    write = _next(head, now, **updates, sources=sources, content_digest=digest, embedding=embedding)
    return Write(version=write.version, expected_head=head.version, vector=change.vector)


def _fields(model: NewRecord | RecordVersion) -> dict[str, Any]:
    """Field values as they are (nested models stay models), for re-validation."""
    return {name: getattr(model, name) for name in type(model).model_fields}


def _next(head: RecordVersion, now: datetime, **updates: Any) -> Write:
    data = _fields(head)
    data.update(updates)
    data["version"] = head.version + 1
    data["created_at"] = max(now, head.created_at)
    data["trust"] = derive_trust(data["sources"])
    return Write(version=RecordVersion.model_validate(data), expected_head=head.version)


def lineage(root: str, versions: Mapping[str, Sequence[RecordVersion]]) -> list[str]:
    """``root`` and every record derived from it (successors through ``superseded_by``)."""
    order, queue = [root], [root]
    while queue:
        rid = queue.pop()
        for version in versions.get(rid, ()):
            nxt = version.superseded_by
            if nxt and nxt not in order:
                order.append(nxt)
                queue.append(nxt)
    return order


def tombstone(version: RecordVersion) -> RecordVersion:
    """The erased form of a version: ids, times and digest survive; content does not."""
    data = _fields(version)
    data.update(
        content=ERASED_CONTENT,
        body=None,
        context=None,
        tags=(),
        entities=(),
        keywords=(),
        metadata={},
        status=Status.ERASED,
        embedding=None,
    )
    return RecordVersion.model_validate(data)


def tombstones(versions: Iterable[RecordVersion]) -> list[RecordVersion]:
    return [tombstone(v) for v in versions]
