"""Evolution: refresh a record's context line and tags from its linked neighbours.

``run_evolution_job(stores, model, memory_id, clock=...)`` visits every actor of the memory
holding records and, for each active head with links (``stores.links``), reads its live
neighbours. What changes is only the record's context line (``RecordFields.context``) and its
tags, as a new version through ``RecordStore.apply`` (a ``Revise``; never its content), and
only where authority allows every source that contributed (``cairn.authority.may_change``):

- through the model (``cairn.history.evolution_prompts``): the model is asked for a context
  line and tags; the version's sources add the neighbours', the links' and the model's (a
  ``model`` source with the run's id), so trust only falls. A model source is untrusted, so a
  record of user authority is never evolved by a model answer (nor asked about);
- by rule, where the model may not change the record but the neighbours and links may (a
  user's record linked by a trusted link to the user's own records): it takes the tags its
  neighbours carry that it does not, sourced by theirs and the links';
- otherwise it is skipped, counted.

Idempotent: each record's neighbourhood (its content, context and tags; each neighbour's id
and version; each link) is digested and the digest noted in the job log's markers
(``JobLog.set_marker``, keyed by the record) after the record evolved or the model declined,
so an unchanged neighbourhood is never asked about nor evolved twice. The apply is
conditioned on the heads read (``snapshot``), so a record or neighbour changed meanwhile is
left to the next run.

Bounded per run: at most ``max_records`` new versions and ``max_calls`` model calls over the
memory; the rest wait.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from cairn.authority import may_change
from cairn.changes import RecordPatch, Revise
from cairn.errors import CairnError
from cairn.history import evolution_prompts as prompts
from cairn.history.job_runs import RunTally, start_run, switched_off
from cairn.jobs import JobName, JobRun
from cairn.links import Link
from cairn.models import RecordVersion, Scope, Source, SourceKind, Status
from cairn.ports import MAX_PAGE_SIZE, Clock, ModelProvider, Stores

DEFAULT_MAX_RECORDS = 20
DEFAULT_MAX_CALLS = 8
MAX_TAGS_ADDED = prompts.MAX_TAGS_ADDED

REFUSED = "record(s) not evolved: a contributing source may not change them"
CALLS_LEFT = "record(s) left for the next run: the run's model calls were spent"


class _Run:
    def __init__(self, tally: RunTally, max_records: int, max_calls: int) -> None:
        self.tally, self.records, self.calls = tally, max_records, max_calls

    def spent(self) -> bool:
        return self.tally.changed >= self.records


def run_evolution_job(
    stores: Stores,
    model: ModelProvider,
    memory_id: str,
    *,
    clock: Clock,
    max_records: int = DEFAULT_MAX_RECORDS,
    max_calls: int = DEFAULT_MAX_CALLS,
    until: datetime | None = None,
) -> JobRun:
    """One evolution run over the memory; see the module."""
    tally = start_run(JobName.EVOLUTION, memory_id, clock, until)
    skipped = switched_off(stores, memory_id, JobName.EVOLUTION)
    if stores.links is None:
        skipped = "these stores keep no links, so no record has neighbours"
    if skipped is not None:
        return tally.finish(stores, clock, skipped=skipped)
    run = _Run(tally, max_records, max_calls)
    for scope in tally.scopes(stores, memory_id, run.spent):
        _evolve_scope(stores, model, scope, run)
    return tally.finish(stores, clock)


def _evolve_scope(stores: Stores, model: ModelProvider, scope: Scope, run: _Run) -> None:
    cursor: str | None = None
    while True:
        page = stores.records.list_records(scope, limit=MAX_PAGE_SIZE, cursor=cursor)
        for record in page.items:
            if run.spent():
                run.tally.reasons[
                    "scope(s) with records left for the next run: the run's bound"
                ] += 1
                return
            _evolve(stores, model, scope, record, run)
        cursor = page.next_cursor
        if cursor is None:
            return


def _evolve(
    stores: Stores, model: ModelProvider, scope: Scope, record: RecordVersion, run: _Run
) -> None:
    assert stores.links is not None
    links = stores.links.links_of(scope, record.record_id)
    neighbours: list[tuple[RecordVersion, Link]] = []
    for link in links:
        other = link.to_id if link.from_id == record.record_id else link.from_id
        try:
            neighbour = stores.records.get(scope, other)
        except CairnError:
            continue  # erased meanwhile: its links go with it
        if neighbour.status is Status.ACTIVE:
            neighbours.append((neighbour, link))
    if not neighbours:
        return
    seen = _noted(stores, scope, record.record_id)
    if seen is not None and seen == _digest(record, neighbours):
        return  # an unchanged neighbourhood: asked about (or evolved) already
    sources = [s for neighbour, link in neighbours for s in (*neighbour.sources, *link.sources)]
    model_source = Source(kind=SourceKind.MODEL, run_id=run.tally.run_id)
    if may_change([*sources, model_source], None, record):
        if run.calls <= 0:
            run.tally.reasons[CALLS_LEFT] += 1
            return
        run.calls -= 1
        try:
            proposed = _ask(model, record, neighbours)
        except CairnError as exc:
            run.tally.reasons[f"model call failed ({type(exc).__name__})"] += 1
            return
        patch = _patch(
            record, proposed.context if proposed else None, proposed.tags if proposed else ()
        )
        sources.append(model_source)
    elif may_change(sources, None, record):
        patch = _patch(record, None, tuple(t for n, _ in neighbours for t in n.tags))
    else:
        run.tally.reasons[REFUSED] += 1
        return
    if patch is None:
        _note(
            stores, scope, record, neighbours
        )  # nothing new: the same neighbourhood won't be asked again
        return
    change = Revise(
        record_id=record.record_id, patch=patch, add_sources=tuple(dict.fromkeys(sources))
    )
    snapshot = {r.record_id: r.version for r in (record, *(n for n, _ in neighbours))}
    try:
        (evolved,) = stores.records.apply(scope, [change], snapshot=snapshot)
    except CairnError:
        run.tally.reasons["record(s) changed meanwhile: left to the next run"] += 1
        return
    run.tally.changed += 1
    _note(stores, scope, evolved, neighbours)


def _ask(
    model: ModelProvider, record: RecordVersion, neighbours: list[tuple[RecordVersion, Link]]
) -> prompts.ProposedEvolution | None:
    document = prompts.EvolutionDocument(
        record=prompts.evolving(record.content, record.tags, record.context),
        neighbours=tuple(
            prompts.linked(n.content, n.tags, n.context, link.kind.value)
            for n, link in neighbours[: prompts.MAX_NEIGHBOURS_ASKED]
        ),
    )
    return prompts.read_evolution(model.complete(prompts.evolution_request(document)).text)


def _patch(record: RecordVersion, context: str | None, tags: tuple[str, ...]) -> RecordPatch | None:
    """What changes: a context line other than the record's, and tags it does not hold (at
    most ``MAX_TAGS_ADDED``, appended); ``None`` when nothing does."""
    added = tuple(t for t in dict.fromkeys(tags) if t not in record.tags)[:MAX_TAGS_ADDED]
    new_context = context if context is not None and context != record.context else None
    if not added and new_context is None:
        return None
    return RecordPatch(context=new_context, tags=(*record.tags, *added) if added else None)


def _digest(record: RecordVersion, neighbours: list[tuple[RecordVersion, Link]]) -> str:
    """The record's neighbourhood as evolution reads it, digested: what the record says and
    carries, and what each neighbour says and is tagged, linked how. A neighbour's own context
    line is left out, so two records refreshing their context lines never re-ask each other."""
    seen = {
        "record": [record.content_digest, record.context, list(record.tags)],
        "neighbours": sorted(
            [n.record_id, n.content_digest, list(n.tags), link.from_id, link.kind.value, link.to_id]
            for n, link in neighbours
        ),
    }
    return hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()


def _noted(stores: Stores, scope: Scope, record_id: str) -> str | None:
    if stores.jobs is None:
        return None
    return stores.jobs.marker(scope, JobName.EVOLUTION, key=record_id)


def _note(
    stores: Stores,
    scope: Scope,
    record: RecordVersion,
    neighbours: list[tuple[RecordVersion, Link]],
) -> None:
    if stores.jobs is not None:
        stores.jobs.set_marker(
            scope, JobName.EVOLUTION, _digest(record, neighbours), key=record.record_id
        )
