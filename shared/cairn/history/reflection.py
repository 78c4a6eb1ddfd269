"""Reflection: insights synthesised from never-recalled clusters, and contradictions flagged.

``run_reflection_job(stores, model, memory_id, embedder=..., clock=...)`` visits every actor of
the memory holding records and reads its live heads with their vectors through the recall
index's snapshot of the scope (``cairn.history.linking.scope_snapshot``: the process's kept one
where there is one), after the scope's erasure count, which every
write of the run is fenced by (``cairn.erasure_fence``: a reflection planned from a member that
an erase then destroyed is never written), then does two things, each through the model port:

- **synthesis** (``cairn.history.synthesis``): records no recall has shown yet (access count
  0, ``AccessCounts.counts``) are clustered by cosine within their namespace; for each cluster
  of two or more the model answers one insight citing its members, filed as a record of its
  own (``cairn.reflection_records``: strategy ``reflection``, category ``insight``, in the
  members' namespace) whose sources are the cited members' plus the model's (so it is
  untrusted), linked ``part_of`` from each cited member in the link store. It remembers the
  member versions it was made from: a rerun over an unchanged cluster files nothing, a cluster
  whose members changed revises its reflection (a new version, never a second reflection);
- **contradictions** (``cairn.history.contradiction_flags``): the records written since the
  job's cursor, paired with their nearest live heads through the recall index's snapshot,
  where the model says the two cannot both hold, are marked as consolidation marks them, a
  ``contradicts`` edge on each (rendered ``contested``), content, sources and trust unchanged;
  nothing is superseded or retracted, whichever side is untrusted;
- **upkeep**: a reflection made from a record that is no longer live (retracted, as
  DeleteMemoryRecord does, or superseded) and that no cluster took up again is retracted too
  (softly, as its member was), so recall never shows what it said of that record; only after a
  synthesis that saw to every cluster of the scope (one left for later may still revise it).

A scope whose state (its change feed's last sequence and the recall journal sequence its access
counts are counted to) is the one a whole run of it (nothing left for later) started from is
skipped, named in the run log, the outcome still ``done``; what the run wrote itself (its
reflections, retractions and marks) is no news to the next, so a run after a whole one that
wrote is skipped too, unless someone else wrote meanwhile.

Off unless switched on. Bounded per run: at most ``max_calls`` model calls over the memory
(synthesis first), ``max_clusters`` reflections filed or revised and ``max_flags`` pairs
flagged, and no call started at or after ``until`` (the scheduled jobs Lambda leaves the rollup
its time); the rest waits for the next run. The run log counts what changed and why anything
was left (never content or ids). Changes = reflections filed, revised or retracted plus pairs
flagged.
"""

from __future__ import annotations

from datetime import datetime

from cairn.changes import Retract
from cairn.errors import CairnError
from cairn.history.contradiction_flags import flag_contradictions, past_own
from cairn.history.job_runs import RunTally, start_run, switched_off
from cairn.history.linking import scope_snapshot
from cairn.history.synthesis import ReflectionBudget, synthesise
from cairn.jobs import JobName, JobRun
from cairn.models import Scope
from cairn.ports import Clock, Embedder, ModelProvider, Stores
from cairn.recall.index.snapshot import Snapshot
from cairn.reflection_records import REFLECTION_STRATEGY, made_from

DEFAULT_MAX_CALLS = 8
DEFAULT_MAX_CLUSTERS = 5
DEFAULT_MAX_FLAGS = 10
MAX_RETRACTS = 16  # one apply's changes (cairn.changes.MAX_CHANGES_PER_APPLY)


def run_reflection_job(
    stores: Stores,
    model: ModelProvider,
    memory_id: str,
    *,
    embedder: Embedder | None,
    clock: Clock,
    max_calls: int = DEFAULT_MAX_CALLS,
    max_clusters: int = DEFAULT_MAX_CLUSTERS,
    max_flags: int = DEFAULT_MAX_FLAGS,
    until: datetime | None = None,
) -> JobRun:
    """One reflection run over the memory; see the module."""
    tally = start_run(JobName.REFLECTION, memory_id, clock, until)
    skipped = switched_off(stores, memory_id, JobName.REFLECTION)
    if embedder is None:
        skipped = "no embedder is configured, so no record has neighbours"
    if skipped is not None:
        return tally.finish(stores, clock, skipped=skipped)
    assert embedder is not None
    budget = ReflectionBudget(max_calls, max_clusters, max_flags, clock, until)
    for scope in tally.scopes(stores, memory_id, budget.spent):
        state = _state(stores, scope)
        if state is not None and _seen(stores, scope) == state:
            tally.notes[UNCHANGED] += 1
            continue
        erasures = stores.records.erasures(scope)  # first: an erasure after it fences the writes
        snapshot = scope_snapshot(stores, scope, embedder.identity)
        complete = synthesise(
            stores, model, embedder, scope, snapshot, tally, budget, clock, erasures
        )
        ident = embedder.identity
        flagged = flag_contradictions(stores, model, scope, ident, tally, budget, erasures)
        if complete:
            retire_stale(stores, scope, snapshot, tally, erasures, budget.wrote)
        if complete and flagged and state is not None:
            _note_seen(stores, scope, state, budget.wrote)
    return tally.finish(stores, clock)


SEEN_KEY = "seen"  # the scope's state a run saw to whole (the pairs' cursor is the "" marker)
UNCHANGED = "actor(s) skipped: no record written and none recalled since the last whole run"


def _note_seen(stores: Stores, scope: Scope, state: str, wrote: set[tuple[str, int]]) -> None:
    """Note ``state`` as seen to, its sequence moved past the versions the run wrote itself."""
    assert stores.changes is not None
    assert stores.jobs is not None
    sequence, _, access = state.partition("/")
    moved = past_own(stores.changes, scope, int(sequence), wrote)
    stores.jobs.set_marker(scope, JobName.REFLECTION, f"{moved}/{access}", SEEN_KEY)


def _seen(stores: Stores, scope: Scope) -> str | None:
    return stores.jobs.marker(scope, JobName.REFLECTION, SEEN_KEY) if stores.jobs else None


def _state(stores: Stores, scope: Scope) -> str | None:
    """What a run depends on, read before it: the scope's last change and the recall journal
    sequence its access counts are counted up to (``None``: these stores keep no such thing)."""
    if stores.changes is None or stores.jobs is None or stores.access is None:
        return None
    return f"{stores.changes.last_sequence(scope)}/{stores.access.cursor(scope)}"


RETIRE_REASON = "a record it was made from is no longer live"


def retire_stale(
    stores: Stores,
    scope: Scope,
    snapshot: Snapshot,
    tally: RunTally,
    erasures: int,
    wrote: set[tuple[str, int]],
) -> None:
    """Retract each live reflection (as it reads now) made from a record not among the
    snapshot's, the scope's live heads at the start of the run, in one apply."""
    live = set(snapshot.record_ids)
    stale = {}
    for row, record_id in enumerate(snapshot.record_ids):
        if snapshot.strategies[int(snapshot.strategy_codes[row])] != REFLECTION_STRATEGY:
            continue
        try:
            now = stores.records.get(scope, record_id)
        except CairnError:
            continue  # erased meanwhile: nothing left to retract
        if now.live and made_from(now).keys() - live:
            stale[now.record_id] = now.version
    for start in range(0, len(stale), MAX_RETRACTS):
        batch = dict(list(stale.items())[start : start + MAX_RETRACTS])
        changes = [Retract(record_id=rid, reason=RETIRE_REASON) for rid in batch]
        try:
            retracted = stores.records.apply(scope, changes, snapshot=batch, erasures=erasures)
        except CairnError:
            tally.reasons["stale reflection(s) changed meanwhile: left to the next run"] += 1
            return
        wrote.update((v.record_id, v.version) for v in retracted)
        erasures += 1  # a retract counts as an erasure: this apply moved the count by one
        tally.changed += len(batch)
