"""Link generation: typed links between nearby records, proposed through the model port.

``run_link_job(stores, model, memory_id, embedder=..., clock=...)`` visits every actor of the
memory holding records. For each, it reads the records written since its cursor (the scope's
change feed past the sequence noted in the job log, ``JobLog.marker``;
``cairn.history.link_pairs``) and pairs each, through the recall index's snapshot of the
scope in ``embedder``'s space (``EmbeddedRecallIndex.snapshot``), with its nearest neighbours
by cosine (at least ``floor``): the new records against the scope, never all pairs. It drops
pairs already linked and asks the model, ``MAX_PAIRS_PER_CALL`` pairs a call
(``cairn.history.link_prompts``), which of them a kind from the vocabulary justifies. Each
answer becomes a ``Link`` in ``stores.links``, sourced ``model`` with the run's id: untrusted,
and neither record changes.

The cursor moves, after the run's calls, to the last record all of whose pairs were asked
(every record before it too), so a scope where nothing was written since is skipped (named in
the run log, the outcome stays ``done``) and a declined pair is not asked again. Stores with no
change feed or job log pair every head each run.

Bounded per run: at most ``max_calls`` model calls and ``max_links`` new links over the whole
memory. The run log says how many links were made and, counted, why anything was dropped (a
kind outside the vocabulary, a record erased meanwhile, a failed call); never content.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from cairn.errors import CairnError, RecordNotFoundError
from cairn.history.job_runs import RunTally, start_run, switched_off
from cairn.history.link_pairs import (
    Pair,
    Written,
    ask_in_batches,
    cursor_value,
    nearest,
    read_cursor,
    written_since,
)
from cairn.history.link_prompts import (
    LinkEnd,
    LinkPair,
    end_of,
    link_request,
    read_links,
)
from cairn.jobs import JobName, JobRun
from cairn.links import Link
from cairn.models import EmbedderId, Scope, Source, SourceKind
from cairn.ports import Clock, ModelProvider, Stores
from cairn.recall.index.embedded import EmbeddedRecallIndex
from cairn.recall.index.rows import bulk_reads, read_rows
from cairn.recall.index.shared import index_of
from cairn.recall.index.snapshot import Snapshot, build_snapshot

DEFAULT_MAX_CALLS = 8
DEFAULT_MAX_LINKS = 50
# Below this cosine two records are not "nearby" (recall's own floor is 0.3; a link claims more).
LINK_FLOOR = 0.5
UNCHANGED = "actor(s) skipped: no record written since the last run"
LEFT = "pair(s) left for the next run: the run's bound was reached"


def run_link_job(
    stores: Stores,
    model: ModelProvider,
    memory_id: str,
    *,
    embedder: EmbedderId | None,
    clock: Clock,
    max_calls: int = DEFAULT_MAX_CALLS,
    max_links: int = DEFAULT_MAX_LINKS,
    floor: float = LINK_FLOOR,
    until: datetime | None = None,
) -> JobRun:
    """One link-generation run over the memory; see the module."""
    tally = start_run(JobName.LINK, memory_id, clock, until)
    skipped = switched_off(stores, memory_id, JobName.LINK)
    if stores.links is None:
        skipped = "these stores keep no links"
    elif embedder is None:
        skipped = "no embedder is configured, so no record has neighbours"
    if skipped is not None:
        return tally.finish(stores, clock, skipped=skipped)
    assert embedder is not None
    budget = _Budget(max_calls, max_links)
    for scope in tally.scopes(stores, memory_id, budget.spent):
        _link_scope(stores, _Linker(stores, model, scope, tally, budget, clock), embedder, floor)
    return tally.finish(stores, clock)


class _Budget:
    def __init__(self, calls: int, links: int) -> None:
        self.calls, self.links = calls, links

    def spent(self) -> bool:
        return self.calls <= 0 or self.links <= 0


def _link_scope(stores: Stores, linker: _Linker, embedder: EmbedderId, floor: float) -> None:
    scope = linker.scope
    if stores.changes is None or stores.jobs is None:  # no cursor: every head is new each run
        snapshot = scope_snapshot(stores, scope, embedder)
        linker.ask(nearest(snapshot, [Written(0, r) for r in snapshot.record_ids], floor))
        return
    after, read = read_cursor(stores.jobs.marker(scope, JobName.LINK))
    written, upto = written_since(stores.changes, scope, after)
    if upto == after:
        linker.tally.notes[UNCHANGED] += 1
        return
    snapshot = scope_snapshot(stores, scope, embedder)
    reached = linker.ask(nearest(snapshot, written, floor, back_after=read))
    moved = upto if reached is None else reached
    if moved > after or upto > read:
        stores.jobs.set_marker(
            scope, JobName.LINK, cursor_value(max(moved, after), max(upto, read))
        )


def scope_snapshot(stores: Stores, scope: Scope, embedder: EmbedderId) -> Snapshot:
    """The recall index's snapshot of the scope (the process's kept one where there is one)."""
    index = index_of(stores)
    if isinstance(index, EmbeddedRecallIndex):
        return index.snapshot(scope, embedder)
    rows = read_rows(stores.records, scope, embedder, bulk=bulk_reads(stores.records))
    return build_snapshot(rows, embedder)


class _Linker:
    """Asks the model about a scope's pairs, in batches, within the run's budget."""

    def __init__(
        self,
        stores: Stores,
        model: ModelProvider,
        scope: Scope,
        tally: RunTally,
        budget: _Budget,
        clock: Clock,
    ) -> None:
        self.stores, self.model, self.scope = stores, model, scope
        self.tally, self.budget, self.clock = tally, budget, clock
        self.source = Source(kind=SourceKind.MODEL, run_id=tally.run_id)

    def ask(self, written: Iterable[Written]) -> int | None:
        """Ask about every unlinked pair of ``written`` (``ask_in_batches``)."""
        return ask_in_batches(
            written, lambda record: self._unlinked(record.pairs), self._send, self._spent
        )

    def _spent(self) -> bool:
        if self.budget.spent():
            self.tally.reasons[LEFT] += 1
            return True
        return False

    def _send(self, batch: list[Pair]) -> bool:
        if self.budget.spent():
            self.tally.reasons[LEFT] += 1
            return False
        return self._propose(batch)

    def _unlinked(self, pairs: tuple[Pair, ...]) -> list[Pair]:
        assert self.stores.links is not None
        kept = []
        for pair in pairs:
            linked = {
                other
                for link in self.stores.links.links_of(self.scope, pair.a)
                for other in (link.from_id, link.to_id)
            }
            if pair.b not in linked:
                kept.append(pair)
        return kept

    def _propose(self, batch: list[Pair]) -> bool:
        """Ask about ``batch`` and store the links answered; whether it was asked whole (the
        call answered and every link it proposed was stored or refused by the store)."""
        assert self.stores.links is not None
        self.budget.calls -= 1
        try:
            document = tuple(
                LinkPair(n=n, a=self._end(p.a), b=self._end(p.b), cosine=round(p.cosine, 3))
                for n, p in enumerate(batch, 1)
            )
            answer = self.model.complete(link_request(document)).text
            proposals, dropped = read_links(answer, len(batch))
        except CairnError as exc:
            self.tally.reasons[f"model call failed ({type(exc).__name__})"] += 1
            return False
        if dropped:
            self.tally.reasons[
                "proposal(s) dropped: a kind outside the vocabulary or no such pair"
            ] += dropped
        for n, kind in proposals:
            if self.budget.links <= 0:
                self.tally.reasons[
                    "link(s) left for the next run: the run's bound was reached"
                ] += 1
                return False
            pair = batch[n - 1]
            link = Link(
                memory_id=self.scope.memory_id,
                actor_id=self.scope.actor_id,
                from_id=pair.a,
                kind=kind,
                to_id=pair.b,
                sources=(self.source,),
                created_at=self.clock.now(),
            )
            try:
                stored = self.stores.links.put(self.scope, link)
            except RecordNotFoundError:
                self.tally.reasons["record(s) erased or gone before their link was stored"] += 1
                continue
            if stored == link:
                self.tally.changed += 1
                self.budget.links -= 1
        return True

    def _end(self, record_id: str) -> LinkEnd:
        version = self.stores.records.get(self.scope, record_id)
        return end_of(version.content, tuple(version.entities))
