"""The reflection job's synthesis: one insight per cluster of never-recalled records.

Candidates are a scope's live heads, as the recall index's snapshot of the scope holds them,
that have a vector, are not reflections themselves and that no recall has shown (no access
count). They are clustered within their namespace (a reflection lives beside its members, so it
never carries one namespace's content into another), by cosine at least ``CLUSTER_FLOOR`` over
the snapshot's matrix (``cairn.history.clusters``): in record-id order, each record not yet
taken gathers the nearest untaken ones, up to ``MAX_MEMBERS`` in all; a cluster has two members
at least. The order makes the clusters the same on a rerun over the same records; clusters are
found lazily, so a bounded run computes only those it reaches, and only the members of those are
read.

A cluster's reflection is the live reflection made from most of its members (each reflection
matched once). When it was made from exactly these members with their current content nothing
is asked (a version that changed no content, a contested mark or a tag, asks for nothing);
otherwise the model is asked, and its insight is filed as a new record (``Create``) or, for a
cluster that has one, as a new version of it (``Revise``), conditioned on the versions read.
Sources: each cited member's (their events, sessions and speakers, not the rollouts that wrote
them) plus ``Source(kind=model)`` naming the run. Each cited member gets a ``part_of`` link to
the reflection in the link store, sourced like it.

A cluster's first reflection has a derived id (``cairn.reflection_records.reflection_id``): two
runs reflecting on one cluster at once file one record (the second ``Create`` is refused), and
a reflection someone erased or retracted is not filed again for the same members (nothing is
asked for them).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from cairn.changes import Change, Create, NewRecord, RecordPatch, Revise, Vector
from cairn.erasure_fence import place_fenced
from cairn.errors import CairnError, ErasedMeanwhileError, RecordNotFoundError
from cairn.history.clusters import clusters
from cairn.history.job_runs import RunTally
from cairn.history.reflection_prompts import MAX_MEMBERS, read_reflection, reflection_request
from cairn.links import Link
from cairn.models import (
    EdgeKind,
    RecordVersion,
    Scope,
    Source,
    SourceKind,
    union_sources,
)
from cairn.ports import Clock, Embedder, ModelProvider, Stores
from cairn.recall.index.snapshot import Snapshot
from cairn.reflection_records import (
    INSIGHT_CATEGORY,
    MADE_FROM_KEY,
    REFLECTION_STRATEGY,
    made_from,
    made_from_value,
    reflection_id,
    same_content,
)

# Closer than the link job's 0.5: a reflection claims the records share one subject.
CLUSTER_FLOOR = 0.6
# A reflection is inferred: never more confident than this, nor than its least confident member.
MAX_CONFIDENCE = 0.7
LEFT = "cluster(s) left for the next run: the run's bound was reached"


@dataclass
class ReflectionBudget:
    """What is left of a reflection run's bounds (``cairn.history.reflection``): model calls,
    reflections, flags, and the time by which no call may start any more (``None``: no limit);
    and the versions the run wrote (record id, version), which are no news to its next run."""

    calls: int
    clusters: int
    flags: int
    clock: Clock
    until: datetime | None = None
    wrote: set[tuple[str, int]] = field(default_factory=set)

    def may_call(self) -> bool:
        return self.calls > 0 and (self.until is None or self.clock.now() < self.until)

    def spent(self) -> bool:
        return not self.may_call() or (self.clusters <= 0 and self.flags <= 0)


def synthesise(
    stores: Stores,
    model: ModelProvider,
    embedder: Embedder,
    scope: Scope,
    snapshot: Snapshot,
    tally: RunTally,
    budget: ReflectionBudget,
    clock: Clock,
    erasures: int,
) -> bool:
    """File or revise the reflections of the scope's never-recalled clusters, within
    ``budget``; see the module. Whether every cluster was seen to (none left to a later run)."""
    if stores.access is None:
        tally.reasons["scope(s) not synthesised: these stores keep no access counts"] += 1
        return False
    shown = stores.access.counts(scope)
    ids = snapshot.record_ids
    strategies = [snapshot.strategies[int(c)] for c in snapshot.strategy_codes]
    kept = {
        ids[r]: snapshot.version(r) for r, s in enumerate(strategies) if s == REFLECTION_STRATEGY
    }
    made = {record_id: made_from(version) for record_id, version in kept.items()}
    made_of: dict[str, set[str]] = defaultdict(set)  # member -> the reflections made from it
    for record_id, sources in made.items():
        for member_id in sources:
            made_of[member_id].add(record_id)
    groups: dict[str, list[int]] = defaultdict(list)
    for row in sorted(range(snapshot.size), key=ids.__getitem__):  # record-id order
        if strategies[row] != REFLECTION_STRATEGY and not shown.get(ids[row]):
            groups[snapshot.namespaces[int(snapshot.namespace_codes[row])]].append(row)
    used: set[str] = set()
    for namespace in sorted(groups):
        for cluster in clusters(snapshot, groups[namespace], CLUSTER_FLOOR, MAX_MEMBERS):
            members = [snapshot.version(row) for row in cluster]
            member_ids = {m.record_id for m in members}
            near = {r for i in member_ids for r in made_of.get(i, ())}
            existing = _its_reflection(member_ids, {r: made[r] for r in near}, used)
            if existing is not None:
                used.add(existing)
                if same_content(made[existing], members):
                    continue  # made from these members as they read now: nothing to do
            mine = kept[existing] if existing is not None else None
            if mine is None and _filed_before(stores, scope, members):
                continue  # erased or retracted by someone: not filed again for these members
            if not budget.may_call() or budget.clusters <= 0:
                tally.reasons[LEFT] += 1
                return False
            planned = _Planned(scope, namespace, members, mine, erasures)
            _reflect(stores, model, embedder, planned, tally, budget, clock)
    return True


def _filed_before(stores: Stores, scope: Scope, members: list[RecordVersion]) -> bool:
    try:
        stores.records.get(scope, reflection_id(scope, (m.record_id for m in members)))
    except RecordNotFoundError:
        return False
    return True


def _its_reflection(
    ids: set[str], made: Mapping[str, dict[str, tuple[int, str]]], used: set[str]
) -> str | None:
    """The unused reflection made from most of these members (lowest id on a tie), if any."""
    overlaps = [
        (len(members.keys() & ids), record_id)
        for record_id, members in made.items()
        if record_id not in used and members.keys() & ids
    ]
    if not overlaps:
        return None
    return min(overlaps, key=lambda o: (-o[0], o[1]))[1]


@dataclass(frozen=True)
class _Planned:
    """One cluster to reflect on: where, its members, its reflection if it has one, and the
    erasure count read before any of them."""

    scope: Scope
    namespace: str
    members: list[RecordVersion]
    existing: RecordVersion | None
    erasures: int


def _reflect(
    stores: Stores,
    model: ModelProvider,
    embedder: Embedder,
    planned: _Planned,
    tally: RunTally,
    budget: ReflectionBudget,
    clock: Clock,
) -> None:
    scope, namespace, members, existing = (
        planned.scope,
        planned.namespace,
        planned.members,
        planned.existing,
    )
    budget.calls -= 1
    shown = tuple((m.content, tuple(m.entities)) for m in members)
    try:
        answered = read_reflection(model.complete(reflection_request(shown)).text, len(members))
    except CairnError as exc:
        tally.reasons[f"model call failed ({type(exc).__name__})"] += 1
        return
    if answered is None:
        tally.reasons["cluster(s) the model found nothing to reflect on"] += 1
        return
    insight, cites = answered
    cited = [members[n - 1] for n in cites]
    run = Source(kind=SourceKind.MODEL, run_id=tally.run_id)
    sources = union_sources(*(_evidence(m) for m in cited), (run,))
    (values,) = embedder.embed([insight])
    vector = Vector(embedder=embedder.identity, values=tuple(float(x) for x in values))
    metadata = {MADE_FROM_KEY: made_from_value(members)}
    snapshot = {m.record_id: m.version for m in members}
    change: Change
    if existing is None:
        change = Create(
            record=NewRecord(
                record_id=reflection_id(scope, (m.record_id for m in members)),
                namespace=namespace,
                strategy=REFLECTION_STRATEGY,
                category=INSIGHT_CATEGORY,
                content=insight,
                confidence=min(MAX_CONFIDENCE, *(m.confidence for m in cited)),
                sources=sources,
                metadata=metadata,
                vector=vector,
                seen_at=max(m.last_seen_at for m in cited),
            )
        )
    else:
        snapshot[existing.record_id] = existing.version
        patch = RecordPatch(content=insight, metadata={**existing.metadata, **metadata})
        change = Revise(
            record_id=existing.record_id, patch=patch, add_sources=sources, vector=vector
        )
    try:
        (written,) = stores.records.apply(
            scope, [change], snapshot=snapshot, erasures=planned.erasures
        )
    except ErasedMeanwhileError:
        tally.reasons["cluster(s) not reflected: an erasure in the scope committed meanwhile"] += 1
        return
    except CairnError:
        tally.reasons["cluster(s) changed meanwhile: left to the next run"] += 1
        return
    budget.clusters -= 1
    budget.wrote.add((written.record_id, written.version))
    tally.changed += 1
    try:  # where the AgentCore API finds it by id, as extraction places what it writes
        place_fenced(stores, scope, [written], planned.erasures)
    except ErasedMeanwhileError:
        tally.reasons["reflection(s) not placed: an erasure in the scope committed meanwhile"] += 1
    _link(stores, scope, written, cited, run, tally, clock)


def _evidence(member: RecordVersion) -> tuple[Source, ...]:
    """A member's sources as a reflection's evidence, without the rollout that wrote it (as
    ``cairn.extract.reflections`` does for episodes: this run, not that rollout, wrote it)."""
    return tuple(s.model_copy(update={"rollout_id": None}) for s in member.sources)


def _link(
    stores: Stores,
    scope: Scope,
    reflection: RecordVersion,
    cited: list[RecordVersion],
    run: Source,
    tally: RunTally,
    clock: Clock,
) -> None:
    if stores.links is None:
        return
    for member in cited:
        link = Link(
            memory_id=scope.memory_id,
            actor_id=scope.actor_id,
            from_id=member.record_id,
            kind=EdgeKind.PART_OF,
            to_id=reflection.record_id,
            sources=(run,),
            created_at=clock.now(),
        )
        try:
            stores.links.put(scope, link)
        except RecordNotFoundError:
            tally.reasons["record(s) erased or gone before their link was stored"] += 1
