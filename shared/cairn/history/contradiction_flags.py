"""The reflection job's contradictions: nearby pairs the model says cannot both hold, marked.

The pairs are those of the records written since the job's cursor (the scope's change feed past the
sequence noted in the job log, ``JobLog.marker``; ``cairn.history.link_pairs``), each with its
nearest live heads by cosine at least ``CONTRADICTION_FLOOR``, through the recall index's snapshot
of the scope (``cairn.history.linking.scope_snapshot``), reflections left out on both sides, and a
pair already marked left out: the new records against the scope, never all pairs. Stores with no
change feed or job log pair every head each run. The model is asked ``MAX_PAIRS_PER_CALL`` pairs a
call (``cairn.history.contradiction_prompts``). A flagged pair is marked as consolidation marks an
undecided contradiction (``cairn.consolidate.contradictions.mark_contested``, a layer above this
one, so its few lines are written again here): each record gets a new version adding a
``contradicts`` edge to the other, so recall labels both ``contested``. That version changes no
content and no sources, so no trust: a user's record stays trusted, and nothing is superseded or
retracted, whichever side is untrusted (DESIGN §4: untrusted evidence may contest a trusted record,
never retire it). The apply is conditioned on the versions read and on the scope's erasure count, so
a record changed or erased meanwhile waits for the next run (its change is past the cursor).

The cursor moves, after the run's calls, to the last record all of whose pairs (and every
earlier record's) were asked, so a declined pair is not asked again and a bounded or failed run
leaves the rest to the next; when every pair was asked it moves on past the marks the run
itself wrote (they are no news: both sides were just asked about).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeAlias

from cairn.changes import Change, RecordPatch, Revise
from cairn.errors import CairnError
from cairn.history.contradiction_prompts import contradiction_request, read_contradictions
from cairn.history.job_runs import RunTally
from cairn.history.link_pairs import (
    Pair,
    Written,
    ask_in_batches,
    cursor_value,
    nearest,
    read_cursor,
    written_since,
)
from cairn.history.link_prompts import LinkPair, end_of
from cairn.history.linking import scope_snapshot
from cairn.history.synthesis import ReflectionBudget
from cairn.jobs import JobName
from cairn.models import Edge, EdgeKind, EmbedderId, RecordVersion, Scope
from cairn.ports import ModelProvider, RecordChangeFeed, Stores
from cairn.reflection_records import REFLECTION_STRATEGY

# Contradicting claims are about one thing, so they read alike; the link job's floor.
CONTRADICTION_FLOOR = 0.5
LEFT = "pair(s) left for the next run: the run's bound was reached"
_Read: TypeAlias = tuple[RecordVersion, RecordVersion, float]


def flag_contradictions(
    stores: Stores,
    model: ModelProvider,
    scope: Scope,
    embedder: EmbedderId,
    tally: RunTally,
    budget: ReflectionBudget,
    erasures: int,
) -> bool:
    """Ask about the scope's unmarked nearby pairs and mark those flagged, within ``budget``;
    whether every pair was asked (none left to a later run)."""
    if budget.flags <= 0:
        return False
    flagger = _Flagger(stores, model, scope, tally, budget, erasures)
    if stores.changes is None or stores.jobs is None:  # no cursor: every head each run
        snapshot = scope_snapshot(stores, scope, embedder)
        heads = [Written(0, r) for r in snapshot.record_ids]
        paired = nearest(snapshot, heads, CONTRADICTION_FLOOR, leave_out=REFLECTION_STRATEGY)
        return flagger.ask(paired) is None
    after, read = read_cursor(stores.jobs.marker(scope, JobName.REFLECTION))
    written, upto = written_since(stores.changes, scope, after)
    if upto == after:
        return True
    snapshot = scope_snapshot(stores, scope, embedder)
    paired = nearest(
        snapshot, written, CONTRADICTION_FLOOR, leave_out=REFLECTION_STRATEGY, back_after=read
    )
    reached = flagger.ask(paired)
    moved = past_own(stores.changes, scope, upto, budget.wrote) if reached is None else reached
    if moved > after or upto > read:
        value = cursor_value(max(moved, after), max(upto, read))
        stores.jobs.set_marker(scope, JobName.REFLECTION, value)
    return reached is None


def past_own(changes: RecordChangeFeed, scope: Scope, upto: int, own: set[tuple[str, int]]) -> int:
    """The last sequence after ``upto`` up to which every change is one of ``own`` versions."""
    while page := changes.scope_changes(scope, upto, limit=1000):
        for change in page:
            if (change.record_id, change.version) not in own:
                return upto
            upto = change.sequence
    return upto


class _Flagger:
    """Asks the model about a scope's pairs, in batches, within the run's budget."""

    def __init__(
        self,
        stores: Stores,
        model: ModelProvider,
        scope: Scope,
        tally: RunTally,
        budget: ReflectionBudget,
        erasures: int,
    ) -> None:
        self.stores, self.model, self.scope = stores, model, scope
        self.tally, self.budget, self.erasures = tally, budget, erasures
        self.current: dict[str, RecordVersion] = {}  # the versions this run's marks wrote

    def ask(self, written: Iterable[Written]) -> int | None:
        """Ask about every unmarked pair of ``written`` (``ask_in_batches``)."""
        return ask_in_batches(written, lambda record: self._unmarked(record.pairs), self._send)

    def _unmarked(self, pairs: tuple[Pair, ...]) -> Iterator[_Read]:
        """Each pair's two records as they read now, unless erased or already marked."""
        for pair in pairs:
            try:
                first, second = (self._read(rid) for rid in (pair.a, pair.b))
            except CairnError:
                continue  # erased or gone meanwhile
            if second.record_id in _marked(first) or first.record_id in _marked(second):
                continue
            yield first, second, pair.cosine

    def _read(self, record_id: str) -> RecordVersion:
        found = self.current.get(record_id)
        return found if found is not None else self.stores.records.get(self.scope, record_id)

    def _send(self, batch: list[_Read]) -> bool:
        """Ask about ``batch`` and mark what is flagged; whether it was asked whole."""
        budget, tally = self.budget, self.tally
        if not budget.may_call() or budget.flags <= 0:
            tally.reasons[LEFT] += 1
            return False
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
                self.model.complete(contradiction_request(document)).text, len(batch)
            )
        except CairnError as exc:
            tally.reasons[f"model call failed ({type(exc).__name__})"] += 1
            return False
        if dropped:
            tally.reasons["answer(s) dropped: no such pair, or a pair named twice"] += dropped
        for n in flagged:
            if budget.flags <= 0:
                tally.reasons[LEFT] += 1
                return False
            a, b, _ = batch[n - 1]
            a, b = self.current.get(a.record_id, a), self.current.get(b.record_id, b)
            marked = _mark(self.stores, self.scope, a, b, tally, budget, self.erasures)
            self.current.update({v.record_id: v for v in marked})
            budget.wrote.update((v.record_id, v.version) for v in marked)
        return True


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
