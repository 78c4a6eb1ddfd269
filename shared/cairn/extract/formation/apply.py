"""Filing one namespace's candidates: embed them, find their neighbours, plan, apply.

``form_namespace`` reads nothing but vectors (the namespace was read by the caller) and calls the
judge at most once (plus its one retry); ``apply_formed`` applies the plan atomically against the
head versions it saw and, on a conflict, reads the namespace again and plans once more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cairn.changes import Change, NewRecord, Revise, Vector
from cairn.errors import InvalidModelOutputError, SnapshotConflictError
from cairn.extract.extraction_policy import ExtractionPolicy
from cairn.extract.formation.judge import ModelJudge
from cairn.extract.formation.neighbours import NamespaceState, Neighbour, nearest, read_namespace
from cairn.extract.formation.plan import plan_formation, snapshot_of
from cairn.memories import StrategyKind
from cairn.model_request import NO_USAGE, ModelUsage
from cairn.models import RecordVersion, Scope
from cairn.ports import Embedder, ModelProvider, RecordStore
from cairn.quarantine import Quarantine


@dataclass(frozen=True, slots=True)
class Formed:
    """One namespace's plan, or the reason the judge's answer was refused twice."""

    state: NamespaceState
    candidates: tuple[NewRecord, ...]
    changes: tuple[Change, ...] = ()
    snapshot: dict[str, int] = field(default_factory=dict)
    usage: ModelUsage = NO_USAGE
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Applied:
    """What applying a plan wrote, the plan finally applied, and the extra model usage."""

    written: tuple[RecordVersion, ...]
    formed: Formed
    usage: ModelUsage = NO_USAGE
    reason: str | None = None


def form_namespace(
    scope: Scope,
    state: NamespaceState,
    candidates: Sequence[NewRecord],
    *,
    records: RecordStore,
    model: ModelProvider,
    embedder: Embedder | None,
    policy: ExtractionPolicy,
    quarantine: Quarantine | None = None,
) -> Formed:
    """Plan ``candidates`` against ``state``'s live records (each change's vector attached)."""
    embedded = tuple(with_vectors(candidates, embedder))
    live = state.live
    near = nearest(embedded, live, scope=scope, records=records, embedder=embedder, policy=policy)
    near = _with_session_summary(embedded, near, state)
    # An episode is what happened once: filed as it is, never judged against another.
    episodic = StrategyKind.EPISODIC.value
    near = [[] if c.strategy == episodic else n for c, n in zip(embedded, near, strict=True)]
    judge = ModelJudge(model, policy)
    try:
        changes = plan_formation(embedded, near, judge, policy, quarantine)
    except InvalidModelOutputError as exc:
        return Formed(state=state, candidates=embedded, usage=judge.usage, reason=exc.reason)
    changes = _revision_vectors(changes, embedder)
    heads = {version.record_id: version for version in live}
    return Formed(
        state=state,
        candidates=embedded,
        changes=tuple(changes),
        snapshot=snapshot_of(changes, heads),
        usage=judge.usage,
    )


def apply_formed(
    scope: Scope,
    formed: Formed,
    rollout_id: str,
    *,
    records: RecordStore,
    model: ModelProvider,
    embedder: Embedder | None,
    policy: ExtractionPolicy,
    erasures: int | None = None,
    quarantine: Quarantine | None = None,
) -> Applied:
    """Apply ``formed`` in one transaction; on a snapshot conflict plan once more from a fresh
    read (nothing, if another delivery of the rollout got there first). A second conflict
    raises ``SnapshotConflictError`` (retryable). Every apply is checked against ``erasures``
    (``cairn.erasure_fence``): an erasure since raises ``ErasedMeanwhileError``, never re-planned
    here, because the plan's input (the rollout) was read before the erasure."""
    try:
        written = records.apply(scope, formed.changes, snapshot=formed.snapshot, erasures=erasures)
        return Applied(written=written, formed=formed)
    except SnapshotConflictError:
        pass  # the heads moved under the plan: read them again and plan once more
    state = read_namespace(scope, formed.state.namespace, records)
    if state.citing(rollout_id):
        return Applied(written=(), formed=Formed(state=state, candidates=formed.candidates))
    again = form_namespace(
        scope,
        state,
        formed.candidates,
        records=records,
        model=model,
        embedder=embedder,
        policy=policy,
        quarantine=quarantine,
    )
    if again.reason is not None:
        return Applied(written=(), formed=again, usage=again.usage, reason=again.reason)
    written = records.apply(scope, again.changes, snapshot=again.snapshot, erasures=erasures)
    return Applied(written=written, formed=again, usage=again.usage)


def with_vectors(candidates: Sequence[NewRecord], embedder: Embedder | None) -> list[NewRecord]:
    """``candidates``, each with its vector in the embedder's space (unchanged without one)."""
    if embedder is None:
        return list(candidates)
    identity = embedder.identity
    missing = [
        i for i, c in enumerate(candidates) if c.vector is None or c.vector.embedder != identity
    ]
    if not missing:
        return list(candidates)
    rows = embedder.embed([candidates[i].content for i in missing])
    done = list(candidates)
    for i, row in zip(missing, rows, strict=True):
        vector = Vector(embedder=identity, values=tuple(float(x) for x in row))
        done[i] = candidates[i].model_copy(update={"vector": vector})
    return done


def _revision_vectors(changes: Sequence[Change], embedder: Embedder | None) -> list[Change]:
    """A merge that rewrites a record's text carries the new text's vector."""
    rewritten = {
        i: c.patch.content
        for i, c in enumerate(changes)
        if isinstance(c, Revise) and c.patch.content is not None
    }
    if embedder is None or not rewritten:
        return list(changes)
    rows = embedder.embed(list(rewritten.values()))
    done = list(changes)
    for i, row in zip(rewritten, rows, strict=True):
        vector = Vector(embedder=embedder.identity, values=tuple(float(x) for x in row))
        done[i] = changes[i].model_copy(update={"vector": vector})
    return done


def _with_session_summary(
    candidates: Sequence[NewRecord], near: list[list[Neighbour]], state: NamespaceState
) -> list[list[Neighbour]]:
    """A summary candidate always sees the namespace's current summary, however dissimilar:
    formation evolves that summary instead of starting a second one."""
    summary = state.latest_summary()
    if summary is None:
        return near
    for candidate, found in zip(candidates, near, strict=True):
        is_summary = candidate.strategy == StrategyKind.SUMMARY.value
        if is_summary and all(n.version.record_id != summary.record_id for n in found):
            found.append(Neighbour(version=summary))
    return near
