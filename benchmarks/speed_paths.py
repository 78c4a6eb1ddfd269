"""The other paths a user waits on: event append, rendering a block, forming one candidate.

All on the embedded SQLite store, against the scope ``speed_recall`` filled (at 1k records when
these run). Formation is ``cairn.extract``'s write path for one extracted fact: read the
namespace, embed the candidate (ONNX), find its neighbours, ask the offline heuristic judge,
apply the changes atomically. A deployed stack asks a real model instead, whose latency comes on
top; the heuristic's own time is in this number.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import timedelta

from benchmarks import synthetic
from benchmarks.speed_recall import NOW, SCOPE
from benchmarks.timing import Timing, time_each
from cairn.clock import FixedClock
from cairn.models import Conversational, EventInput, Role, Source, SourceKind
from cairn.ports import Embedder, Stores
from cairn.recall import DEFAULT_POLICY, RecallQuery
from cairn.recall.budget import clamp
from cairn.recall.candidates import gather
from cairn.recall.dedup import deduplicate
from cairn.recall.ordering import order
from cairn.recall.query import DEFAULT_TOP_K
from cairn.recall.render import render_block

FORMATION_TODO = (
    "TODO: cairn.extract formation (read_namespace, form_namespace) not importable in this "
    "checkout; no number until it lands"
)


@dataclass(frozen=True)
class AppendResult:
    single: Timing
    sustained_per_second: float
    sustained_events: int


def time_appends(stores: Stores, single_runs: int, sustained: int) -> AppendResult:
    """One event at a time (each call timed), then ``sustained`` back to back (events/s)."""
    clock = FixedClock(NOW)
    texts = synthetic.facts(max(single_runs, sustained), seed=31)

    def append(i: int) -> None:
        clock.advance(seconds=1)
        event = EventInput(
            session_id=f"chat-{i // 50}",
            event_timestamp=clock.now(),
            payload=(Conversational(role=Role.USER, text=texts[i % len(texts)]),),
        )
        stores.events.append(SCOPE, event)

    single = time_each(append, single_runs)
    started = time.perf_counter()
    for i in range(sustained):
        append(single_runs + i)
    seconds = time.perf_counter() - started
    return AppendResult(single, sustained / seconds, sustained)


def time_rendering(stores: Stores, embedder: Embedder, question: str, runs: int) -> Timing:
    """Steps 5-6 of a shipped recall (clamp to the budget, render the block) for one ranking."""
    query = RecallQuery(text=question)
    pool = gather(SCOPE, query, records=stores.records, embedder=embedder, policy=DEFAULT_POLICY)
    ranked = order(pool, question, DEFAULT_POLICY, NOW).ranked
    kept = deduplicate(ranked, DEFAULT_POLICY, limit=DEFAULT_TOP_K).kept
    return time_each(
        lambda _: render_block(clamp(kept, DEFAULT_POLICY, DEFAULT_TOP_K).entries), runs
    )


def time_formation(stores: Stores, embedder: Embedder, runs: int) -> Timing | str:
    """Form and apply one new candidate fact, ``runs`` times (each a different fact)."""
    try:
        from cairn.extract.extraction_policy import DEFAULT_EXTRACTION_POLICY
        from cairn.extract.formation.apply import form_namespace
        from cairn.extract.formation.neighbours import read_namespace
        from cairn.local import offline_model
    except ImportError:
        return FORMATION_TODO
    from cairn.changes import NewRecord

    namespace = f"/facts/{SCOPE.actor_id}/"
    texts = synthetic.facts(runs, seed=77)
    model = offline_model()
    clock = FixedClock(NOW + timedelta(days=1))

    def form(i: int) -> None:
        candidate = NewRecord(
            namespace=namespace,
            content=texts[i],
            sources=(Source(kind=SourceKind.USER, session_id="formation"),),
            seen_at=clock.now(),
        )
        state = read_namespace(SCOPE, namespace, stores.records)
        formed = form_namespace(
            SCOPE,
            state,
            [candidate],
            records=stores.records,
            model=model,
            embedder=embedder,
            policy=DEFAULT_EXTRACTION_POLICY,
        )
        if formed.changes:
            stores.records.apply(SCOPE, list(formed.changes), snapshot=dict(formed.snapshot))

    return time_each(form, runs)
