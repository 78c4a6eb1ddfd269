"""Sample scopes, sources and records, and the one-line writes the conformance tests share."""

from __future__ import annotations

from datetime import UTC, datetime

from cairn.changes import Create, NewRecord, Vector
from cairn.models import (
    Branch,
    Conversational,
    EmbedderId,
    EventInput,
    JournalEntry,
    RecordVersion,
    Role,
    Scope,
    SelectedEntry,
    Source,
    SourceKind,
)
from cairn.ports import Stores

SCOPE = Scope(memory_id="m1", actor_id="a1")
OTHER_ACTOR = Scope(memory_id="m1", actor_id="a2")
OTHER_MEMORY = Scope(memory_id="m2", actor_id="a1")
FACTS = "/facts/a1/"

USER = Source(kind=SourceKind.USER, event_id="ev-1", session_id="s1")
SYSTEM = Source(kind=SourceKind.SYSTEM)
MODEL = Source(kind=SourceKind.MODEL, rollout_id="ro-1", run_id="run-1")
TOOL = Source(kind=SourceKind.TOOL, run_id="run-2")
IMPORTED = Source(kind=SourceKind.IMPORT)

EMBEDDER = EmbedderId(model_id="conformance-embedder", dims=4)


def vector(*values: float, embedder: EmbedderId = EMBEDDER) -> Vector:
    return Vector(embedder=embedder, values=values)


def new_fact(
    content: str,
    *,
    namespace: str = FACTS,
    sources: tuple[Source, ...] = (USER,),
    embedding: Vector | None = None,
) -> NewRecord:
    return NewRecord(namespace=namespace, content=content, sources=sources, vector=embedding)


def create(
    stores: Stores,
    content: str,
    *,
    scope: Scope = SCOPE,
    namespace: str = FACTS,
    sources: tuple[Source, ...] = (USER,),
    embedding: Vector | None = None,
) -> RecordVersion:
    """Create one record and return its first version, as the store returned it."""
    record = new_fact(content, namespace=namespace, sources=sources, embedding=embedding)
    (created,) = stores.records.apply(scope, [Create(record=record)])
    return created


def listed_ids(
    stores: Stores,
    scope: Scope = SCOPE,
    *,
    namespace_prefix: str | None = None,
    as_of: datetime | None = None,
    include_inactive: bool = False,
) -> list[str]:
    """Record ids of the first page of ``list_records`` (every test here stays under a page)."""
    page = stores.records.list_records(
        scope, namespace_prefix=namespace_prefix, as_of=as_of, include_inactive=include_inactive
    )
    return [version.record_id for version in page.items]


def journal_entry(
    journal_id: str, scope: Scope = SCOPE, *, selected_id: str | None = None
) -> JournalEntry:
    """A recall journal entry with every field populated."""
    record_id = selected_id or "mem-" + "7" * 36
    return JournalEntry(
        journal_id=journal_id,
        memory_id=scope.memory_id,
        actor_id=scope.actor_id,
        created_at=datetime(2026, 1, 2, 3, 4, 5, 678_901, tzinfo=UTC),
        query="what does she drink in the morning? ☕",
        filters={"namespace": FACTS, "strategy": "semantic"},
        embedder=EMBEDDER,
        policy={"max_block_bytes": 4000, "floor": 0.25, "mode": "assembly", "token_share": None},
        selected=(
            SelectedEntry(record_id=record_id, version=3, content_digest="a" * 64, score=0.8125),
        ),
        block_digest="b" * 64,
    )


def event_input(
    session_id: str = "s1",
    at: datetime = datetime(2026, 1, 1, 12, tzinfo=UTC),
    *,
    text: str = "I moved to Paris last week",
    branch: str | None = None,
) -> EventInput:
    """One conversational turn."""
    return EventInput(
        session_id=session_id,
        event_timestamp=at,
        payload=(Conversational(role=Role.USER, text=text),),
        branch=Branch(name=branch) if branch else None,
    )
