"""One consolidation pass over one scope: read, propose, validate, commit atomically, or nothing.

``consolidate_scope`` reads at most ``max_rollouts`` (4) pending evidence rollouts and their
payloads, chooses at most ``max_records`` (32) live records, asks the model once (bounded
request, at most 16 changes), plans the store changes, and commits them with
``RecordStore.apply(..., snapshot=<every shown record's version>, consume_rollouts=<the
rollouts>)``: the records it reasoned about unchanged, the changes applied and the evidence
consumed in one transaction, or nothing at all.

Outcomes (``PassOutcome.status``), none of which consumes evidence unless it says so:

- ``idle``: no pending evidence; nothing was read past the rollout index.
- ``committed``: applied; ``consumed`` names the rollouts. A payload that is gone or is not
  ``cairn.evidence/1`` of this scope is consumed without changes (``unreadable``): it can
  never be read, and it would otherwise hold a place in every later pass.
- ``invalid``: the answer was refused twice, or the request could not be made small enough;
  the evidence waits for a later pass.
- ``timeout``: the model did not answer in time, or the pass ran past ``pass_seconds``;
  ``conflict``: a record moved or an erase landed before the commit. Both are ``retryable``.
- ``cancelled``: the host shut down before the commit.

Store outages (``StoreUnavailableError``), throttling (``ModelUnavailableError``) and
configuration errors are raised, retryable or not, as they are.

``build_consolidator`` wires a ``Consolidator`` from ports, for every host (``cairn.local``,
the consolidation Lambda), with the memories resolved as extraction resolves them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from cairn.consolidate.consolidation_policy import DEFAULT_CONSOLIDATION_POLICY, ConsolidationPolicy
from cairn.consolidate.evidence import EvidencePayload, decode_evidence
from cairn.consolidate.prompts import build_input, fit_input
from cairn.consolidate.propose import propose, read_live, select_records
from cairn.consolidate.targets import NamespaceTargets, default_targets, targets_for
from cairn.consolidate.validate import ConsolidationCounts, PassView, Planned
from cairn.erasure_fence import erases, place_fenced
from cairn.errors import (
    CairnError,
    ConfigurationError,
    ConflictError,
    InvalidInputError,
    ModelRejectedError,
    ModelTimeoutError,
    NotFoundError,
)
from cairn.extract.delivery import stored_or
from cairn.extract.triggers import embedded_memory
from cairn.memories import MemoryConfig
from cairn.model_request import NO_USAGE, ModelUsage
from cairn.models import Frozen, Scope, UtcDatetime, VersionRef
from cairn.ports import Clock, ModelProvider, RolloutStore, StagingStore, Stores
from cairn.rollout.index import Rollout

log = logging.getLogger(__name__)

PassStatus = Literal["idle", "committed", "invalid", "timeout", "conflict", "cancelled"]
ResolveMemory = Callable[[str], MemoryConfig]


class PassOutcome(Frozen):
    """What one pass did; ``more_pending`` when it consumed a full batch (more may wait)."""

    memory_id: str
    actor_id: str
    status: PassStatus
    reason: str | None = None
    consumed: tuple[str, ...] = ()
    unreadable: int = 0
    more_pending: bool = False
    written: tuple[VersionRef, ...] = ()
    counts: ConsolidationCounts = ConsolidationCounts()
    usage: ModelUsage = NO_USAGE
    started_at: UtcDatetime

    @property
    def retryable(self) -> bool:
        """A deadline failure or a conflicting write: worth one more try a little later."""
        return self.status in ("timeout", "conflict")


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Consolidator:
    """What a pass needs: the stores, the staged payloads, the model, the memory's
    configuration (where additions go) and the bounds. ``wait`` is how the synchronous
    retry waits (``time.sleep``; a test passes a recorder)."""

    stores: Stores
    staging: StagingStore
    model: ModelProvider
    clock: Clock
    memories: ResolveMemory | None = None
    policy: ConsolidationPolicy = DEFAULT_CONSOLIDATION_POLICY
    wait: Callable[[float], None] = time.sleep

    @property
    def rollouts(self) -> RolloutStore:
        if self.stores.rollouts is None:
            raise ConfigurationError(
                "this store keeps no rollout index, so it cannot consolidate; use the SQLite "
                "or DynamoDB store"
            )
        return self.stores.rollouts


def build_consolidator(
    stores: Stores,
    staging: StagingStore,
    *,
    model: ModelProvider,
    clock: Clock,
    policy: ConsolidationPolicy = DEFAULT_CONSOLIDATION_POLICY,
) -> Consolidator:
    """Passes over ``stores`` and the evidence staged in ``staging``, answered by ``model``;
    a memory with no stored configuration consolidates into the built-in strategies' targets."""
    memories = stored_or(stores.memories, embedded_memory)
    return Consolidator(
        stores=stores, staging=staging, model=model, clock=clock, memories=memories, policy=policy
    )


@dataclass
class _Pass:
    scope: Scope
    started: datetime
    pending: Sequence[Rollout]
    erasures: int  # an erasure since this count wins over the pass (cairn.erasure_fence)
    usage: ModelUsage = NO_USAGE

    def outcome(self, status: PassStatus, reason: str | None = None) -> PassOutcome:
        return PassOutcome(
            memory_id=self.scope.memory_id,
            actor_id=self.scope.actor_id,
            status=status,
            reason=reason,
            usage=self.usage,
            started_at=self.started,
        )


def consolidate_scope(
    scope: Scope, consolidator: Consolidator, *, cancelled: Callable[[], bool] = _never
) -> PassOutcome:
    """One bounded pass over ``scope``; see the module docstring for its outcomes."""
    policy, clock = consolidator.policy, consolidator.clock
    started = clock.now()
    deadline = started + timedelta(seconds=policy.pass_seconds)
    erasures = consolidator.stores.records.erasures(scope)  # first: every read comes after it
    pending = consolidator.rollouts.list_pending(scope, limit=policy.max_rollouts, kind="evidence")
    run = _Pass(scope, started, pending, erasures)
    if not pending:
        return run.outcome("idle")
    payloads, unreadable = _read_evidence(consolidator, scope, pending)
    if not payloads:
        return _commit(consolidator, run, Planned(), {}, unreadable)
    shown = select_records(
        read_live(consolidator.stores.records, scope, policy), payloads, policy.max_records
    )
    view = PassView(
        records=dict(enumerate(shown, start=1)),
        evidence=dict(enumerate(payloads, start=1)),
        targets=_targets(consolidator, scope, payloads),
    )
    try:
        document = fit_input(build_input(shown, payloads, policy), policy.max_request_bytes)
    except InvalidInputError as exc:
        return run.outcome("invalid", exc.message)
    remaining = (deadline - clock.now()).total_seconds()
    if cancelled():
        return run.outcome("cancelled")
    if remaining <= 0:
        return run.outcome("timeout", "the pass ran out of time before the model call")
    try:
        proposal = propose(
            consolidator.model, view, document, policy, timeout_seconds=min(remaining, 300.0)
        )
    except ModelTimeoutError as exc:
        return run.outcome("timeout", exc.message)
    except ModelRejectedError as exc:
        return run.outcome("invalid", exc.message)
    run.usage = proposal.usage
    if proposal.planned is None:
        return run.outcome("invalid", f"the model's answer was invalid twice: {proposal.reason}")
    if clock.now() > deadline:
        return run.outcome("timeout", f"the pass took longer than {policy.pass_seconds:g} s")
    if cancelled():
        return run.outcome("cancelled")
    snapshot = {v.record_id: v.version for v in shown}
    return _commit(consolidator, run, proposal.planned, snapshot, unreadable)


def consolidate_with_retry(
    scope: Scope, consolidator: Consolidator, *, cancelled: Callable[[], bool] = _never
) -> PassOutcome:
    """``consolidate_scope``, and once more after ``retry_after_seconds`` if the first pass
    failed on its deadline or on a conflicting write (the synchronous path: a Lambda, a
    host without a worker)."""
    outcome = consolidate_scope(scope, consolidator, cancelled=cancelled)
    if not outcome.retryable or cancelled():
        return outcome
    consolidator.wait(consolidator.policy.retry_after_seconds)
    return consolidate_scope(scope, consolidator, cancelled=cancelled)


def _read_evidence(
    consolidator: Consolidator, scope: Scope, pending: Sequence[Rollout]
) -> tuple[list[EvidencePayload], list[str]]:
    """The readable payloads, and the ids of the rollouts whose payload never will be."""
    payloads: list[EvidencePayload] = []
    unreadable: list[str] = []
    for rollout in pending:
        try:
            payload = decode_evidence(consolidator.staging.get(scope, rollout.rollout_id))
        except (NotFoundError, InvalidInputError) as exc:
            log.warning("evidence %s cannot be read (%s)", rollout.rollout_id, type(exc).__name__)
            unreadable.append(rollout.rollout_id)
            continue
        if payload.scope != scope or payload.rollout_id != rollout.rollout_id:
            log.warning("evidence %s is staged for another rollout or scope", rollout.rollout_id)
            unreadable.append(rollout.rollout_id)
            continue
        payloads.append(payload)
    return payloads, unreadable


def _targets(
    consolidator: Consolidator, scope: Scope, payloads: Sequence[EvidencePayload]
) -> NamespaceTargets:
    if consolidator.memories is None:
        return default_targets(scope.actor_id)
    try:
        memory = consolidator.memories(scope.memory_id)
    except NotFoundError:
        return default_targets(scope.actor_id)
    newest = max(payloads, key=lambda p: p.completed_at)
    return targets_for(memory, actor_id=scope.actor_id, session_id=newest.session_id)


def _commit(
    consolidator: Consolidator,
    run: _Pass,
    planned: Planned,
    snapshot: dict[str, int],
    unreadable: list[str],
) -> PassOutcome:
    consumed = tuple(r.rollout_id for r in run.pending)
    try:
        changes, records = planned.changes, consolidator.stores.records
        written = records.apply(
            run.scope, changes, snapshot=snapshot, consume_rollouts=consumed, erasures=run.erasures
        )
    except ConflictError as exc:
        return run.outcome("conflict", exc.message)
    _forget_payloads(consolidator, run.scope, consumed)
    # The pass's own retraction counts as an erasure (one more): the placements are fenced
    # by the count after it, so an erase that landed after the apply wins over them.
    after = run.erasures + int(erases(changes))
    place_fenced(consolidator.stores, run.scope, written, after)
    return run.outcome("committed").model_copy(
        update={
            "consumed": consumed,
            "unreadable": len(unreadable),
            "more_pending": len(run.pending) >= consolidator.policy.max_rollouts,
            "written": tuple(v.ref for v in written),
            "counts": planned.counts,
        }
    )


def _forget_payloads(consolidator: Consolidator, scope: Scope, rollout_ids: Sequence[str]) -> None:
    """Consumed payloads hold conversation text: delete them (a failure only delays that to
    the staging store's expiry rule)."""
    for rid in rollout_ids:
        try:
            consolidator.staging.delete(scope, rid)
        except CairnError as exc:
            log.warning("consumed evidence %s keeps its payload (%s)", rid, type(exc).__name__)
