"""Consolidation in process: the deferred worker over a store, for embedded and long-lived hosts.

``consolidation_worker`` binds ``consolidate_scope`` to the stores, the staged payloads and the
model, and returns a ``ConsolidationWorker`` (not started). ``cairn.local.system`` wires it
beside the extraction worker: one notifier routes extraction rollouts to extraction and run
evidence here (``KindRouter``), and the sweep re-announces either kind when it stalls.
Without a worker, ``consolidate_with_retry(scope, consolidator)`` is the synchronous call.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor

from cairn.consolidate.commit import Consolidator, PassOutcome, ResolveMemory, consolidate_scope
from cairn.consolidate.consolidation_policy import DEFAULT_CONSOLIDATION_POLICY, ConsolidationPolicy
from cairn.consolidate.failures import ErrorCallback
from cairn.consolidate.worker import DEFAULT_CAPACITY, ConsolidationWorker
from cairn.models import Scope
from cairn.ports import Clock, ModelProvider, StagingStore, Stores


def consolidation_worker(
    stores: Stores,
    staging: StagingStore,
    *,
    model: ModelProvider,
    clock: Clock,
    memories: ResolveMemory | None = None,
    policy: ConsolidationPolicy = DEFAULT_CONSOLIDATION_POLICY,
    capacity: int = DEFAULT_CAPACITY,
    executor: Executor | None = None,
    on_error: ErrorCallback | None = None,
) -> ConsolidationWorker:
    """A worker running passes over ``stores`` (call ``start`` to run it in the background)."""
    consolidator = Consolidator(
        stores=stores, staging=staging, model=model, clock=clock, memories=memories, policy=policy
    )

    def run_pass(scope: Scope, cancelled: Callable[[], bool]) -> PassOutcome:
        return consolidate_scope(scope, consolidator, cancelled=cancelled)

    return ConsolidationWorker(
        run_pass, clock=clock, capacity=capacity, executor=executor, on_error=on_error
    )
