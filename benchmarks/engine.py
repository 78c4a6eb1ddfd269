"""cairn's own recall engine on LoCoMo: each conversation's turns become one actor's records.

Every turn is a user-sourced record whose content is its indexed text, with its MiniLM vector
precomputed in batch and stored with it. It carries what a memory built from a chat's events
would know: its source names the session and the event (the dia_id), its entities name the
speaker, and it was first seen when it was said. LoCoMo dates each session, not each turn, so
turn ``n`` of a session is stamped ``TURN_GAP`` x (n - 1) after the session's start (the dates
shown stay the session's). The clock stands one day after the conversation's last session, when
the questions are asked.

Each question is answered once by ``cairn.recall.recall`` end to end, as shipped (default
policy, ``top_k`` and block budget, journal included). To measure ranking deeper than the
shipped ``top_k`` and to sweep the policy, each question's candidate pool (step 1) is gathered
once and only the pure steps the swept knobs touch are re-run
(``cairn.recall.ordering.order``, then dedup; not the budget), which keeps a sweep of dozens of
policies to seconds. Two checks keep that shortcut honest: what ``recall`` showed must be a
prefix of the shortcut's ranking, and on the first conversation ``recall`` with a budget wide
enough for 20 entries must rank exactly as the shortcut does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from benchmarks.locomo import Turn
from benchmarks.retrieval import Prepared
from cairn.changes import MAX_CHANGES_PER_APPLY, Create, NewRecord, Vector
from cairn.clock import FixedClock
from cairn.models import RecordVersion, Scope, Source, SourceKind
from cairn.ports import Embedder, Stores
from cairn.recall import RecallPolicy, RecallQuery, Recollection, recall
from cairn.recall.candidates import CandidatePool, gather
from cairn.recall.dedup import deduplicate
from cairn.recall.ordering import order
from cairn.testing import InMemoryBackend

MEMORY_ID = "locomo-dev"
# Time between two turns of a session: LoCoMo stamps sessions, not turns.
TURN_GAP = timedelta(seconds=20)


def turn_record(turn: Turn, namespace: str, vector: Vector) -> NewRecord:
    """One turn as a record: user-said, from its session and event, naming its speaker."""
    session, position = turn.dia_id[1:].split(":")
    source = Source(kind=SourceKind.USER, session_id=f"session-{session}", event_id=turn.dia_id)
    return NewRecord(
        namespace=namespace,
        content=turn.indexed_text,
        sources=(source,),
        entities=(turn.speaker,),
        seen_at=turn.session_at + TURN_GAP * (int(position) - 1),
        vector=vector,
    )


@dataclass(frozen=True)
class Index:
    """One conversation stored as one actor's memory, and the way back to dia_ids."""

    stores: Stores
    scope: Scope
    clock: FixedClock
    dia_ids: dict[str, str]  # record_id -> dia_id


def build_index(prepared: Prepared, embedder: Embedder) -> Index:
    """Store every turn of the conversation as a record with its precomputed vector."""
    turns = prepared.conversation.turns
    clock = FixedClock(max(t.session_at for t in turns) + timedelta(days=1))
    backend = InMemoryBackend(clock)
    stores = backend.stores()
    scope = Scope(memory_id=MEMORY_ID, actor_id=f"locomo-{prepared.conversation.sample_id}")
    namespace = f"/facts/{scope.actor_id}/"
    changes = [
        Create(
            record=turn_record(
                turn, namespace, Vector(embedder=embedder.identity, values=tuple(row.tolist()))
            )
        )
        for turn, row in zip(turns, prepared.turn_vectors, strict=True)
    ]
    written: list[RecordVersion] = []
    for start in range(0, len(changes), MAX_CHANGES_PER_APPLY):
        written += stores.records.apply(scope, changes[start : start + MAX_CHANGES_PER_APPLY])
    dia_ids = {v.record_id: t.dia_id for v, t in zip(written, turns, strict=True)}
    return Index(stores=stores, scope=scope, clock=clock, dia_ids=dia_ids)


def recall_as_shipped(index: Index, question: str, embedder: Embedder) -> Recollection:
    """``cairn.recall.recall`` with every default: policy, ``top_k``, budget, journal."""
    return recall(
        index.scope,
        RecallQuery(text=question),
        stores=index.stores,
        embedder=embedder,
        clock=index.clock,
    )


def recall_wide(
    index: Index, question: str, embedder: Embedder, policy: RecallPolicy, depth: int
) -> Recollection:
    """``recall`` under ``policy`` with ``top_k = depth`` and a budget that fits every entry."""
    wide = policy.model_copy(update={"max_block_bytes": 1_000_000})
    return recall(
        index.scope,
        RecallQuery(text=question, top_k=depth),
        stores=index.stores,
        embedder=embedder,
        clock=index.clock,
        policy=wide,
        journal=False,
    )


def gather_pool(
    index: Index, question: str, embedder: Embedder, policy: RecallPolicy, depth: int
) -> CandidatePool:
    """Step 1 of ``recall`` alone: the scored candidates every later step works on."""
    return gather(
        index.scope,
        RecallQuery(text=question, top_k=depth),
        records=index.stores.records,
        embedder=embedder,
        policy=policy,
    )


@dataclass(frozen=True)
class Selection:
    """Record ids ``recall`` would rank first for a pool (budget aside), and how it got there."""

    record_ids: list[str]
    keyword_only: bool
    deduplicated: int
    contextual: int
    weak: bool = False  # the block would be labelled weak (recall.relevance.confident)


def select(
    pool: CandidatePool, question: str, policy: RecallPolicy, now: datetime, depth: int
) -> Selection:
    """Steps 2-4 of ``recall`` (``order``, then dedup) over a gathered pool."""
    ordered = order(pool, question, policy, now)
    unique = deduplicate(ordered.ranked, policy, limit=depth)
    ids = [item.candidate.version.record_id for item in unique.kept]
    return Selection(ids, ordered.keyword_only, unique.dropped, ordered.contextual, ordered.weak)
