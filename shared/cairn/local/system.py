"""Extraction on a laptop: the SQLite store, staged payloads on disk, and the worker thread.

``open_embedded(path, model=...)`` opens the SQLite store at ``path``, stages payloads in the
directory beside it (``<name>-rollouts/``), and starts an ``ExtractionWorker`` fed by an
in-process notifier. ``EmbeddedExtraction.append`` is then all an agent loop calls: each turn
is stored and counted, and records appear as the triggers fire, with no explicit ``remember``.
``release_session`` hands a session's turns no trigger released yet to extraction at once (a
session opened with ``EmbeddedExtraction.session`` does it when it closes, so a conversation
shorter than the message trigger is filed without waiting for the idle sweep). ``close`` waits
for the queued extractions (``drain``), stops the worker and closes the store.

Consolidation runs beside it (``cairn.consolidate.worker``): a session opened with
``EmbeddedExtraction.session`` stages each completed run's evidence (``evidence``), the
notifier routes it to the deferred ``consolidation`` worker, and passes tidy the scope in the
background.

The history rollup runs beside them too (``cairn.history.worker``): whenever an extraction
trigger fires for a session, the ``history`` worker rolls up the session's complete batches of
turns into the pyramid, in its own thread, unless the memory switched the rollup off; after
a pass it runs the scheduled jobs (access counting, link generation) over the memory, at most
once per `cairn.history.scheduled.SCHEDULED_EVERY`.

The consumer and the consolidator are wired by the features' own builders
(``cairn.extract.delivery.build_consumer``, ``cairn.consolidate.commit.build_consolidator``),
the same ones the Lambdas call. A memory with no stored configuration (``default``, which the
``cairn`` command uses) extracts with the built-in strategies
(``cairn.extract.triggers.embedded_memory``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path

from cairn.clock import SystemClock
from cairn.consolidate.commit import build_consolidator
from cairn.consolidate.evidence import EvidenceStager
from cairn.consolidate.failures import ErrorCallback
from cairn.consolidate.worker import ConsolidationWorker, KindRouter, consolidation_worker
from cairn.extract.delivery import Consumer, build_consumer
from cairn.extract.extractor import ExtractionOutcome
from cairn.extract.staging import RolloutPipeline
from cairn.extract.triggers import IN_PROCESS_SWEEP_EVERY, policy_for
from cairn.extract.worker import DEFAULT_CAPACITY, ExtractionWorker
from cairn.history.worker import RollupWorker
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.scope_locks import ScopeLocks
from cairn.memories import MemoryConfig
from cairn.models import EventInput, Scope
from cairn.ports import Clock, Embedder, ModelProvider, StagingStore, Stores
from cairn.rollout.index import Appended, Rollout
from cairn.rollout.payload import RolloutPayload
from cairn.runtime.session import MemorySession


def staging_dir(path: Path) -> Path:
    """Where the store at ``path`` stages payloads: ``<dir>/<name>-rollouts/``."""
    return path.with_name(f"{path.name}-rollouts")


@dataclass
class EmbeddedExtraction:
    """The store, the pipeline that counts and releases, and the worker that consumes."""

    stores: Stores
    pipeline: RolloutPipeline
    worker: ExtractionWorker
    consumer: Consumer
    consolidation: ConsolidationWorker | None = None
    evidence: EvidenceStager | None = None
    history: RollupWorker | None = None

    def append(self, scope: Scope, event: EventInput) -> Appended:
        """Store and count one event under its memory's triggers; release what fired (and
        ask the history worker for a rollup pass over the session when a trigger fired)."""
        memory = self.consumer.memories(scope.memory_id)
        appended = self.pipeline.append(scope, event, policy_for(memory))
        if appended.claim is not None and self.history is not None:
            self.history.request(scope, event.session_id)
        return appended

    def append_batch(
        self, scope: Scope, events: Sequence[EventInput], keys: Sequence[str | None]
    ) -> tuple[Appended, ...]:
        """``append`` of each event in order, in one transaction, each under its key."""
        memory = self.consumer.memories(scope.memory_id)
        answers = self.pipeline.append_batch(
            scope, events, policy_for(memory), idempotency_keys=keys
        )
        if self.history is not None:
            for session_id in dict.fromkeys(a.event.session_id for a in answers if a.claim):
                self.history.request(scope, session_id)
        return answers

    def release_session(self, scope: Scope, session_id: str) -> Rollout | None:
        """Claim and release the session's turns no trigger released yet, whatever the
        triggers; the rollout claimed, or ``None`` when nothing was pending. A release that
        fails after the claim is left to the sweep, as an append's is."""
        claim = self.pipeline.rollouts.claim_session(scope, session_id, self.pipeline.clock.now())
        if claim is None:
            return None
        self.pipeline.release_quietly(claim)
        if self.history is not None:
            self.history.request(scope, session_id)
        return claim

    def session(
        self,
        *,
        memory_id: str,
        actor_id: str,
        session_id: str,
        embedder: Embedder | None = None,
        on_consolidation_error: ErrorCallback | None = None,
    ) -> MemorySession:
        """A session whose turns are counted for extraction (and released to it when the
        session closes) and whose completed runs stage their evidence for consolidation."""
        return MemorySession.local(
            self.stores,
            memory_id=memory_id,
            actor_id=actor_id,
            session_id=session_id,
            embedder=embedder,
            clock=self.pipeline.clock,
            appender=self.append,
            batch_appender=self.append_batch,
            evidence=self.evidence.stage if self.evidence is not None else None,
            on_consolidation_error=on_consolidation_error,
            release=self.release_session,
        )

    def close(self) -> None:
        """Finish queued extractions and passes, stop the workers, close the store."""
        try:
            self.worker.drain()
            self.worker.stop()
            if self.consolidation is not None:
                self.consolidation.drain()
                self.consolidation.stop()
            if self.history is not None:
                self.history.stop()
        finally:
            self.stores.close()


def wire_embedded(
    stores: Stores,
    staging: StagingStore,
    *,
    model: ModelProvider,
    embedder: Embedder | None,
    clock: Clock,
    capacity: int = DEFAULT_CAPACITY,
    consolidation_executor: Executor | None = None,
    on_consolidation_error: ErrorCallback | None = None,
) -> EmbeddedExtraction:
    """Connect ``stores`` and ``staging`` to the workers (not started: call ``worker.start``
    and ``consolidation.start``)."""
    consumer = build_consumer(stores, staging, model=model, embedder=embedder, clock=clock)
    if isinstance(staging, FilesystemStagingStore):  # other processes may share the store
        consumer = one_scope_at_a_time(consumer, ScopeLocks(staging.root / "locks"))
    rollouts = consumer.rollouts
    worker = ExtractionWorker(consumer, capacity=capacity, sweep_every=IN_PROCESS_SWEEP_EVERY)
    consolidation = consolidation_worker(
        build_consolidator(stores, staging, model=model, clock=clock),
        executor=consolidation_executor,
        on_error=on_consolidation_error,
    )
    notifier = KindRouter(extraction=worker.notifier, evidence=consolidation.notifier)
    pipeline = RolloutPipeline(rollouts=rollouts, staging=staging, notifier=notifier, clock=clock)
    worker.attach(pipeline)
    return EmbeddedExtraction(
        stores=stores,
        pipeline=pipeline,
        worker=worker,
        consumer=consumer,
        consolidation=consolidation,
        evidence=EvidenceStager(rollouts, staging, notifier, clock),
        history=RollupWorker(
            stores,
            model,
            clock=clock,
            embedder=embedder.identity if embedder is not None else None,
            embed_with=embedder,
        )
        if stores.chunks is not None
        else None,
    )


def one_scope_at_a_time(consumer: Consumer, locks: ScopeLocks) -> Consumer:
    """``consumer``, extracting under the scope's cross-process lock (``local.scope_locks``)."""
    extract = consumer.extract

    def locked(
        payload: RolloutPayload, memory: MemoryConfig, erasures: int | None
    ) -> ExtractionOutcome:
        with locks.hold(Scope(memory_id=payload.memory_id, actor_id=payload.actor_id)):
            return extract(payload, memory, erasures)

    return dataclasses.replace(consumer, extract=locked)


def open_embedded(
    path: Path | str,
    *,
    model: ModelProvider,
    embedder: Embedder | None,
    clock: Clock | None = None,
) -> EmbeddedExtraction:
    """Open the SQLite store at ``path`` with extraction running in a background thread."""
    from cairn.local.fs_staging import FilesystemStagingStore
    from cairn.local.leftovers import tidy_staging
    from cairn.local.store import with_compaction
    from cairn.store.sqlite import SQLiteBackend

    at = Path(path).expanduser()
    used = clock or SystemClock()
    stores = with_compaction(SQLiteBackend(at, used).stores())
    tidy_staging(stores, staging_dir(at))  # what a killed process left behind (issue 14, 4)
    embedded = wire_embedded(
        stores, FilesystemStagingStore(staging_dir(at)), model=model, embedder=embedder, clock=used
    )
    embedded.worker.start()
    if embedded.consolidation is not None:
        embedded.consolidation.start()
    if embedded.history is not None:
        embedded.history.start()
    return embedded
