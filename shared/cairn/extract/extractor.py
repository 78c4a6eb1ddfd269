"""The built-in extractor: one staged rollout -> candidates per strategy -> formation -> writes.

``extract_rollout`` runs every strategy the rollout is for (self-managed ones are skipped), forms
the candidates against the namespace's nearest live records and applies the changes: one atomic
``apply`` per namespace, checked against the heads formation saw (re-planned once on a conflict);
a quarantined source is untrusted evidence.

An episodic strategy files episodes (``cairn.extract.episodes``); a pass of reflections across
the actor's episodes follows each new one (``cairn.extract.reflections``). At most once per
rollout id. Every record extraction writes or confirms cites
``Source(kind=model, rollout_id=...)``, and sources are never removed, so a namespace whose
heads cite the rollout already holds its changes: that namespace is skipped without a model
call. A duplicate delivery therefore writes nothing, and one that crashed between namespaces
finishes the rest.

Failures: a model timeout or throttling raises the retryable error before anything is written
(every model call comes before the first apply). An answer still invalid after one retry returns
an ``invalid_output`` outcome with the reason and writes nothing; the rollout stays pending. A
namespace template that cannot resolve, or that would file the actor's records under another
actor's whole namespace (``namespace_actors.refuse_nested_namespace``), raises
``InvalidInputError`` first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from cairn.erasure_fence import place_fenced
from cairn.errors import InvalidInputError
from cairn.extract.counting import capped, change_counts
from cairn.extract.episodes import extract_strategy
from cairn.extract.extraction_policy import DEFAULT_EXTRACTION_POLICY, ExtractionPolicy
from cairn.extract.formation.apply import Formed, apply_formed, form_namespace
from cairn.extract.formation.neighbours import read_namespace
from cairn.extract.reflections import reflect_on_new_episodes, reflection_namespace
from cairn.extract.strategies import StrategyExtraction, resolve_namespace
from cairn.memories import MemoryConfig, StrategyConfig
from cairn.model_request import NO_USAGE, ModelUsage
from cairn.models import Frozen, RecordVersion, Scope, UtcDatetime, VersionRef
from cairn.namespace_actors import refuse_nested_namespace
from cairn.ports import Clock, Embedder, ModelProvider, Stores
from cairn.quarantine import Quarantine, quarantine_of
from cairn.rollout.payload import RolloutPayload


class ExtractionCounts(Frozen):
    """What extraction did, for metrics (never content)."""

    candidates: int = 0
    created: int = 0
    merged: int = 0
    superseded: int = 0
    folded_in: int = 0
    # Namespaces an earlier delivery of the same rollout had already written.
    already_applied: int = 0
    # Candidates beyond one apply's 16 changes when strategies share a namespace.
    dropped: int = 0
    # Reflections written, and reflection answers refused twice (the next episode retries).
    reflections: int = 0
    reflections_refused: int = 0


Status = Literal["applied", "already_applied", "invalid_output"]


class ExtractionOutcome(Frozen):
    """What one extraction of a rollout did; ``done`` says whether the rollout may be consumed."""

    rollout_id: str
    status: Status
    reason: str | None = None
    written: tuple[VersionRef, ...] = ()
    counts: ExtractionCounts = ExtractionCounts()
    usage: ModelUsage = NO_USAGE
    started_at: UtcDatetime

    @property
    def done(self) -> bool:
        """True unless the answer was invalid: then the rollout stays pending, with ``reason``."""
        return self.status != "invalid_output"


@dataclass(frozen=True, slots=True)
class _Group:
    """Strategies whose records share one namespace: formed and applied together."""

    namespace: str
    strategies: tuple[StrategyConfig, ...]


@dataclass
class _Run:
    """One extraction's running tally."""

    payload: RolloutPayload
    started: datetime
    usage: ModelUsage = NO_USAGE
    counts: ExtractionCounts = field(default_factory=ExtractionCounts)
    planned: list[Formed] = field(default_factory=list)
    written: list[RecordVersion] = field(default_factory=list)
    already: list[RecordVersion] = field(default_factory=list)
    quarantine: Quarantine | None = None

    def count(self, **more: int) -> None:
        update = {name: getattr(self.counts, name) + value for name, value in more.items()}
        self.counts = self.counts.model_copy(update=update)

    def outcome(self, reason: str | None = None) -> ExtractionOutcome:
        status: Status = "applied"
        if reason is not None:
            status = "invalid_output"
            reason = f"the model's answer was invalid twice: {reason}"
        elif self.already and not self.planned:
            status = "already_applied"
        return ExtractionOutcome(
            rollout_id=self.payload.rollout_id,
            status=status,
            reason=reason,
            written=tuple(v.ref for v in self.written),
            counts=self.counts,
            usage=self.usage,
            started_at=self.started,
        )


def extract_rollout(
    payload: RolloutPayload,
    memory: MemoryConfig,
    *,
    stores: Stores,
    model: ModelProvider,
    embedder: Embedder | None,
    clock: Clock,
    policy: ExtractionPolicy = DEFAULT_EXTRACTION_POLICY,
    erasures: int | None = None,
) -> ExtractionOutcome:
    """Form the rollout's candidates into records of its scope, at most once per rollout id.

    ``erasures`` is the scope's erasure count read before the payload was (read here when
    ``None``): an erase or retract since fails the apply, nothing written (``erasure_fence``).

    Raises ``ModelTimeoutError`` / ``ModelUnavailableError`` (retryable; nothing written),
    ``InvalidInputError`` for a payload of another memory or an unresolvable namespace template,
    ``ConflictError`` when a namespace's heads moved twice while it was being applied.
    """
    scope = _scope_of(payload, memory)
    if erasures is None:
        erasures = stores.records.erasures(scope)
    run = _Run(payload, clock.now(), quarantine=quarantine_of(stores.quarantine, scope.memory_id))
    for group in _groups(payload, memory):
        reason = _plan_group(run, scope, group, stores, model, embedder, policy)
        if reason is not None:
            return run.outcome(reason)
    for formed in run.planned:
        applied = apply_formed(
            scope,
            formed,
            payload.rollout_id,
            records=stores.records,
            model=model,
            embedder=embedder,
            policy=policy,
            erasures=erasures,
            quarantine=run.quarantine,
        )
        run.written.extend(applied.written)
        run.usage += applied.usage
        if applied.reason is not None:
            place_fenced(stores, scope, [*run.written, *run.already], erasures)
            return run.outcome(applied.reason)
        if applied.written:
            run.count(**change_counts(applied.formed.changes))
    reflected = reflect_on_new_episodes(
        scope, memory, payload, run.written, stores.records, model, embedder, policy, erasures
    )
    run.written.extend(reflected.written)
    run.usage += reflected.usage
    run.count(reflections=len(reflected.written), reflections_refused=int(bool(reflected.reason)))
    place_fenced(stores, scope, [*run.written, *run.already], erasures)
    return run.outcome()


def _plan_group(
    run: _Run,
    scope: Scope,
    group: _Group,
    stores: Stores,
    model: ModelProvider,
    embedder: Embedder | None,
    policy: ExtractionPolicy,
) -> str | None:
    """Plan one namespace (or note that this rollout already wrote it); the reason if the
    model's answer was refused twice."""
    state = read_namespace(scope, group.namespace, stores.records)
    if cited := state.citing(run.payload.rollout_id):
        run.already.extend(cited)
        run.count(already_applied=1)
        return None
    extracted, failure = _extract(model, run.payload, group, state.latest_summary(), policy)
    run.usage += sum((e.usage for e in extracted), NO_USAGE)
    if failure is not None:
        return failure
    candidates, dropped = capped(extracted)
    run.count(candidates=len(candidates), dropped=dropped)
    if not candidates:
        return None
    formed = form_namespace(
        scope,
        state,
        candidates,
        records=stores.records,
        model=model,
        embedder=embedder,
        policy=policy,
        quarantine=run.quarantine,
    )
    run.usage += formed.usage
    if formed.reason is not None:
        return formed.reason
    run.planned.append(formed)
    return None


def _scope_of(payload: RolloutPayload, memory: MemoryConfig) -> Scope:
    if payload.memory_id != memory.memory_id:
        raise InvalidInputError(
            f"rollout {payload.rollout_id!r} belongs to memory {payload.memory_id!r}, not "
            f"{memory.memory_id!r}; extract it with its own memory's configuration"
        )
    return payload.scope


def _groups(payload: RolloutPayload, memory: MemoryConfig) -> list[_Group]:
    """The strategies to run, by namespace, in the memory's order; every template resolved
    (and refused if it cannot be) before any model is called."""
    wanted = set(payload.strategy_ids)
    actor, session = payload.actor_id, payload.session_id
    by_namespace: dict[str, list[StrategyConfig]] = {}
    for strategy in memory.strategies:
        if strategy.strategy_id not in wanted or strategy.self_managed is not None:
            continue
        namespace = resolve_namespace(strategy, actor_id=actor, session_id=session)
        refuse_nested_namespace(memory, namespace, actor)
        if strategy.reflection_template is not None:
            where = reflection_namespace(strategy, actor_id=actor, session_id=session)
            refuse_nested_namespace(memory, where, actor)
        by_namespace.setdefault(namespace, []).append(strategy)
    return [_Group(namespace, tuple(found)) for namespace, found in by_namespace.items()]


def _extract(
    model: ModelProvider,
    payload: RolloutPayload,
    group: _Group,
    summary: RecordVersion | None,
    policy: ExtractionPolicy,
) -> tuple[list[StrategyExtraction], str | None]:
    """Each strategy's candidates; stops at the first answer refused twice, with its reason."""
    extracted: list[StrategyExtraction] = []
    for strategy in group.strategies:
        found = extract_strategy(
            model,
            payload,
            strategy,
            namespace=group.namespace,
            summary_so_far=summary.content if summary is not None else None,
            policy=policy,
        )
        extracted.append(found)
        if found.candidates is None:
            kind = strategy.kind.value
            return extracted, f"strategy {strategy.strategy_id} ({kind}): {found.reason}"
    return extracted, None
