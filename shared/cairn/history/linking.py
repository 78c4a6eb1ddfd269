"""Link generation: typed links between nearby records, proposed through the model port.

``run_link_job(stores, model, memory_id, embedder=..., clock=...)`` visits every actor of the
memory holding records. For each, it reads the live heads with their vectors in ``embedder``'s
space (``cairn.recall.index.embedded.read_rows``, the recall index's own read), pairs each
record with its nearest neighbours by cosine (at least ``floor``), drops pairs already linked,
and asks the model, ``MAX_PAIRS_PER_CALL`` pairs a call (``cairn.history.link_prompts``), which
of them a kind from the vocabulary justifies. Each answer becomes a ``Link`` in
``stores.links``, sourced ``model`` with the run's id: untrusted, and neither record changes.

Bounded per run: at most ``max_calls`` model calls and ``max_links`` new links over the whole
memory. The run log says how many links were made and, counted, why anything was dropped (a
kind outside the vocabulary, a record erased meanwhile, a failed call); never content.
"""

from __future__ import annotations

import numpy as np

from cairn.errors import CairnError, RecordNotFoundError
from cairn.history.job_runs import RunTally, start_run, switched_off
from cairn.history.link_prompts import (
    MAX_PAIRS_PER_CALL,
    LinkEnd,
    LinkPair,
    end_of,
    link_request,
    read_links,
)
from cairn.jobs import JobName, JobRun
from cairn.links import Link
from cairn.models import EmbedderId, Scope, Source, SourceKind
from cairn.ports import Clock, IndexRow, ModelProvider, Stores
from cairn.recall.index.rows import bulk_reads, read_rows

DEFAULT_MAX_CALLS = 8
DEFAULT_MAX_LINKS = 50
NEIGHBOURS = 3  # per record
# Below this cosine two records are not "nearby" (recall's own floor is 0.3; a link claims more).
LINK_FLOOR = 0.5
_BLOCK = 256  # rows per similarity block: 256 x N floats at a time, never N x N


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
) -> JobRun:
    """One link-generation run over the memory; see the module."""
    tally = start_run(JobName.LINK, memory_id, clock)
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
        rows = read_rows(stores.records, scope, embedder, bulk=bulk_reads(stores.records))
        pairs = _unlinked(stores, scope, nearby(rows, floor))
        _propose(stores, model, scope, pairs, tally, budget, clock)
    return tally.finish(stores, clock)


class _Budget:
    def __init__(self, calls: int, links: int) -> None:
        self.calls, self.links = calls, links

    def spent(self) -> bool:
        return self.calls <= 0 or self.links <= 0


def nearby(rows: list[IndexRow], floor: float) -> list[tuple[IndexRow, IndexRow, float]]:
    """Pairs of rows each among the other's ``NEIGHBOURS`` nearest by cosine (at least
    ``floor``), each pair once (lower record id first), nearest first."""
    with_vectors = [r for r in rows if r.vector is not None]
    if len(with_vectors) < 2:
        return []
    stacked = np.stack([r.vector for r in with_vectors if r.vector is not None])
    norms = np.linalg.norm(stacked, axis=1, keepdims=True)
    matrix = (stacked / np.where(norms == 0, 1.0, norms)).astype(np.float32)
    found: dict[tuple[int, int], float] = {}
    for start in range(0, len(with_vectors), _BLOCK):
        sims = matrix[start : start + _BLOCK] @ matrix.T
        block = np.arange(len(sims))
        sims[block, start + block] = -2.0  # never a record's own neighbour
        k = min(NEIGHBOURS, len(with_vectors) - 1)
        nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]  # the k best, unordered
        for offset, row in enumerate(nearest):
            i = start + offset
            for j in row:
                cos = float(sims[offset, j])
                if cos >= floor:
                    found.setdefault((min(i, int(j)), max(i, int(j))), cos)
    ordered = sorted(found.items(), key=lambda item: (-item[1], item[0]))
    return [(with_vectors[i], with_vectors[j], cos) for (i, j), cos in ordered]


def _unlinked(
    stores: Stores, scope: Scope, pairs: list[tuple[IndexRow, IndexRow, float]]
) -> list[tuple[IndexRow, IndexRow, float]]:
    assert stores.links is not None
    linked: dict[str, set[str]] = {}
    kept = []
    for a, b, cos in pairs:
        if a.record_id not in linked:
            linked[a.record_id] = {
                other
                for link in stores.links.links_of(scope, a.record_id)
                for other in (link.from_id, link.to_id)
            }
        if b.record_id not in linked[a.record_id]:
            kept.append((a, b, cos))
    return kept


def _propose(
    stores: Stores,
    model: ModelProvider,
    scope: Scope,
    pairs: list[tuple[IndexRow, IndexRow, float]],
    tally: RunTally,
    budget: _Budget,
    clock: Clock,
) -> None:
    assert stores.links is not None
    source = Source(kind=SourceKind.MODEL, run_id=tally.run_id)
    for start in range(0, len(pairs), MAX_PAIRS_PER_CALL):
        if budget.spent():
            tally.reasons["pair(s) left for the next run: the run's bound was reached"] += 1
            return
        batch = pairs[start : start + MAX_PAIRS_PER_CALL]
        document = tuple(
            LinkPair(n=n, a=_end(a), b=_end(b), cosine=round(cos, 3))
            for n, (a, b, cos) in enumerate(batch, 1)
        )
        budget.calls -= 1
        try:
            proposals, dropped = read_links(model.complete(link_request(document)).text, len(batch))
        except CairnError as exc:
            tally.reasons[f"model call failed ({type(exc).__name__})"] += 1
            continue
        if dropped:
            tally.reasons["proposal(s) dropped: a kind outside the vocabulary or no such pair"] += (
                dropped
            )
        for n, kind in proposals:
            if budget.links <= 0:
                tally.reasons["link(s) left for the next run: the run's bound was reached"] += 1
                break
            a, b, _ = batch[n - 1]
            link = Link(
                memory_id=scope.memory_id,
                actor_id=scope.actor_id,
                from_id=a.record_id,
                kind=kind,
                to_id=b.record_id,
                sources=(source,),
                created_at=clock.now(),
            )
            try:
                stored = stores.links.put(scope, link)
            except RecordNotFoundError:
                tally.reasons["record(s) erased or gone before their link was stored"] += 1
                continue
            if stored == link:
                tally.changed += 1
                budget.links -= 1


def _end(row: IndexRow) -> LinkEnd:
    version = row.load()
    return end_of(version.content, tuple(version.entities))
