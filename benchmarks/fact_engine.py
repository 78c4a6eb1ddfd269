"""cairn recall on the fact set: every user's records in one SQLite store, asked every question.

Records are written the way ``cairn remember`` writes them: a ``user``-sourced ``NewRecord``
in ``default_namespace(category, actor)`` with the CLI's default confidence and the content's
MiniLM vector (computed in one batch, optionally from the vector cache), applied with
``Create``; a changed value is a ``Supersede`` of the old record by the new one. The clock
advances an hour per write, so recency means what it would in use; questions are asked a week
after the last write.

Each question is answered once by ``recall`` as shipped (default policy, journal included),
which gives the block's precision and whether it was empty or weak. Its candidate pool is then
gathered once per distinct step-1 knobs (``gather_key``) and ranked under every policy given
(``order`` then dedup, as ``benchmarks.engine.select`` does for LoCoMo), for recall@k and the
no-answer figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.fact_set import FactQuestion, UserFacts
from benchmarks.vectors import embed_all
from cairn.changes import Change, Create, NewRecord, Supersede, Vector
from cairn.cli.commands import DEFAULT_CONFIDENCE
from cairn.clock import FixedClock
from cairn.local.store import default_namespace
from cairn.models import Scope, Source, SourceKind
from cairn.ports import Embedder, Stores
from cairn.recall import RecallPolicy, RecallQuery, recall
from cairn.recall.candidates import CandidatePool, gather
from cairn.recall.dedup import deduplicate
from cairn.recall.keywords import tokenize
from cairn.recall.ordering import order
from cairn.recall.query import DEFAULT_TOP_K
from cairn.store.sqlite import SQLiteBackend

MEMORY_ID = "fact-set"
STARTED = datetime(2026, 3, 2, 9, tzinfo=UTC)
KS = (1, 5, 10)
DEPTH = 20


@dataclass(frozen=True)
class FactOutcome:
    """One question under one policy: where its answers landed, and what a block would show."""

    user: str
    family: str  # the question's paraphrase family (benchmarks.fact_set.FactQuestion)
    kind: str
    disjoint: bool  # the question shares no keyword with any record that answers it
    recall: tuple[float, ...]  # at KS; empty for no-answer questions
    shown: int  # entries a top_k 8 block would hold (budget aside)
    relevant_shown: int
    weak: bool

    @property
    def empty_or_weak(self) -> bool:
        return self.shown == 0 or self.weak


@dataclass
class FactResult:
    """The shipped recall's outcomes and every policy's, question by question."""

    shipped: list[FactOutcome] = field(default_factory=list)
    policies: dict[str, list[FactOutcome]] = field(default_factory=dict)
    records: int = 0
    # Questions where what recall showed was not a prefix of the "defaults" ranking: the
    # shortcut (order, then dedup, over a pool gathered once) must rank as recall does.
    prefix_violations: int = 0


@dataclass(frozen=True)
class FactIndex:
    stores: Stores
    clock: FixedClock
    ids: dict[str, dict[str, str]]  # actor -> record key -> record id
    contents: dict[str, dict[str, str]]  # actor -> record key -> content


def remembered(actor_id: str, category: str, content: str, vector: Vector) -> NewRecord:
    """A record exactly as ``cairn remember TEXT --category CATEGORY`` writes it."""
    return NewRecord(
        namespace=default_namespace(category, actor_id),
        category=category,
        content=content,
        confidence=DEFAULT_CONFIDENCE[SourceKind.USER],
        sources=(Source(kind=SourceKind.USER),),
        vector=vector,
    )


def write_store(
    users: Sequence[UserFacts], path: Path, embedder: Embedder, *, use_cache: bool
) -> FactIndex:
    """Every user's records in one SQLite store at ``path``, one scope per user."""
    texts = [r.content for u in users for r in u.records]
    vectors, _ = embed_all(embedder, texts, use_cache=use_cache)
    clock = FixedClock(STARTED)
    stores = SQLiteBackend(path, clock).stores()
    ids: dict[str, dict[str, str]] = {}
    contents: dict[str, dict[str, str]] = {}
    row = 0
    for user in users:
        scope = Scope(memory_id=MEMORY_ID, actor_id=user.actor_id)
        mine = ids.setdefault(user.actor_id, {})
        contents[user.actor_id] = {r.key: r.content for r in user.records}
        for fact in user.records:
            values = tuple(float(x) for x in vectors[row])
            row += 1
            new = remembered(
                user.actor_id,
                fact.category,
                fact.content,
                Vector(embedder=embedder.identity, values=values),
            )
            change: Change = (
                Supersede(record_id=mine[fact.supersedes], replacement=new)
                if fact.supersedes
                else Create(record=new)
            )
            written = stores.records.apply(scope, [change])
            mine[fact.key] = written[-1].record_id if fact.supersedes else written[0].record_id
            clock.advance(timedelta(hours=1))
    clock.advance(timedelta(days=7))
    return FactIndex(stores=stores, clock=clock, ids=ids, contents=contents)


def gather_key(policy: RecallPolicy) -> str:
    """The knobs step 1 (``gather``) reads: policies equal on these share one pool."""
    knobs = ("bm25_k1", "bm25_b", "max_reembed", "subject_share")
    return repr([getattr(policy, knob) for knob in knobs])


def _disjoint(question: FactQuestion, contents: Mapping[str, str]) -> bool:
    asked = set(tokenize(question.text))
    return all(not asked.intersection(tokenize(contents[key])) for key in question.relevant)


def _outcome(
    user: UserFacts,
    question: FactQuestion,
    wanted: set[str],
    ranked: Sequence[str],
    weak: bool,
    disjoint: bool,
) -> FactOutcome:
    block = ranked[:DEFAULT_TOP_K]
    recall_at = (
        tuple(len(wanted.intersection(ranked[:k])) / len(wanted) for k in KS) if wanted else ()
    )
    return FactOutcome(
        user=user.actor_id,
        family=question.family,
        kind=question.kind,
        disjoint=disjoint,
        recall=recall_at,
        shown=len(block),
        relevant_shown=len(wanted.intersection(block)),
        weak=weak,
    )


def measure(
    users: Sequence[UserFacts],
    index: FactIndex,
    embedder: Embedder,
    policies: Mapping[str, RecallPolicy],
) -> FactResult:
    """Ask every user's memory its questions: once as shipped, then ranked under each policy."""
    result = FactResult(policies={label: [] for label in policies})
    now = index.clock.now()
    for user in users:
        scope = Scope(memory_id=MEMORY_ID, actor_id=user.actor_id)
        ids = index.ids[user.actor_id]
        result.records += len(user.records)
        for question in user.questions:
            wanted = {ids[key] for key in question.relevant}
            disjoint = _disjoint(question, index.contents[user.actor_id])
            shipped = recall(
                scope,
                RecallQuery(text=question.text),
                stores=index.stores,
                embedder=embedder,
                clock=index.clock,
            )
            shown = [e.version.record_id for e in shipped.entries]
            result.shipped.append(
                _outcome(user, question, wanted, shown, shipped.counts.weak, disjoint)
            )
            pools: dict[str, CandidatePool] = {}
            for label, policy in policies.items():
                key = gather_key(policy)
                if key not in pools:
                    pools[key] = gather(
                        scope,
                        RecallQuery(text=question.text, top_k=DEPTH),
                        records=index.stores.records,
                        embedder=embedder,
                        policy=policy,
                    )
                ordered = order(pools[key], question.text, policy, now)
                kept = deduplicate(ordered.ranked, policy, limit=DEPTH).kept
                ranked = [item.candidate.version.record_id for item in kept]
                if label == "defaults":
                    result.prefix_violations += shown != ranked[: len(shown)]
                result.policies[label].append(
                    _outcome(user, question, wanted, ranked, ordered.weak, disjoint)
                )
    return result
