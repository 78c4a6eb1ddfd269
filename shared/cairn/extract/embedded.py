"""Extraction on a laptop: the SQLite store, staged payloads on disk, and the worker thread.

``open_embedded(path, model=...)`` opens the SQLite store at ``path``, stages payloads in the
directory beside it (``<name>-rollouts/``), and starts an ``ExtractionWorker`` fed by an
in-process notifier. ``EmbeddedExtraction.append`` is then all an agent loop calls: each turn
is stored and counted, and records appear as the triggers fire, with no explicit ``remember``.
``close`` waits for the queued extractions (``drain``), stops the worker and closes the store.

A memory with no stored configuration (``default``, which the ``cairn`` command uses) extracts
with the built-in strategies (``cairn.extract.triggers.embedded_memory``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cairn.clock import SystemClock
from cairn.errors import ConfigurationError
from cairn.extract.delivery import Consumer, stored_or
from cairn.extract.extractor import ExtractionOutcome, extract_rollout
from cairn.extract.rollout import RolloutPayload
from cairn.extract.staging import RolloutPipeline
from cairn.extract.triggers import embedded_memory, policy_for
from cairn.extract.worker import DEFAULT_CAPACITY, ExtractionWorker
from cairn.memories import MemoryConfig
from cairn.models import EventInput, Scope
from cairn.ports import Clock, Embedder, ModelProvider, StagingStore, Stores
from cairn.rollouts import Appended


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

    def append(self, scope: Scope, event: EventInput) -> Appended:
        """Store and count one event under its memory's triggers; release what fired."""
        memory = self.consumer.memories(scope.memory_id)
        return self.pipeline.append(scope, event, policy_for(memory))

    def close(self) -> None:
        """Finish queued extractions, stop the worker, close the store."""
        try:
            self.worker.drain()
            self.worker.stop()
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
) -> EmbeddedExtraction:
    """Connect ``stores`` and ``staging`` to a worker (not started: call ``worker.start``)."""
    rollouts = stores.rollouts
    if rollouts is None:
        raise ConfigurationError(
            "this store keeps no rollout index, so it cannot run extraction; use the SQLite store"
        )

    def extract(payload: RolloutPayload, memory: MemoryConfig) -> ExtractionOutcome:
        return extract_rollout(
            payload, memory, stores=stores, model=model, embedder=embedder, clock=clock
        )

    consumer = Consumer(
        rollouts=rollouts,
        staging=staging,
        memories=stored_or(stores.memories, embedded_memory),
        extract=extract,
        clock=clock,
    )
    worker = ExtractionWorker(consumer, capacity=capacity)
    pipeline = RolloutPipeline(
        rollouts=rollouts, staging=staging, notifier=worker.notifier, clock=clock
    )
    worker.attach(pipeline)
    return EmbeddedExtraction(stores=stores, pipeline=pipeline, worker=worker, consumer=consumer)


def open_embedded(
    path: Path | str,
    *,
    model: ModelProvider,
    embedder: Embedder | None,
    clock: Clock | None = None,
) -> EmbeddedExtraction:
    """Open the SQLite store at ``path`` with extraction running in a background thread."""
    from cairn.store.sqlite import SQLiteBackend
    from cairn.store.staging_fs import FilesystemStagingStore

    at = Path(path).expanduser()
    used = clock or SystemClock()
    stores = SQLiteBackend(at, used).stores()
    embedded = wire_embedded(
        stores, FilesystemStagingStore(staging_dir(at)), model=model, embedder=embedder, clock=used
    )
    embedded.worker.start()
    return embedded
