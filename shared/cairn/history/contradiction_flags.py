"""The reflection job's contradictions: nearby pairs the model says cannot both hold, marked.

The pairs are a scope's live heads, reflections left out, each among the other's nearest
neighbours by cosine at least ``CONTRADICTION_FLOOR`` (``cairn.history.link_pairs.nearby``), a
pair already marked left out. The model is asked ``MAX_PAIRS_PER_CALL`` pairs a call
(``cairn.history.contradiction_prompts``). A flagged pair is marked as consolidation marks an
undecided contradiction (``cairn.consolidate.contradictions.mark_contested``, a layer above
this one, so its few lines are written again here): each record gets a new version adding a
``contradicts`` edge to the other, so recall labels both ``contested``. That version changes no
content and no sources, so no trust: a user's record stays trusted, and nothing is superseded
or retracted, whichever side is untrusted (DESIGN §4: untrusted evidence may contest a trusted
record, never retire it). The apply is conditioned on the versions read and on the scope's
erasure count, so a record changed or erased meanwhile waits for the next run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from cairn.changes import Change, RecordPatch, Revise
from cairn.errors import CairnError
from cairn.history.contradiction_prompts import contradiction_request, read_contradictions
from cairn.history.job_runs import RunTally
from cairn.history.link_pairs import nearby
from cairn.history.link_prompts import MAX_PAIRS_PER_CALL, LinkPair, end_of
from cairn.history.synthesis import ReflectionBudget
from cairn.models import Edge, EdgeKind, RecordVersion, Scope
from cairn.ports import IndexRow, ModelProvider, Stores
from cairn.reflection_records import REFLECTION_STRATEGY

# Contradicting claims are about one thing, so they read alike; the link job's floor.
CONTRADICTION_FLOOR = 0.5
LEFT = "pair(s) left for the next run: the run's bound was reached"


def flag_contradictions(
    stores: Stores,
    model: ModelProvider,
    scope: Scope,
    rows: Sequence[IndexRow],
    tally: RunTally,
    budget: ReflectionBudget,
    erasures: int,
) -> None:
    """Ask about the scope's unmarked nearby pairs and mark those flagged, within ``budget``."""
    if budget.flags <= 0:
        return
    candidates = [r for r in rows if r.strategy != REFLECTION_STRATEGY]
    current: dict[str, RecordVersion] = {}  # the versions this run's marks wrote
    for batch in _unmarked_batches(nearby(candidates, CONTRADICTION_FLOOR)):
        if not budget.may_call() or budget.flags <= 0:
            tally.reasons[LEFT] += 1
            return
        document = tuple(
            LinkPair(
                n=n,
                a=end_of(a.content, tuple(a.entities)),
                b=end_of(b.content, tuple(b.entities)),
                cosine=round(cos, 3),
            )
            for n, (a, b, cos) in enumerate(batch, 1)
        )
        budget.calls -= 1
        try:
            flagged, dropped = read_contradictions(
                model.complete(contradiction_request(document)).text, len(batch)
            )
        except CairnError as exc:
            tally.reasons[f"model call failed ({type(exc).__name__})"] += 1
            continue
        if dropped:
            tally.reasons["answer(s) dropped: no such pair, or a pair named twice"] += dropped
        for n in flagged:
            if budget.flags <= 0:
                tally.reasons[LEFT] += 1
                return
            a, b, _ = batch[n - 1]
            a, b = current.get(a.record_id, a), current.get(b.record_id, b)
            marked = _mark(stores, scope, a, b, tally, budget, erasures)
            current.update({v.record_id: v for v in marked})


def _unmarked_batches(
    pairs: Iterable[tuple[IndexRow, IndexRow, float]],
) -> Iterator[list[tuple[RecordVersion, RecordVersion, float]]]:
    """The pairs not marked yet, ``MAX_PAIRS_PER_CALL`` a batch, each record read only when
    its pair's batch is reached (a run asks about a few batches, not every pair)."""
    batch: list[tuple[RecordVersion, RecordVersion, float]] = []
    for row, other, cos in pairs:
        first, second = row.load(), other.load()
        if second.record_id in _marked(first) or first.record_id in _marked(second):
            continue
        batch.append((first, second, cos))
        if len(batch) == MAX_PAIRS_PER_CALL:
            yield batch
            batch = []
    if batch:
        yield batch


def _marked(version: RecordVersion) -> set[str]:
    return {e.target for e in version.edges if e.kind is EdgeKind.CONTRADICTS}


def _mark(
    stores: Stores,
    scope: Scope,
    a: RecordVersion,
    b: RecordVersion,
    tally: RunTally,
    budget: ReflectionBudget,
    erasures: int,
) -> list[RecordVersion]:
    """A revision of each side adding a ``contradicts`` edge to the other (a side already
    marked is left as it is); edges only, no sources added. Returns the versions written."""
    changes: list[Change] = []
    for version, partner in ((a, b), (b, a)):
        if partner.record_id not in _marked(version):
            edge = Edge(kind=EdgeKind.CONTRADICTS, target=partner.record_id)
            changes.append(
                Revise(record_id=version.record_id, patch=RecordPatch(edges=(*version.edges, edge)))
            )
    try:
        snapshot = {a.record_id: a.version, b.record_id: b.version}
        written = stores.records.apply(scope, changes, snapshot=snapshot, erasures=erasures)
    except CairnError:
        tally.reasons["pair(s) changed meanwhile: left to the next run"] += 1
        return []
    budget.flags -= 1
    tally.changed += 1
    return list(written)
