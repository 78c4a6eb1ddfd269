"""The API on a laptop, as ``cairn serve`` runs it: the SQLite store with extraction running.

``serve_embedded(stores, store_path, ...)`` wires the router over ``stores`` to the embedded
extraction pipeline (``cairn.local.system``): payloads staged in the directory beside the
store, an in-process worker consuming them. Events posted with CreateEvent or IngestData are
then counted toward their memory's triggers, and the records extraction files are what
RetrieveMemoryRecords and ListMemoryRecords return, with no BatchCreateMemoryRecords at all.
``EmbeddedApi.close`` finishes queued extractions, stops the worker and closes the store.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from cairn.api.context import ApiContext, ApiSettings
from cairn.api.router import Api
from cairn.extract.triggers import IN_PROCESS_TRIGGERS
from cairn.local.fs_staging import FilesystemStagingStore
from cairn.local.leftovers import tidy_staging
from cairn.local.system import EmbeddedExtraction, staging_dir, wire_embedded
from cairn.memories import TriggerConditions
from cairn.ports import Clock, Embedder, ModelProvider, Stores


@dataclass
class EmbeddedApi:
    """The router, the extraction running behind it, and where it stages payloads."""

    api: Api
    extraction: EmbeddedExtraction
    staging_root: Path

    def close(self) -> None:
        """Finish queued extractions, stop the worker, close the store."""
        self.extraction.close()


def serve_embedded(
    stores: Stores,
    store_path: Path,
    *,
    embedder: Embedder | None,
    model: ModelProvider,
    clock: Clock,
    settings: ApiSettings | None = None,
    start_worker: bool = True,
    built_in_triggers: TriggerConditions = IN_PROCESS_TRIGGERS,
) -> EmbeddedApi:
    """The API over ``stores`` (opened at ``store_path``) with extraction by ``model``, built-in
    strategies released under ``built_in_triggers``; the worker thread is started unless
    ``start_worker`` is false (tests drive it themselves)."""
    staging_root = staging_dir(store_path)
    tidy_staging(stores, staging_root)  # what a killed process left behind (issue 14, 4)
    extraction = wire_embedded(
        stores,
        FilesystemStagingStore(staging_root),
        model=model,
        embedder=embedder,
        clock=clock,
    )
    # The extractor runs in this process: built-in strategies extract within seconds.
    in_process = replace(settings or ApiSettings(), built_in_triggers=built_in_triggers)
    context = ApiContext.build(
        stores, embedder=embedder, clock=clock, settings=in_process, extraction=extraction.pipeline
    )
    if start_worker:
        extraction.worker.start()
    return EmbeddedApi(api=Api(context), extraction=extraction, staging_root=staging_root)
