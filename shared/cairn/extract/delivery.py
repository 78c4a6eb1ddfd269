"""Consuming an announced rollout: the one call the extraction Lambda and the embedded worker make.

``consume(notice, consumer)`` reads the rollout's state, and only if it is still pending reads
the staged payload, extracts records from it (``Consumer.extract``, normally
``cairn.extract.extractor.extract_rollout``) and marks the rollout consumed, then deletes the
payload (it holds conversation text and is no longer needed). So:

- a duplicate delivery of a consumed rollout changes nothing (``duplicate``) but deleting its
  payload, if the consumer died before it could;
- a crash after the records were written and before the rollout was marked is redelivered, and
  the extractor's own idempotency per rollout id keeps it from writing the records twice;
- a retryable failure (model timeout or throttling, a busy store) propagates: the queue delivers
  the message again, and after its retries it goes to the dead-letter queue while the rollout
  stays announced, for the sweep to announce again later;
- what can never succeed (invalid model output, a payload or memory that is gone, a malformed
  payload, any other non-retryable ``CairnError``) marks the rollout failed with the reason and
  is acknowledged; the failed rollout stays listed as pending for an operator.

``build_consumer(stores, staging, model=..., embedder=..., clock=...)`` is the one place a
``Consumer`` is wired: the embedded system (``cairn.local``) and the extraction Lambda both call
it, with their own stores, staging store, model and embedder.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from cairn.errors import (
    CairnError,
    ConfigurationError,
    ErasedMeanwhileError,
    InvalidInputError,
    MemoryNotFoundError,
    RolloutNotFoundError,
)
from cairn.extract.extractor import ExtractionOutcome, extract_rollout
from cairn.extract.triggers import embedded_memory
from cairn.memories import MemoryConfig
from cairn.models import Frozen, Scope
from cairn.ports import (
    Clock,
    Embedder,
    MemoryConfigStore,
    ModelProvider,
    RolloutStore,
    StagingStore,
    Stores,
)
from cairn.rollout.index import Rollout, RolloutState
from cairn.rollout.payload import RolloutNotice, RolloutPayload, decode_payload

log = logging.getLogger(__name__)

Extract = Callable[[RolloutPayload, MemoryConfig, int | None], ExtractionOutcome]
"""(payload, memory, the scope's erasure count read before the rollout) -> the outcome."""
ResolveMemory = Callable[[str], MemoryConfig]


class Consumed(Frozen):
    """What one delivery did: ``consumed`` (records written), ``duplicate`` (nothing to do),
    ``failed`` (given up with ``reason``), ``unknown`` (no such rollout: erased) or
    ``skipped`` (a run's evidence, left pending for consolidation)."""

    rollout_id: str
    status: Literal["consumed", "duplicate", "failed", "unknown", "skipped"]
    written: int = 0
    reason: str | None = None


@dataclass(frozen=True)
class Consumer:
    """What consuming needs: the rollout index, the staged payloads, the memory's
    configuration and the extractor (model, embedder and record stores bound in)."""

    rollouts: RolloutStore
    staging: StagingStore
    memories: ResolveMemory
    extract: Extract
    clock: Clock
    # The scope's erasure count (``RecordStore.erasures``), read before the rollout, so an
    # erase or retract landing while the rollout is extracted wins (``cairn.erasure_fence``).
    erasures: Callable[[Scope], int] | None = None


def stored_or(memories: MemoryConfigStore | None, fallback: ResolveMemory) -> ResolveMemory:
    """Resolve a memory from ``memories``, and through ``fallback`` where none is stored."""

    def resolve(memory_id: str) -> MemoryConfig:
        if memories is not None:
            try:
                return memories.get(memory_id)
            except MemoryNotFoundError:
                pass
        return fallback(memory_id)

    return resolve


def build_consumer(
    stores: Stores,
    staging: StagingStore,
    *,
    model: ModelProvider,
    embedder: Embedder | None,
    clock: Clock,
) -> Consumer:
    """The consumer of ``stores``' rollouts: payloads read from ``staging``, records extracted
    with ``model`` and ``embedder``. A memory with no stored configuration (a library caller's
    own memory id, the embedded ``default``) extracts with the built-in strategies."""
    if stores.rollouts is None:
        raise ConfigurationError(
            "this store keeps no rollout index, so it cannot run extraction; use the SQLite or "
            "DynamoDB store"
        )

    def extract(
        payload: RolloutPayload, memory: MemoryConfig, erasures: int | None
    ) -> ExtractionOutcome:
        return extract_rollout(
            payload,
            memory,
            stores=stores,
            model=model,
            embedder=embedder,
            clock=clock,
            erasures=erasures,
        )

    return Consumer(
        rollouts=stores.rollouts,
        staging=staging,
        memories=stored_or(stores.memories, embedded_memory),
        extract=extract,
        clock=clock,
        erasures=stores.records.erasures,
    )


def consume(notice: RolloutNotice, consumer: Consumer) -> Consumed:
    """Extract the announced rollout's records once; see the module docstring for each case.

    An erase or retract that commits in the scope while the rollout is being extracted wins:
    the plan made before it is dropped and the rollout read and extracted once more (nothing,
    if the erase took the rollout with it); a second one raises ``ErasedMeanwhileError``
    (retryable), for the queue to deliver it again.
    """
    try:
        return _consume(notice, consumer)
    except ErasedMeanwhileError:
        return _consume(notice, consumer)


def _consume(notice: RolloutNotice, consumer: Consumer) -> Consumed:
    scope, rid = notice.scope, notice.rollout_id
    erasures = consumer.erasures(scope) if consumer.erasures is not None else None
    try:
        rollout = consumer.rollouts.get(scope, rid)
    except RolloutNotFoundError:
        return Consumed(rollout_id=rid, status="unknown", reason="no such rollout (erased?)")
    if rollout.state in (RolloutState.CONSUMED, RolloutState.FAILED):
        if rollout.state is RolloutState.CONSUMED:  # its consumer may have died before this
            _forget_payload(consumer, rollout)
        return Consumed(rollout_id=rid, status="duplicate")
    if rollout.kind == "evidence":  # a run's evidence is consolidation's, never extracted
        return Consumed(rollout_id=rid, status="skipped", reason="evidence for consolidation")
    try:
        payload = decode_payload(consumer.staging.get(scope, rid))
        memory = consumer.memories(notice.memory_id)
    except (RolloutNotFoundError, InvalidInputError, MemoryNotFoundError) as exc:
        return _fail(consumer, rollout, f"{type(exc).__name__}: {exc.message}")
    try:
        outcome = consumer.extract(payload, memory, erasures)
    except CairnError as exc:
        if exc.retryable:
            raise  # the queue delivers it again (a model timeout, a busy store)
        return _fail(consumer, rollout, f"{type(exc).__name__}: {exc.message}")
    if not outcome.done:
        return _fail(consumer, rollout, outcome.reason or outcome.status)
    try:
        consumer.rollouts.mark(scope, rid, RolloutState.CONSUMED, now=consumer.clock.now())
    except RolloutNotFoundError:
        # Erased after the apply (DeleteMemory, `cairn erase --all-of-actor`): the erase took
        # what was written, and the fenced placements followed it (cairn.erasure_fence).
        return Consumed(rollout_id=rid, status="unknown", reason="erased while extracted")
    _forget_payload(consumer, rollout)
    return Consumed(rollout_id=rid, status="consumed", written=len(outcome.written))


def _fail(consumer: Consumer, rollout: Rollout, reason: str) -> Consumed:
    # The reason stays in the rollout index; a log line carries only the id (no content).
    log.warning("rollout %s failed and will not be retried; see its reason", rollout.rollout_id)
    consumer.rollouts.mark(
        rollout.scope,
        rollout.rollout_id,
        RolloutState.FAILED,
        now=consumer.clock.now(),
        reason=reason,
    )
    return Consumed(rollout_id=rollout.rollout_id, status="failed", reason=reason)


def _forget_payload(consumer: Consumer, rollout: Rollout) -> None:
    """Delete the consumed payload; a failure only delays that to the bucket's expiry rule."""
    try:
        consumer.staging.delete(rollout.scope, rollout.rollout_id)
    except CairnError as exc:
        log.warning(
            "consumed rollout %s keeps its payload until expiry (%s)",
            rollout.rollout_id,
            type(exc).__name__,
        )
