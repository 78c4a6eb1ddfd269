"""``open_memory``: one actor's memory on a laptop, in a few lines of Python.

``open_memory(path, actor=...)`` opens (or creates) the embedded SQLite store at ``path`` with
the local ONNX embedder and extraction running in the background (``cairn.local.system``,
with the offline heuristic model unless another ``model`` is given), pinned to one scope.
``LocalMemory`` then writes (``remember``), recalls (``recall``, journaled), audits
(``history``), forgets softly (``forget``), erases for real (``erase``) and replays a recall
(``replay``); ``session`` opens an agent session whose turns are extracted into records as the
triggers fire, and the rest when the session closes. ``close`` (or leaving the ``with`` block)
closes the sessions still open and waits for pending extractions.

``remember`` of text the scope already holds, in the same namespace, folds in (the head's
``seen_count`` rises) instead of writing a second record.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from cairn.changes import Create, FoldIn, NewRecord, Retract, Vector
from cairn.erasure_lineage import RecordErased, erase_record
from cairn.local.offline import offline_model
from cairn.local.store import all_records, default_namespace
from cairn.local.system import EmbeddedExtraction, open_embedded
from cairn.models import RecordVersion, Scope, Source, SourceKind, content_digest
from cairn.ports import Embedder, ModelProvider, Stores
from cairn.recall import RecallQuery, Recollection, Replay, recall, replay
from cairn.recall.query import DEFAULT_TOP_K
from cairn.runtime.session import MemorySession

DEFAULT_MEMORY = "default"
# User-stated outranks inferred (DESIGN §4); recall's confidence multiplier reads these.
DEFAULT_CONFIDENCE = {
    SourceKind.USER: 0.9,
    SourceKind.SYSTEM: 0.9,
    SourceKind.IMPORT: 0.7,
    SourceKind.MODEL: 0.5,
    SourceKind.TOOL: 0.5,
}


def with_vectors(embedder: Embedder, records: Sequence[NewRecord]) -> list[NewRecord]:
    """The records, each carrying the vector of its content, embedded in one batch."""
    if not records:
        return []
    rows = embedder.embed([record.content for record in records])
    return [
        record.model_copy(
            update={
                "vector": Vector(embedder=embedder.identity, values=tuple(float(x) for x in row))
            }
        )
        for record, row in zip(records, rows, strict=True)
    ]


def plan_remember(heads: Sequence[RecordVersion], record: NewRecord) -> Create | FoldIn:
    """Fold ``record`` into a head of its namespace with the same content and the same kind of
    source (so trust never moves), else create it."""
    digest = content_digest(record.content)
    kinds = {source.kind for source in record.sources}
    for head in heads:
        same_kind = kinds <= {source.kind for source in head.sources}
        if head.namespace == record.namespace and head.content_digest == digest and same_kind:
            return FoldIn(record_id=head.record_id, add_sources=record.sources)
    return Create(record=record)


class LocalMemory:
    """One scope's memory over an embedded store; every method is pinned to that scope."""

    def __init__(
        self, extraction: EmbeddedExtraction, scope: Scope, *, embedder: Embedder | None
    ) -> None:
        self.stores: Stores = extraction.stores
        self.scope = scope
        self.embedder = embedder
        self._extraction = extraction
        self._sessions: weakref.WeakSet[MemorySession] = weakref.WeakSet()

    def remember(
        self,
        text: str,
        *,
        category: str = "fact",
        namespace: str | None = None,
        source: SourceKind = SourceKind.USER,
        confidence: float | None = None,
        tags: Sequence[str] = (),
    ) -> RecordVersion:
        """Write ``text`` as a record (or fold it into its exact repeat); the version written."""
        record = NewRecord(
            namespace=namespace or default_namespace(category, self.scope.actor_id),
            category=category,
            content=text,
            confidence=DEFAULT_CONFIDENCE[source] if confidence is None else confidence,
            tags=tuple(tags),
            sources=(Source(kind=source),),
        )
        change = plan_remember(
            all_records(self.stores, self.scope, namespace_prefix=record.namespace), record
        )
        if isinstance(change, Create) and self.embedder is not None:
            (embedded,) = with_vectors(self.embedder, [record])
            change = Create(record=embedded)
        (written,) = self.stores.records.apply(self.scope, [change])
        return written

    def recall(
        self, query: str, *, top_k: int = DEFAULT_TOP_K, namespace: str | None = None
    ) -> Recollection:
        """The rendered block for ``query`` (``.block``) and the journal id that pins it."""
        return recall(
            self.scope,
            RecallQuery(text=query, top_k=top_k, namespace_prefix=namespace),
            stores=self.stores,
            embedder=self.embedder,
            clock=self._extraction.pipeline.clock,
        )

    def history(self, record_id: str) -> tuple[RecordVersion, ...]:
        """Every version of ``record_id``, oldest first, with its sources."""
        return self.stores.records.history(self.scope, record_id)

    def forget(self, record_id: str, *, reason: str | None = None) -> RecordVersion:
        """Retract softly: recall stops returning it; its content stays in its history."""
        (written,) = self.stores.records.apply(
            self.scope, [Retract(record_id=record_id, reason=reason)]
        )
        return written

    def erase(self, record_id: str, *, keep_events: bool = False) -> RecordErased:
        """Destroy the content of ``record_id`` and of everything that restates it: its
        successors, summaries, pending rollouts, history chunks and, unless ``keep_events``,
        the turns it came from (``cairn.erasure_lineage``)."""
        pipeline = self._extraction.pipeline
        return erase_record(
            self.stores,
            self.scope,
            record_id,
            staging=pipeline.staging,
            clock=pipeline.clock,
            keep_events=keep_events,
        )

    def replay(self, journal_id: str) -> Replay:
        """Re-render a journaled recall from its exact versions; ``.matches`` if unchanged."""
        return replay(self.scope, journal_id, stores=self.stores)

    def session(self, session_id: str) -> MemorySession:
        """An agent session whose turns are extracted into records as the triggers fire, and
        when it closes (the turns no trigger released yet)."""
        opened = self._extraction.session(
            memory_id=self.scope.memory_id,
            actor_id=self.scope.actor_id,
            session_id=session_id,
            embedder=self.embedder,
        )
        self._sessions.add(opened)
        return opened

    def close(self) -> None:
        """Close the sessions still open (their turns go to extraction), finish pending
        extractions, stop the workers, close the store."""
        try:
            for session in list(self._sessions):
                session.close()
        finally:
            self._extraction.close()

    def __enter__(self) -> LocalMemory:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def open_memory(
    path: Path | str,
    *,
    actor: str,
    memory: str = DEFAULT_MEMORY,
    embedder: Embedder | None = None,
    model: ModelProvider | None = None,
) -> LocalMemory:
    """``actor``'s memory in the SQLite store at ``path`` (created if missing), with the local
    ONNX embedder and the offline heuristic extractor unless others are given."""
    scope = Scope(memory_id=memory, actor_id=actor)  # a malformed id fails before any file
    if embedder is None:
        from cairn.embed.onnx import OnnxEmbedder

        embedder = OnnxEmbedder()
    extraction = open_embedded(path, model=model or offline_model(), embedder=embedder)
    return LocalMemory(extraction, scope, embedder=embedder)
