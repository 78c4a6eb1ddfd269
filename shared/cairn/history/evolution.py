"""Evolution: refresh a record's tags from its linked neighbours, as a new version.

``run_evolution_job(stores, memory_id, clock=...)`` visits every actor of the memory holding
records and, for each active head with links (``stores.links``), gathers the tags its live
neighbours carry that it does not (at most ``MAX_TAGS_ADDED``, in order). By an offline rule,
no model: a tag a linked record carries is a tag of the topic they share. The record gets them
as a new version through ``RecordStore.apply`` (a ``Revise`` of its tags only, never its
content) whose sources add the neighbours' and the links' sources, so trust follows: it can
only fall. So it evolves only when every contributing source may change it
(``cairn.authority.may_change``): a record of user authority is never evolved from a
model-proposed link or an untrusted neighbour (such a record is skipped, counted). The apply
is conditioned on the heads read (``snapshot``), so a record or neighbour changed meanwhile is
left to the next run. A record whose neighbours add nothing is not touched: a rerun changes
nothing.

Bounded per run: at most ``max_records`` new versions over the memory; the rest wait.
"""

from __future__ import annotations

from cairn.authority import may_change
from cairn.changes import RecordPatch, Revise
from cairn.errors import CairnError
from cairn.history.job_runs import RunTally, start_run, switched_off
from cairn.jobs import JobName, JobRun
from cairn.models import RecordVersion, Scope, Source, Status
from cairn.ports import MAX_PAGE_SIZE, Clock, Stores

DEFAULT_MAX_RECORDS = 20
MAX_TAGS_ADDED = 5


def run_evolution_job(
    stores: Stores, memory_id: str, *, clock: Clock, max_records: int = DEFAULT_MAX_RECORDS
) -> JobRun:
    """One evolution run over the memory; see the module."""
    tally = start_run(JobName.EVOLUTION, memory_id, clock)
    skipped = switched_off(stores, memory_id, JobName.EVOLUTION)
    if stores.links is None:
        skipped = "these stores keep no links, so no record has neighbours"
    if skipped is not None:
        return tally.finish(stores, clock, skipped=skipped)
    for scope in tally.scopes(stores, memory_id, lambda: tally.changed >= max_records):
        _evolve_scope(stores, scope, max_records, tally)
    return tally.finish(stores, clock)


def _evolve_scope(stores: Stores, scope: Scope, max_records: int, tally: RunTally) -> None:
    cursor: str | None = None
    while True:
        page = stores.records.list_records(scope, limit=MAX_PAGE_SIZE, cursor=cursor)
        for record in page.items:
            if tally.changed >= max_records:
                tally.reasons["scope(s) with records left for the next run: the run's bound"] += 1
                return
            _evolve(stores, scope, record, tally)
        cursor = page.next_cursor
        if cursor is None:
            return


def _evolve(stores: Stores, scope: Scope, record: RecordVersion, tally: RunTally) -> None:
    assert stores.links is not None
    links = stores.links.links_of(scope, record.record_id)
    if not links:
        return
    neighbours: list[RecordVersion] = []
    sources: list[Source] = []
    for link in links:
        other = link.to_id if link.from_id == record.record_id else link.from_id
        try:
            neighbour = stores.records.get(scope, other)
        except CairnError:
            continue  # erased meanwhile: its links go with it
        if neighbour.status is Status.ACTIVE:
            neighbours.append(neighbour)
            sources += [*neighbour.sources, *link.sources]
    added = _new_tags(record, neighbours)
    if not added:
        return
    if not may_change(sources, None, record):
        tally.reasons["record(s) not evolved: a contributing source may not change them"] += 1
        return
    snapshot = {r.record_id: r.version for r in (record, *neighbours)}
    change = Revise(
        record_id=record.record_id,
        patch=RecordPatch(tags=(*record.tags, *added)),
        add_sources=tuple(dict.fromkeys(sources)),
    )
    try:
        stores.records.apply(scope, [change], snapshot=snapshot)
    except CairnError:
        tally.reasons["record(s) changed meanwhile: left to the next run"] += 1
        return
    tally.changed += 1


def _new_tags(record: RecordVersion, neighbours: list[RecordVersion]) -> tuple[str, ...]:
    held = set(record.tags)
    added: list[str] = []
    for neighbour in neighbours:
        for tag in neighbour.tags:
            if tag not in held and len(added) < MAX_TAGS_ADDED:
                held.add(tag)
                added.append(tag)
    return tuple(added)
